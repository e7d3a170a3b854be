#include "kubestore/node_lease.h"

#include <nlohmann/json.hpp>

#include "api/node_lease.h"

namespace strata::kubestore {
namespace {

using Json = nlohmann::json;
using api::kNodeLeaseNamespace;

// `lease` as held by `node_name` and renewed at `now`.
Json Renewed(Json lease, const std::string& node_name, TimePoint now) {
  lease["spec"]["holderIdentity"] = node_name;
  lease["spec"]["renewTime"] = FormatRfc3339Micro(now);
  return lease;
}

}  // namespace

Status NodeLeaseRenewer::Renew(const std::string& node_name, TimePoint now) {
  std::lock_guard<std::mutex> lock(mu_);
  auto last = last_.find(node_name);
  if (last != last_.end()) {
    // The Lease's resourceVersion is the update's precondition.
    Result<Json> updated = client_.Update(kube::resources::kLeases, kNodeLeaseNamespace,
                                          Renewed(last->second, node_name, now));
    if (updated) {
      last->second = std::move(*updated);
      return Status::Ok();
    }
    last_.erase(last);
    const StatusCode code = updated.error().code();
    if (code != StatusCode::kConflict && code != StatusCode::kNotFound) return updated.error();
  }
  Result<Json> renewed = ReadAndRenew(node_name, now);
  if (!renewed) return renewed.error();
  last_[node_name] = std::move(*renewed);
  return Status::Ok();
}

Result<Json> NodeLeaseRenewer::ReadAndRenew(const std::string& node_name, TimePoint now) {
  Result<Json> current = client_.Get(kube::resources::kLeases, kNodeLeaseNamespace, node_name);
  if (current) {
    return client_.Update(kube::resources::kLeases, kNodeLeaseNamespace,
                          Renewed(std::move(*current), node_name, now));
  }
  if (current.error().code() != StatusCode::kNotFound) return Err(current.error());
  Json lease = Json::parse(api::NodeLeaseJson(node_name, now, lease_duration_));
  if (Result<Json> node = client_.Get(kube::resources::kNodes, "", node_name)) {
    lease["metadata"]["ownerReferences"] =
        Json::array({{{"apiVersion", "v1"},
                      {"kind", "Node"},
                      {"name", node_name},
                      {"uid", node->value("metadata", Json::object()).value("uid", "")}}});
  }
  return client_.Create(kube::resources::kLeases, kNodeLeaseNamespace, lease);
}

}  // namespace strata::kubestore
