#include "server/object_patch.h"

#include <string>

#include "api/strategic_merge_patch.h"
#include "common/json_reader.h"

namespace strata::server {
namespace {

using nlohmann::json;

constexpr std::string_view kMergePatch = "application/merge-patch+json";
constexpr std::string_view kJsonPatch = "application/json-patch+json";
constexpr std::string_view kStrategicMergePatch = "application/strategic-merge-patch+json";
constexpr std::string_view kApplyPatch = "application/apply-patch+yaml";

// nlohmann's messages start with "[json.exception.out_of_range.403] ": users need the rest.
std::string WithoutExceptionId(const char* what) {
  std::string message(what);
  if (message.starts_with("[json.exception.")) {
    const size_t end = message.find("] ");
    if (end != std::string::npos) message.erase(0, end + 2);
  }
  return message;
}

// RFC 6902, one operation at a time so that an error names the operation.
Result<json> ApplyJsonPatch(const json& original, const json& operations) {
  if (!operations.is_array()) {
    return Err(InvalidArgumentError("a JSON patch is a list of operations, got " +
                                    std::string(operations.is_object() ? "an object" : "a value")));
  }
  json document = original;
  for (size_t i = 0; i < operations.size(); ++i) {
    const json& operation = operations[i];
    const std::string where =
        "operation " + std::to_string(i) +
        (operation.is_object()
             ? " (" + operation.value("op", std::string("?")) + " " +
                   (operation.contains("path") ? operation["path"].dump() : "without a path") + ")"
             : "");
    try {
      document = document.patch(json::array({operation}));
    } catch (const json::exception& error) {
      return Err(InvalidArgumentError(where + ": " + WithoutExceptionId(error.what())));
    }
  }
  return document;
}

}  // namespace

Result<PatchType> PatchTypeFor(std::string_view content_type, std::string_view kind) {
  const std::string_view media = content_type.substr(0, content_type.find(';'));
  const bool strategic = api::AcceptsStrategicMergePatch(kind);
  if (media == kMergePatch) return PatchType::kMerge;
  if (media == kJsonPatch) return PatchType::kJson;
  if (media == kStrategicMergePatch && strategic) return PatchType::kStrategicMerge;
  if (media == kApplyPatch) return PatchType::kApply;
  std::string accepted =
      std::string(kJsonPatch) + ", " + std::string(kMergePatch) + ", " + std::string(kApplyPatch);
  if (strategic) accepted += ", " + std::string(kStrategicMergePatch);
  std::string why = media.empty() ? std::string("a PATCH needs a Content-Type")
                                  : "the patch type " + std::string(media) + " is not supported";
  if (media == kStrategicMergePatch) {
    why = "strategic merge patch is not supported for " + std::string(kind) +
          " (strata.dev's kinds, like custom resources, take merge and JSON patches: kubectl "
          "patch --type merge)";
  }
  return Err(UnimplementedError(why + "; accepted media types: " + accepted));
}

Result<nlohmann::json> ParsePatch(std::string_view body) {
  // Checked first with the request path's reader: it names the byte of a syntax error and
  // bounds the nesting that the patches recurse over.
  JsonReader reader(body);
  reader.Skip();
  if (Status valid = reader.Finish(); !valid.ok()) {
    return Err(InvalidArgumentError("the patch is " + valid.message()));
  }
  json patch = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (patch.is_discarded()) return Err(InvalidArgumentError("the patch is not valid JSON"));
  return patch;
}

Result<nlohmann::json> ApplyParsedPatch(PatchType type, std::string_view kind,
                                        const nlohmann::json& original,
                                        const nlohmann::json& patch) {
  switch (type) {
    case PatchType::kMerge: {
      if (!patch.is_object()) {
        return Err(InvalidArgumentError("a merge patch is a JSON object, got a JSON " +
                                        std::string(patch.type_name())));
      }
      json patched = original;
      patched.merge_patch(patch);
      return patched;
    }
    case PatchType::kJson:
      return ApplyJsonPatch(original, patch);
    case PatchType::kStrategicMerge:
      return api::ApplyStrategicMergePatch(kind, original, patch);
    case PatchType::kApply:
      break;
  }
  return Err(InternalError("an apply patch is applied with the object's managed fields"));
}

Result<nlohmann::json> ApplyPatch(PatchType type, std::string_view kind,
                                  const nlohmann::json& original, std::string_view body) {
  ASSIGN_OR_RETURN(nlohmann::json patch, ParsePatch(body));
  return ApplyParsedPatch(type, kind, original, patch);
}

}  // namespace strata::server
