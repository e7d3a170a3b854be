// The REST API's pod evictions (pods/eviction): what kubectl drain sends for each pod of a node.
#include <nlohmann/json.hpp>

#include "api/annotations.h"
#include "api/manifest.h"
#include "api/pod_contract.h"
#include "common/field_errors.h"
#include "common/json_member.h"
#include "server/rest_api.h"

namespace strata::server {
namespace {

// How often an eviction that raced another writer of the pod reads it and tries again.
constexpr int kEvictAttempts = 5;

// The request body: a policy/v1 (or v1beta1) Eviction of the pod of the request path.
Status CheckEviction(const api::ResourcePath& path, const std::string& body) {
  const nlohmann::json eviction = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!eviction.is_object()) {
    return InvalidArgumentError("request body: expected an Eviction (policy/v1), a JSON object");
  }
  const std::string kind = StringMemberOr(eviction, "kind", "Eviction");
  if (kind != "Eviction")
    return InvalidArgumentError("kind: expected Eviction, got " + Quoted(kind));
  const std::string name = StringMemberOr(MemberOrNull(eviction, "metadata"), "name", path.name);
  if (name != path.name) {
    return InvalidArgumentError("metadata.name: " + Quoted(name) +
                                " does not match the pod of the request path " + Quoted(path.name));
  }
  return Status::Ok();
}

// Kubernetes answers an accepted eviction with 201 and a Status of Success.
ApiReply EvictionAccepted() {
  return JsonReply(201, {{"kind", "Status"},
                         {"apiVersion", "v1"},
                         {"metadata", nlohmann::json::object()},
                         {"status", "Success"},
                         {"code", 201}});
}

}  // namespace

Result<ApiReply> RestApi::Evict(const api::ResourcePath& path, const std::string& body) {
  RETURN_IF_ERROR(CheckEviction(path, body));
  const store::ObjectKey key{"Pod", path.namespace_name.value_or("default"), path.name};
  for (int attempt = 0;; ++attempt) {
    ASSIGN_OR_RETURN(store::Object current, store_.Get(key));
    ASSIGN_OR_RETURN(api::Object decoded, api::DecodeObject(current.body));
    const api::Pod& pod = *decoded.As<api::Pod>();
    Result<store::Object> written = current;
    if (pod.spec.owner.kind.empty() || api::PodTerminal(pod)) {
      written = store_.Delete(key, current.resource_version);
    } else if (api::StopRequested(pod).empty()) {
      // Its controller stops the rest of its job or replica, and deletes them once they ended.
      store::Object write = current;
      nlohmann::json& annotations = write.body["metadata"]["annotations"];
      annotations[api::kStopRequestedAnnotation] = std::string(api::kStopEvicted);
      annotations[api::kStopMessageAnnotation] = "evicted from node " + pod.spec.node_name;
      written = store_.Update(std::move(write));
    }
    if (written) return EvictionAccepted();
    if (written.error().code() != StatusCode::kConflict || attempt + 1 == kEvictAttempts) {
      return Err(written.error());
    }
  }
}

}  // namespace strata::server
