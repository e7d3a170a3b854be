#include "kubestore/node_lease.h"

#include <nlohmann/json.hpp>

namespace strata::kubestore {
namespace {

using Json = nlohmann::json;

constexpr char kNodeLeaseNamespace[] = "kube-node-lease";

}  // namespace

Status RenewNodeLease(kube::Client& client, const std::string& node_name, TimePoint now,
                      Duration lease_duration) {
  const std::string renewed = FormatRfc3339Micro(now);
  Result<Json> current = client.Get(kube::resources::kLeases, kNodeLeaseNamespace, node_name);
  if (current) {
    Json lease = *current;  // its resourceVersion is the update's precondition
    lease["spec"]["holderIdentity"] = node_name;
    lease["spec"]["renewTime"] = renewed;
    Result<Json> updated = client.Update(kube::resources::kLeases, kNodeLeaseNamespace, lease);
    return updated ? Status::Ok() : updated.error();
  }
  if (current.error().code() != StatusCode::kNotFound) return current.error();
  Json metadata = {{"name", node_name}, {"namespace", kNodeLeaseNamespace}};
  if (Result<Json> node = client.Get(kube::resources::kNodes, "", node_name)) {
    metadata["ownerReferences"] =
        Json::array({{{"apiVersion", "v1"},
                      {"kind", "Node"},
                      {"name", node_name},
                      {"uid", node->value("metadata", Json::object()).value("uid", "")}}});
  }
  Json lease = {{"apiVersion", "coordination.k8s.io/v1"},
                {"kind", "Lease"},
                {"metadata", std::move(metadata)},
                {"spec",
                 {{"holderIdentity", node_name},
                  {"leaseDurationSeconds",
                   std::chrono::duration_cast<std::chrono::seconds>(lease_duration).count()},
                  {"renewTime", renewed}}}};
  Result<Json> created = client.Create(kube::resources::kLeases, kNodeLeaseNamespace, lease);
  return created ? Status::Ok() : created.error();
}

}  // namespace strata::kubestore
