#include "kubestore/node_lease.h"

#include <nlohmann/json.hpp>

#include "api/node_lease.h"

namespace strata::kubestore {
namespace {

using Json = nlohmann::json;
using api::kNodeLeaseNamespace;

}  // namespace

Status RenewNodeLease(kube::Client& client, const std::string& node_name, TimePoint now,
                      Duration lease_duration) {
  Result<Json> current = client.Get(kube::resources::kLeases, kNodeLeaseNamespace, node_name);
  if (current) {
    Json lease = *current;  // its resourceVersion is the update's precondition
    lease["spec"]["holderIdentity"] = node_name;
    lease["spec"]["renewTime"] = FormatRfc3339Micro(now);
    Result<Json> updated = client.Update(kube::resources::kLeases, kNodeLeaseNamespace, lease);
    return updated ? Status::Ok() : updated.error();
  }
  if (current.error().code() != StatusCode::kNotFound) return current.error();
  Json lease = api::NodeLeaseObject(node_name, now, lease_duration);
  if (Result<Json> node = client.Get(kube::resources::kNodes, "", node_name)) {
    lease["metadata"]["ownerReferences"] =
        Json::array({{{"apiVersion", "v1"},
                      {"kind", "Node"},
                      {"name", node_name},
                      {"uid", node->value("metadata", Json::object()).value("uid", "")}}});
  }
  Result<Json> created = client.Create(kube::resources::kLeases, kNodeLeaseNamespace, lease);
  return created ? Status::Ok() : created.error();
}

}  // namespace strata::kubestore
