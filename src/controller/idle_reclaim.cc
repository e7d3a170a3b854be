#include "controller/idle_reclaim.h"

#include <spdlog/spdlog.h>

#include <map>
#include <set>

#include "api/job.h"
#include "api/queue.h"
#include "cluster/stored_object.h"
#include "controller/training_pod.h"

namespace strata::controller {

IdleReclaimLoop::IdleReclaimLoop(store::Store& store, cluster::Cache& cache,
                                 std::shared_ptr<observe::ClusterObjectsCache> cluster,
                                 const Clock& clock, ReadingSource readings,
                                 Duration event_repeat_interval)
    : store_(store),
      cache_(cache),
      clock_(clock),
      readings_(std::move(readings)),
      cluster_(std::move(cluster)),
      events_(store, clock, event_repeat_interval) {}

Status IdleReclaimLoop::RunOnce() {
  Result<std::shared_ptr<const observe::ClusterObjects>> cluster = cluster_->Get();
  if (!cluster) return cluster.error();
  std::map<std::string, observe::IdlePolicy> policies;
  for (const api::Queue& queue : (*cluster)->queues->objects) {
    Result<observe::IdlePolicy> policy = observe::ParseIdlePolicy(queue.metadata.annotations);
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
    return it == policies.end() ? observe::IdlePolicy{} : it->second;
  };

  const observe::GpuReadingsByUuid measured =
      readings_ ? readings_() : observe::GpuReadingsByUuid{};
  std::vector<observe::JobGpuUse> uses =
      observe::JobGpuUses(observe::ClusterGpuSamples(**cluster, measured));
  Status first;
  for (const observe::IdleJob& idle : tracker_.Observe(uses, clock_.Now(), policy_of)) {
    Status recorded = events_.Record({"Job", idle.namespace_name, idle.job, ""}, "Warning",
                                     observe::kIdleEventReason,
                                     observe::DescribeIdleJob(idle, policy_of(idle.queue)));
    if (!recorded.ok() && first.ok()) first = recorded;
  }
  std::set<std::pair<std::string, std::string>> reclaimable;
  for (auto& job : tracker_.Reclaimable()) reclaimable.insert(std::move(job));
  Status marked = MarkReclaimable(reclaimable);
  return first.ok() ? marked : first;
}

Status IdleReclaimLoop::MarkReclaimable(
    const std::set<std::pair<std::string, std::string>>& reclaimable) {
  Status first;
  for (const cluster::Stored<api::Job>& job : cluster::StoredOf<api::Job>(cache_.List("Job"))) {
    const bool wanted =
        reclaimable.count({job.value.metadata.namespace_name, job.value.metadata.name}) > 0;
    auto& annotations = job.value.metadata.annotations;
    const bool marked = annotations.count(api::kReclaimableAnnotation) > 0;
    if (wanted == marked) continue;
    api::Job updated = job.value;
    if (wanted) {
      updated.metadata.annotations[api::kReclaimableAnnotation] = "true";
    } else {
      updated.metadata.annotations.erase(api::kReclaimableAnnotation);
    }
    Result<store::Object> written =
        store_.Update(cluster::EncodeForStore(api::Object(std::move(updated)), job.raw));
    if (!written && first.ok()) first = written.error();
  }
  return first;
}

}  // namespace strata::controller
