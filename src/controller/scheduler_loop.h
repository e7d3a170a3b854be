#pragma once

#include <map>
#include <set>
#include <string>

#include "cluster/cache.h"
#include "cluster/event_recorder.h"
#include "common/clock.h"
#include "controller/cluster_view.h"
#include "controller/control_loop.h"
#include "controller/training_pod.h"
#include "metrics/metrics.h"
#include "scheduler/scheduler.h"
#include "store/store.h"

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
  // With nothing changed, a cycle still runs this often while workloads wait (what a runtime
  // limit or a reservation allows changes with time alone).
  Duration idle_cycle_interval = std::chrono::seconds(10);
  // The most pending workloads whose explanation (status and FailedScheduling event) one pass
  // rewrites; the others are explained by the next passes, which follow at once. So a pass's
  // writes stay bounded when thousands of pods wait (binds are bounded by the nodes).
  int64_t max_explanations_per_pass = 500;
  // Where strata_scheduler_cycle_duration_seconds (the wall time of each Scheduler::Cycle) is
  // registered; null: not measured. Must outlive the loop.
  metrics::Registry* registry = nullptr;
};

// The scheduler adapter: each pass reads the cluster from the cache into a scheduler Snapshot
// and pending workloads (ClusterViewReader: what changed since the last pass), runs one
// Scheduler::Cycle and applies the Decisions.
// A pass in which nothing the scheduler reads changed, and no workload waits on time, runs no
// cycle at all.
//  - a placed Job: first its status records the placement (the commit point: from then on its
//    capacity is held), then its pods are created, bound to nodes with their GPUs and the
//    torchrun rendezvous annotations (training_pod.h), with a Scheduled event;
//  - a placed gang of standalone pods: the first member is bound with the gang's record
//    (kGangPlacementAnnotation, the commit point), then the others; a single pod is bound alike;
//  - a bind a crash left half done (a placement whose pods are not all created, a gang record
//    whose members are not all bound) is finished before the cycle, as recorded;
//  - a preemption victim's pods are marked for stopping (reason Preempted), with a Preempted
//    event; the node agent stops the processes, the job controller requeues the job (a gang of
//    standalone pods is marked whole here), and the preemptor is nominated so that what is freed
//    goes to it;
//  - every pending workload's explanation (reason tier + kube-scheduler's message and the
//    tier's numbers) goes into the Job's status (reason, message, condition Scheduled=False) or
//    the pod's status, written only when it changes, and into one FailedScheduling event
//    per object and message, deduplicated (EventRecorder);
//  - every Queue's status: its use per flavor and resource by the scheduler's own charging
//    rules (QuotaLedger::ChargeFor), admitted and pending workloads, written when it changes.
// Every write is of one object; a crash between any two leaves a state the next pass finishes.
//
// Owned by the loop that drives it (ControlLoop); not thread-safe. Keeps its cache cursor and
// the set of nominated workloads between passes.
class SchedulerLoop final : public ControlLoop {
 public:
  // `store`, `cache` (following Node, Queue, ResourceFlavor, Job and Pod with
  // cluster::kPodsByOwner) and `clock` must outlive the loop.
  SchedulerLoop(store::Store& store, cluster::Cache& cache, const Clock& clock,
                SchedulerLoopOptions options = {});

  Status RunOnce() override;

  // The decisions of the last cycle (empty before the first).
  const scheduler::Decisions& last_decisions() const { return last_decisions_; }
  // How many cycles ran.
  int64_t cycles() const { return cycles_; }

 private:
  Status Finish(const UnfinishedBind& bind, const ClusterView& view);
  Status Bind(ClusterView& view, const scheduler::Binding& binding);
  Status BindJob(ClusterView& view, const scheduler::Binding& binding,
                 const WorkloadObjects& objects);
  Status BindPods(ClusterView& view, const scheduler::Binding& binding,
                  const WorkloadObjects& objects);
  Status Evict(const ClusterView& view, const scheduler::Preemption& preemption);
  Status StopRestOfPreemptedGangs(const ClusterView& view);
  // Writes why `pending` waits where that changed, while `budget` (decremented) lasts.
  Status Explain(const ClusterView& view, const scheduler::Pending& pending, int64_t& budget);
  Status WriteQueueStatuses(const ClusterView& view);

  store::Store& store_;
  cluster::Cache& cache_;
  const Clock& clock_;
  SchedulerLoopOptions options_;
  scheduler::Scheduler scheduler_;
  ClusterViewReader reader_;
  cluster::EventRecorder events_;
  std::set<std::string> nominated_;
  scheduler::Decisions last_decisions_;
  metrics::Histogram* cycle_seconds_ = nullptr;
  uint64_t cursor_ = 0;
  // What the scheduler saw of each node at the last cycle, so that a heartbeat is no change.
  std::map<std::string, scheduler::Node> last_nodes_;
  // What the scheduler read of each pod and job at the last cycle (SchedulingFingerprint), so
  // that an agent's report on a running pod is no change.
  std::map<store::ObjectKey, std::string> last_seen_;
  TimePoint next_idle_cycle_{};
  bool waiting_ = false;  // the last cycle left workloads pending
  // The last cycle ran out of explanations before every pending workload had its own.
  bool unexplained_ = false;
  int64_t cycles_ = 0;
};

}  // namespace strata::controller
