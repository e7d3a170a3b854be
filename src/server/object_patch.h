#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "common/status.h"

namespace strata::server {

// The patch formats of Kubernetes' PATCH verb, named by the request's Content-Type.
enum class PatchType {
  kMerge,           // application/merge-patch+json (RFC 7386)
  kJson,            // application/json-patch+json (RFC 6902)
  kStrategicMerge,  // application/strategic-merge-patch+json (api/strategic_merge_patch.h)
  kApply,           // application/apply-patch+yaml: server-side apply (server/field_manager.h)
};

// The patch type `content_type` names ("application/merge-patch+json; charset=utf-8" is
// kMerge) for an object of `kind`. Unimplemented naming the types `kind` accepts for any other:
// a missing type, or a strategic merge patch of a strata.dev kind (as Kubernetes refuses one
// for a custom resource).
Result<PatchType> PatchTypeFor(std::string_view content_type, std::string_view kind);

// A patch's body as JSON. InvalidArgument naming the byte of a syntax error, or when it nests
// deeper than JsonReader::kMaxDepth (the patches below recurse over it).
Result<nlohmann::json> ParsePatch(std::string_view body);

// `patch` (from ParsePatch), a patch of `type` (not kApply, which ServerSideApply applies with
// the object's managed fields), applied to `original` (an object of `kind` as
// the API serves it). InvalidArgument when it is not such a patch or does not apply, naming the
// field (a strategic merge patch) or the operation (a JSON patch: its index, op and path, and
// why: a path that is not there, a test that fails). Pure; thread-safe.
Result<nlohmann::json> ApplyParsedPatch(PatchType type, std::string_view kind,
                                        const nlohmann::json& original,
                                        const nlohmann::json& patch);

// ParsePatch, then ApplyParsedPatch.
Result<nlohmann::json> ApplyPatch(PatchType type, std::string_view kind,
                                  const nlohmann::json& original, std::string_view body);

}  // namespace strata::server
