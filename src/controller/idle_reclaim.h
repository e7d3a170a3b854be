#pragma once

#include <functional>
#include <memory>
#include <set>
#include <string>

#include "cluster/cache.h"
#include "cluster/event_recorder.h"
#include "common/clock.h"
#include "controller/control_loop.h"
#include "observe/cluster_gpus.h"
#include "observe/cluster_objects_cache.h"
#include "observe/idle_gpus.h"
#include "store/store.h"

namespace strata::controller {

// Idle reclaim: each pass reads the cluster from an observe::ClusterObjectsCache (which
// converts only the Nodes, Pods and Queues written since the last pass):
// its GPUs (observe::ClusterGpuSamples: simulated GPUs' derived readings, real GPUs' measured
// ones from `readings`), each running job's busy share (observe::JobGpuUses), and every
// queue's idle policy (observe::ParseIdlePolicy over the Queue's annotations; a queue's local
// queues share its policy; an annotation that does not parse leaves the defaults and is
// logged). A job under its queue's threshold for the policy's idle time gets one Warning event
// (reason GpuIdle) per idle spell; where the policy says so it is also annotated
// api::kReclaimableAnnotation "true", which makes the scheduler preempt it before anything else for
// work of its queue or cohort (scheduler: IdleReclaim). The annotation goes away when the job is
// busy again (the Jobs are read through the cache; each write is of one Job).
//
// Owned by the loop that drives it (ControlLoop); not thread-safe. Keeps the idle spells between
// passes (a restarted loop starts them over).
class IdleReclaimLoop final : public ControlLoop {
 public:
  // Real GPUs' latest readings by UUID; empty: only simulated GPUs are judged.
  using ReadingSource = std::function<observe::GpuReadingsByUuid()>;

  // `store`, `cache` and `clock` must outlive the loop; `cluster` reads `cache` (both shared
  // with the cluster's other readers, so each write is decoded once).
  IdleReclaimLoop(store::Store& store, cluster::Cache& cache,
                  std::shared_ptr<observe::ClusterObjectsCache> cluster, const Clock& clock,
                  ReadingSource readings = {},
                  Duration event_repeat_interval = std::chrono::hours(1));

  Status RunOnce() override;

 private:
  Status MarkReclaimable(const std::set<std::pair<std::string, std::string>>& reclaimable);

  store::Store& store_;
  cluster::Cache& cache_;
  const Clock& clock_;
  ReadingSource readings_;
  std::shared_ptr<observe::ClusterObjectsCache> cluster_;
  cluster::EventRecorder events_;
  observe::IdleJobTracker tracker_;
};

}  // namespace strata::controller
