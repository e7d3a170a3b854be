#include "controller/node_controller.h"

#include <fmt/format.h>

#include "api/node.h"
#include "api/pod.h"
#include "cluster/indexes.h"
#include "controller/object_writer.h"
#include "controller/training_pod.h"

namespace strata::controller {

NodeController::NodeController(store::Store& store, cluster::Cache& cache, const Clock& clock,
                               NodeControllerOptions options)
    : store_(store),
      cache_(cache),
      clock_(clock),
      options_(options),
      events_(store, clock, options.event_repeat_interval) {}

Status NodeController::RunOnce() {
  if (Status synced = cache_.Sync(); !synced.ok()) return synced;
  const TimePoint now = clock_.Now();
  const std::string stamp = FormatRfc3339(now);
  Status first;
  for (const cluster::ObjectRef& ref : cache_.List("Node")) {
    const api::Node* cached = ref->As<api::Node>();
    if (cached == nullptr) continue;
    const api::NodeCondition* ready_now = nullptr;
    for (const api::NodeCondition& condition : cached->status.conditions) {
      if (condition.type == "Ready") ready_now = &condition;
    }
    if (ready_now == nullptr) continue;  // never reported: not yet a node that can be lost
    std::optional<TimePoint> alive = ParseRfc3339(ready_now->last_heartbeat_time);
    if (options_.leases != nullptr) {
      const TimePoint renewed = options_.leases->AliveAt(cached->metadata.name);
      if (!alive || renewed > *alive) alive = renewed;
    }
    const bool lost = options_.mark_lost && ready_now->status == "True" &&
                      (!alive || now - *alive > options_.grace_period);
    if (ready_now->status == "True" && !lost) continue;
    // Only a node that is lost or not ready is copied: a pass over healthy nodes reads them in
    // place.
    std::optional<cluster::Stored<api::Node>> stored = cluster::StoredOf<api::Node>(ref);

    const std::string& name = stored->value.metadata.name;
    ObjectWriter writer(store_, events_, {"Node", "", name, stored->raw.uid});
    if (lost) {
      api::Node node = stored->value;
      for (api::NodeCondition& condition : node.status.conditions) {
        if (condition.type != "Ready") continue;
        condition.status = "Unknown";
        condition.reason = "NodeStatusUnknown";
        condition.message = "Kubelet stopped posting node status.";
        condition.last_transition_time = stamp;
      }
      // First the node: once it is NotReady, every pass fails what is left on it.
      writer.Update(*stored, std::move(node));
      writer.Event("Warning", "NodeNotReady",
                   fmt::format("Node {} status is now: NodeNotReady (no heartbeat since {})", name,
                               alive ? FormatRfc3339(*alive) : std::string("ever")));
    }
    if (Status status = writer.status(); !status.ok()) {
      if (first.ok()) first = status;
      continue;
    }
    for (const cluster::Stored<api::Pod>& stored_pod :
         cluster::StoredOf<api::Pod>(cache_.Indexed(cluster::kPodsByNode, name))) {
      if (api::PodTerminal(stored_pod.value)) continue;
      api::Pod pod = stored_pod.value;
      pod.status.phase = api::PodPhase::kFailed;
      pod.status.reason = "NodeLost";
      pod.status.message =
          fmt::format("node {} is not ready: its processes are presumed lost", name);
      ObjectWriter pod_writer(
          store_, events_,
          {"Pod", stored_pod.raw.key.namespace_name, stored_pod.raw.key.name, stored_pod.raw.uid});
      const std::string message = pod.status.message;
      pod_writer.Update(stored_pod, std::move(pod));
      pod_writer.Event("Warning", "NodeLost", message);
      if (first.ok()) first = pod_writer.status();
    }
  }
  return first;
}

}  // namespace strata::controller
