#include "controller/node_controller.h"

#include <fmt/format.h>

#include <map>

#include "api/node.h"
#include "api/pod.h"
#include "controller/stored_objects.h"
#include "controller/training_pod.h"

namespace strata::controller {

NodeController::NodeController(store::Store& store, const Clock& clock,
                               NodeControllerOptions options)
    : store_(store),
      clock_(clock),
      options_(options),
      events_(store, clock, options.event_repeat_interval) {}

Status NodeController::RunOnce() {
  Result<std::vector<Stored<api::Node>>> nodes = ListStored<api::Node>(store_, "Node");
  if (!nodes) return nodes.error();
  Result<std::vector<Stored<api::Pod>>> pods = ListStored<api::Pod>(store_, "Pod");
  if (!pods) return pods.error();
  std::map<std::string, std::vector<const Stored<api::Pod>*>> live_pods;
  for (const Stored<api::Pod>& pod : *pods) {
    if (!pod.value.spec.node_name.empty() && !PodTerminal(pod.value)) {
      live_pods[pod.value.spec.node_name].push_back(&pod);
    }
  }
  const TimePoint now = clock_.Now();
  const std::string stamp = FormatRfc3339(now);
  Status first;
  for (const Stored<api::Node>& stored : *nodes) {
    api::Node node = stored.value;
    api::NodeCondition* ready = nullptr;
    for (api::NodeCondition& condition : node.status.conditions) {
      if (condition.type == "Ready") ready = &condition;
    }
    if (ready == nullptr) continue;  // never reported: not yet a node that can be lost
    std::vector<store::Write> writes;
    auto event = [&](const EventSubject& subject, std::string_view reason,
                     const std::string& message) -> Status {
      Result<std::optional<store::Write>> write =
          events_.Record(subject, "Warning", reason, message);
      if (!write) return write.error();
      if (*write) writes.push_back(std::move(**write));
      return Status::Ok();
    };
    std::optional<TimePoint> heartbeat = ParseRfc3339(ready->last_heartbeat_time);
    if (ready->status == "True" && (!heartbeat || now - *heartbeat > options_.grace_period)) {
      ready->status = "Unknown";
      ready->reason = "NodeStatusUnknown";
      ready->message = "Kubelet stopped posting node status.";
      ready->last_transition_time = stamp;
      writes.push_back({store::WriteOp::kUpdate, EncodeForStore(api::Object(node), stored.raw)});
      Status recorded = event(
          {"Node", "", node.metadata.name, stored.raw.uid}, "NodeNotReady",
          fmt::format("Node {} status is now: NodeNotReady (no heartbeat "
                      "since {})",
                      node.metadata.name,
                      ready->last_heartbeat_time.empty() ? "ever" : ready->last_heartbeat_time));
      if (first.ok()) first = recorded;
    }
    if (ready->status != "True") {
      for (const Stored<api::Pod>* stored_pod : live_pods[node.metadata.name]) {
        api::Pod pod = stored_pod->value;
        pod.status.phase = "Failed";
        pod.status.reason = "NodeLost";
        pod.status.message = fmt::format("node {} is not ready: its processes are presumed lost",
                                         node.metadata.name);
        const store::Object& raw = stored_pod->raw;
        Status recorded = event({"Pod", raw.key.namespace_name, raw.key.name, raw.uid}, "NodeLost",
                                pod.status.message);
        if (first.ok()) first = recorded;
        writes.push_back(
            {store::WriteOp::kUpdate, EncodeForStore(api::Object(std::move(pod)), raw)});
      }
    }
    if (writes.empty()) continue;
    Result<std::vector<store::Object>> applied = store_.Apply(std::move(writes));
    if (!applied && first.ok()) first = applied.error();
  }
  return first;
}

}  // namespace strata::controller
