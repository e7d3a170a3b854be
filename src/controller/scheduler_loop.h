#pragma once

#include <set>
#include <string>

#include "common/clock.h"
#include "controller/cluster_view.h"
#include "controller/control_loop.h"
#include "controller/event_recorder.h"
#include "controller/training_pod.h"
#include "scheduler/scheduler.h"
#include "store/store.h"
#include "telemetry/metrics.h"

namespace strata::controller {

struct SchedulerLoopOptions {
  scheduler::SchedulerOptions scheduler;
  ClusterViewOptions view;
  // The rendezvous port of the first job on an address; each further live job there gets the
  // next free one (torchrun's default first).
  int first_master_port = kFirstMasterPort;
  // A FailedScheduling event that says the same thing again within this interval is not
  // rewritten (its count grows at most once per interval).
  Duration event_repeat_interval = std::chrono::minutes(1);
  // Where strata_scheduler_cycle_duration_seconds (the wall time of each Scheduler::Cycle) is
  // registered; null: not measured. Must outlive the loop.
  telemetry::Registry* registry = nullptr;
};

// The scheduler adapter: each pass reads the store into a scheduler Snapshot and pending
// workloads (ReadClusterView), runs one Scheduler::Cycle and applies the Decisions:
//  - a placed Job gets all of its pods, bound to nodes with their GPUs and the torchrun
//    rendezvous annotations (training_pod.h), in one store batch with its status and a
//    Scheduled event: all of them or none; placed standalone pods are bound likewise;
//  - a preemption victim's pods are marked for stopping (reason Preempted), with a Preempted
//    event; the node agent stops the processes, the job controller requeues the job, and the
//    preemptor is nominated so that what is freed goes to it;
//  - every pending workload's explanation (reason tier + kube-scheduler's message and the
//    tier's numbers) goes into the Job's status (reason, message, condition Scheduled=False) or
//    the pod's status, written only when it changes, and into one FailedScheduling event
//    per object and message, deduplicated (EventRecorder).
//
// Owned by the loop that drives it (ControlLoop); not thread-safe. Keeps only the set of
// nominated workloads between passes.
class SchedulerLoop final : public ControlLoop {
 public:
  // `store` and `clock` must outlive the loop.
  SchedulerLoop(store::Store& store, const Clock& clock, SchedulerLoopOptions options = {});

  Status RunOnce() override;

  // The decisions of the last pass (empty before the first).
  const scheduler::Decisions& last_decisions() const { return last_decisions_; }

 private:
  Status Bind(ClusterView& view, const scheduler::Binding& binding);
  Status BindJob(ClusterView& view, const scheduler::Binding& binding,
                 const WorkloadObjects& objects);
  Status BindPods(ClusterView& view, const scheduler::Binding& binding,
                  const WorkloadObjects& objects);
  Status Evict(const ClusterView& view, const scheduler::Preemption& preemption);
  Status Explain(const ClusterView& view, const scheduler::Pending& pending);
  Status Commit(std::vector<store::Write> writes);

  store::Store& store_;
  const Clock& clock_;
  SchedulerLoopOptions options_;
  scheduler::Scheduler scheduler_;
  EventRecorder events_;
  std::set<std::string> nominated_;
  scheduler::Decisions last_decisions_;
  telemetry::Histogram* cycle_seconds_ = nullptr;
};

}  // namespace strata::controller
