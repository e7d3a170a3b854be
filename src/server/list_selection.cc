#include "server/list_selection.h"

#include <algorithm>

namespace strata::server {
namespace {

// Reads `fieldSelector` into `out` (see SelectionFor).
Status ApplyFieldSelector(const std::string& text, const api::ResourceType& type, Selected* out) {
  const bool pod = type.kind == "Pod";
  const bool event = type.kind == "Event";
  size_t start = 0;
  while (start < text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    const std::string term = text.substr(start, comma - start);
    start = comma + 1;
    const size_t not_equal = term.find("!=");
    const size_t eq = not_equal != std::string::npos ? not_equal : term.find('=');
    const size_t value_start =
        eq == std::string::npos ? std::string::npos : term.find_first_not_of("!=", eq);
    std::string field = term.substr(0, eq);
    // events.k8s.io names the object an Event is about `regarding`.
    if (event && field.starts_with("regarding.")) {
      field = "involvedObject." + field.substr(std::string_view("regarding.").size());
    }
    const std::string value = value_start == std::string::npos ? "" : term.substr(value_start);
    if (value.empty()) {
      return InvalidArgumentError("fieldSelector: expected FIELD=VALUE or FIELD!=VALUE, got \"" +
                                  term + "\"");
    }
    const bool equal = not_equal == std::string::npos;
    if (field == "metadata.namespace" && !type.namespaced) {
      return InvalidArgumentError("fieldSelector: " + std::string(type.plural) +
                                  " are cluster-scoped");
    }
    if (field == "metadata.name" && equal) {
      out->name = value;
    } else if (field == "metadata.namespace" && equal) {
      out->selection.namespace_name = value;
    } else if (field == "metadata.name" || field == "metadata.namespace" ||
               (pod && (field == "spec.nodeName" || field == "status.phase")) ||
               (event && (field == "involvedObject.kind" || field == "involvedObject.name" ||
                          field == "involvedObject.namespace" || field == "involvedObject.uid"))) {
      std::string pointer = "/" + field;
      std::replace(pointer.begin(), pointer.end(), '.', '/');
      out->terms.push_back({nlohmann::json::json_pointer(pointer), value, equal});
    } else {
      return InvalidArgumentError("fieldSelector: field \"" + field +
                                  "\" is not supported (metadata.name, metadata.namespace" +
                                  (pod ? ", spec.nodeName, status.phase" : "") +
                                  (event ? ", involvedObject.kind, .name, .namespace, .uid" : "") +
                                  " are)");
    }
  }
  return Status::Ok();
}

}  // namespace

Result<Selected> SelectionFor(const api::ResourcePath& path,
                              const std::map<std::string, std::string>& query) {
  Selected out;
  out.selection.kind = std::string(path.type->StoreKind());
  out.selection.namespace_name = path.namespace_name;
  if (!path.name.empty()) out.name = path.name;
  out.served_at = path.type;
  if (auto it = query.find("labelSelector"); it != query.end()) {
    Result<store::LabelSelector> labels = store::LabelSelector::Parse(it->second);
    if (!labels) return Err(labels.error().WithPrefix("labelSelector"));
    out.selection.labels = std::move(*labels);
  }
  if (auto it = query.find("fieldSelector"); it != query.end()) {
    RETURN_IF_ERROR(ApplyFieldSelector(it->second, *path.type, &out));
  }
  return out;
}

}  // namespace strata::server
