#include "server/node_heartbeat.h"

#include <memory>

#include "api/node.h"
#include "kubestore/node_lease.h"
#include "server/node_registration.h"

namespace strata::server {

LeaseRenewal KubernetesLeaseRenewal(kube::Client& client) {
  return [renewer = std::make_shared<kubestore::NodeLeaseRenewer>(client)](
             const std::string& name, TimePoint now) { return renewer->Renew(name, now); };
}

NodeHeartbeat::NodeHeartbeat(store::Store& store, cluster::Cache& cache, LeaseRenewal renew,
                             NodeHeartbeatOptions options)
    : store_(store), cache_(cache), renew_(std::move(renew)), options_(options) {}

bool NodeHeartbeat::StatusDue(const std::string& name, TimePoint now) const {
  cluster::ObjectRef ref = cache_.Get({"Node", "", name});
  const api::Node* node = ref ? ref->As<api::Node>() : nullptr;
  if (node == nullptr) return false;
  for (const api::NodeCondition& condition : node->status.conditions) {
    if (condition.type != "Ready") continue;
    if (condition.status != "True") return true;
    std::optional<TimePoint> beat = ParseRfc3339(condition.last_heartbeat_time);
    return !beat || now - *beat >= options_.status_report_interval;
  }
  return true;
}

Status NodeHeartbeat::Beat(const std::vector<std::string>& names, TimePoint now) {
  Status first = cache_.Sync();
  for (const std::string& name : names) {
    Status renewed = renew_(name, now);
    if (first.ok()) first = renewed;
    if (!StatusDue(name, now)) continue;
    Status reported = HeartbeatNodes(store_, {name}, now);
    if (first.ok()) first = reported;
  }
  return first;
}

}  // namespace strata::server
