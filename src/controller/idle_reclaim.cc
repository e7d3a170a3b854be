#include "controller/idle_reclaim.h"

#include <spdlog/spdlog.h>

#include <map>
#include <set>

#include "api/job.h"
#include "api/queue.h"
#include "controller/stored_objects.h"
#include "controller/training_pod.h"

namespace strata::controller {

IdleReclaimLoop::IdleReclaimLoop(store::Store& store,
                                 std::shared_ptr<telemetry::ClusterObjectsCache> cluster,
                                 const Clock& clock, ReadingSource readings,
                                 Duration event_repeat_interval)
    : store_(store),
      clock_(clock),
      readings_(std::move(readings)),
      cluster_(std::move(cluster)),
      events_(store, clock, event_repeat_interval) {}

Status IdleReclaimLoop::RunOnce() {
  Result<std::shared_ptr<const telemetry::ClusterObjects>> cluster = cluster_->Get();
  if (!cluster) return cluster.error();
  std::map<std::string, telemetry::IdlePolicy> policies;
  for (const api::Queue& queue : (*cluster)->queue_objects) {
    Result<telemetry::IdlePolicy> policy = telemetry::ParseIdlePolicy(queue.metadata.annotations);
    if (!policy) {
      spdlog::warn("queue {}: {}; its idle policy keeps the defaults", queue.metadata.name,
                   policy.error().message());
      continue;
    }
    policies[queue.metadata.name] = *policy;
    for (const api::LocalQueueRef& local : queue.spec.local_queues) {
      policies[local.name] = *policy;
    }
  }
  auto policy_of = [&](const std::string& queue) {
    auto it = policies.find(queue);
    return it == policies.end() ? telemetry::IdlePolicy{} : it->second;
  };

  const telemetry::GpuReadingsByUuid measured =
      readings_ ? readings_() : telemetry::GpuReadingsByUuid{};
  std::vector<telemetry::JobGpuUse> uses =
      telemetry::JobGpuUses(telemetry::ClusterGpuSamples(**cluster, measured));
  Status first;
  for (const telemetry::IdleJob& idle : tracker_.Observe(uses, clock_.Now(), policy_of)) {
    Result<std::optional<store::Write>> event = events_.Record(
        {"Job", idle.namespace_name, idle.job, ""}, "Warning", telemetry::kIdleEventReason,
        telemetry::DescribeIdleJob(idle, policy_of(idle.queue)));
    if (!event) {
      if (first.ok()) first = event.error();
      continue;
    }
    if (*event) {
      Result<std::vector<store::Object>> applied = store_.Apply({std::move(**event)});
      if (!applied && first.ok()) first = applied.error();
    }
  }
  std::set<std::pair<std::string, std::string>> reclaimable;
  for (auto& job : tracker_.Reclaimable()) reclaimable.insert(std::move(job));
  Status marked = MarkReclaimable(reclaimable);
  return first.ok() ? marked : first;
}

Status IdleReclaimLoop::MarkReclaimable(
    const std::set<std::pair<std::string, std::string>>& reclaimable) {
  Result<std::vector<Stored<api::Job>>> jobs = ListStored<api::Job>(store_, "Job");
  if (!jobs) return jobs.error();
  Status first;
  for (const Stored<api::Job>& job : *jobs) {
    const bool wanted =
        reclaimable.count({job.value.metadata.namespace_name, job.value.metadata.name}) > 0;
    auto& annotations = job.value.metadata.annotations;
    const bool marked = annotations.count(kReclaimableAnnotation) > 0;
    if (wanted == marked) continue;
    api::Job updated = job.value;
    if (wanted) {
      updated.metadata.annotations[kReclaimableAnnotation] = "true";
    } else {
      updated.metadata.annotations.erase(kReclaimableAnnotation);
    }
    Result<store::Object> written =
        store_.Update(EncodeForStore(api::Object(std::move(updated)), job.raw));
    if (!written && first.ok()) first = written.error();
  }
  return first;
}

}  // namespace strata::controller
