#pragma once

#include <set>
#include <vector>

#include "api/job.h"
#include "api/pod.h"
#include "cluster/cache.h"
#include "cluster/event_recorder.h"
#include "cluster/stored_object.h"
#include "common/clock.h"
#include "controller/control_loop.h"
#include "controller/object_writer.h"
#include "store/store.h"

namespace strata::controller {

struct JobControllerOptions {
  // A transition event that says the same thing again within this interval is not rewritten.
  Duration event_repeat_interval = std::chrono::minutes(1);
  // Every job is reconciled at least this often, changed or not.
  Duration resync_interval = std::chrono::minutes(5);
};

// The training job controller. The scheduler adapter records a Job's placement in its status
// and creates its pods (one per replica, bound whole, each carrying the placement's run); each
// pass here follows the jobs whose job or pods changed since the last pass and writes the job's
// status and events:
//  - every pod of the current run Running (or Succeeded, in a role that completed, such as an
//    initializer): phase Running (start time, condition Running); the pods of roles that wait
//    for others are created by the scheduler adapter once those are Ready or Complete;
//  - a pod of the current run failed on its own (its processes failed, or its node was lost):
//    phase Restarting, and the whole group stops (every live pod is marked kStopGroupRestart);
//    once every pod is terminal the status drops the placement with the restart count one
//    higher, then the pods are deleted, and the job goes back to the scheduler (the new pods
//    carry the count as TORCHELASTIC_RESTART_COUNT). After maxRestarts restarts the next
//    failure fails the job;
//  - pods stopped for preemption: once all are terminal the status drops the placement
//    (phase Pending, preemption count one higher; not a restart), then they are deleted;
//  - the success policy's roles Succeeded (all of them, or any with operator Any; by default
//    every role, i.e. every pod): phase Succeeded, and the other pods are stopped;
//  - a finished job (Succeeded or Failed) holds nothing: live pods are stopped, and pods are
//    deleted as cleanPodPolicy says (All: every pod; Running: the pods stopped at the end;
//    None: none) once terminal;
//  - pods of another run than the placement's (a run given up) are stopped, then deleted;
//  - pods whose Job is gone are stopped and then deleted.
// The newest checkpoint time the agent reported on the pods becomes the job's
// lastCheckpointTime, which prices preempting it.
//
// Writes go one object at a time, the job's status first: every later write of a pass follows
// from the status, so the process may die between any two of them and the next pass (of this
// process or another) finishes the step.
//
// Owned by the loop that drives it (ControlLoop); not thread-safe. Between passes it keeps only
// its cursor into the cache and the jobs to retry.
class JobController final : public ControlLoop {
 public:
  // `store`, `cache` (which must follow Jobs and Pods, with cluster::kPodsByOwner) and `clock`
  // must outlive the controller.
  JobController(store::Store& store, cluster::Cache& cache, const Clock& clock,
                JobControllerOptions options = {});

  Status RunOnce() override;

 private:
  Status Reconcile(const store::ObjectKey& job_key);
  Status ReconcileJob(const cluster::Stored<api::Job>& job,
                      const std::vector<cluster::Stored<api::Pod>>& pods);
  Status RemoveOrphans(const std::vector<cluster::Stored<api::Pod>>& pods);

  store::Store& store_;
  cluster::Cache& cache_;
  const Clock& clock_;
  JobControllerOptions options_;
  cluster::EventRecorder events_;
  uint64_t cursor_ = 0;
  TimePoint next_resync_{};
  std::set<store::ObjectKey> retry_;
};

}  // namespace strata::controller
