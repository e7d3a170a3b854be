#pragma once

#include <functional>
#include <memory>
#include <set>
#include <string>

#include "common/clock.h"
#include "controller/control_loop.h"
#include "controller/event_recorder.h"
#include "store/store.h"
#include "telemetry/cluster_gpus.h"
#include "telemetry/cluster_objects_cache.h"
#include "telemetry/idle_gpus.h"

namespace strata::controller {

// Idle reclaim: each pass reads the cluster from a telemetry::ClusterObjectsCache (which lists
// the store once and then decodes only the Nodes, Pods and Queues written since the last pass):
// its GPUs (telemetry::ClusterGpuSamples: simulated GPUs' derived readings, real GPUs' measured
// ones from `readings`), each running job's busy share (telemetry::JobGpuUses), and every
// queue's idle policy (telemetry::ParseIdlePolicy over the Queue's annotations; a queue's local
// queues share its policy; an annotation that does not parse leaves the defaults and is
// logged). A job under its queue's threshold for the policy's idle time gets one Warning event
// (reason GpuIdle) per idle spell; where the policy says so it is also annotated
// kReclaimableAnnotation "true", which makes the scheduler preempt it before anything else for
// work of its queue or cohort (scheduler: IdleReclaim). The annotation goes away when the job is
// busy again.
//
// Owned by the loop that drives it (ControlLoop); not thread-safe. Keeps the idle spells between
// passes (a restarted loop starts them over).
class IdleReclaimLoop final : public ControlLoop {
 public:
  // Real GPUs' latest readings by UUID; empty: only simulated GPUs are judged.
  using ReadingSource = std::function<telemetry::GpuReadingsByUuid()>;

  // `store` and `clock` must outlive the loop; `cluster` reads `store` (shared with the
  // cluster's other readers, so each write is decoded once).
  IdleReclaimLoop(store::Store& store, std::shared_ptr<telemetry::ClusterObjectsCache> cluster,
                  const Clock& clock, ReadingSource readings = {},
                  Duration event_repeat_interval = std::chrono::hours(1));

  Status RunOnce() override;

 private:
  Status MarkReclaimable(const std::set<std::pair<std::string, std::string>>& reclaimable);

  store::Store& store_;
  const Clock& clock_;
  ReadingSource readings_;
  std::shared_ptr<telemetry::ClusterObjectsCache> cluster_;
  EventRecorder events_;
  telemetry::IdleJobTracker tracker_;
};

}  // namespace strata::controller
