#pragma once

#include <vector>

#include "api/job.h"
#include "api/pod.h"
#include "common/clock.h"
#include "controller/control_loop.h"
#include "controller/event_recorder.h"
#include "controller/job_status.h"
#include "controller/stored_objects.h"
#include "store/store.h"

namespace strata::controller {

struct JobControllerOptions {
  // A transition event that says the same thing again within this interval is not rewritten.
  Duration event_repeat_interval = std::chrono::minutes(1);
};

// The training job controller. The scheduler adapter creates a Job's pods (one per replica,
// bound whole); each pass here follows every Job's pods and writes the job's status
// (job_status.h) and events:
//  - every pod Running: phase Running (start time, condition Running);
//  - a pod failed on its own (its processes failed, or its node was lost): the whole group
//    stops (every live pod is marked kStopGroupRestart) and, once every pod is terminal, the
//    pods are deleted and the job goes back to the scheduler with its restart count one higher
//    (phase Restarting until the new pods run; the new pods carry the count as
//    TORCHELASTIC_RESTART_COUNT). After maxRestarts restarts the next failure fails the job;
//  - pods stopped for preemption: once all are terminal they are deleted and the job requeues
//    (phase Pending, preemption count one higher; not a restart);
//  - every pod Succeeded: phase Succeeded;
//  - a finished job (Succeeded or Failed) holds nothing: live pods are stopped, and pods are
//    deleted as cleanPodPolicy says (All: every pod; Running: the pods stopped at the end;
//    None: none) once terminal;
//  - pods whose Job is gone are stopped and then deleted.
// The newest checkpoint time the agent reported on the pods becomes the job's
// lastCheckpointTime, which prices preempting it. Each job's writes are one store batch.
//
// Owned by the loop that drives it (ControlLoop); not thread-safe; keeps no state between
// passes.
class JobController final : public ControlLoop {
 public:
  // `store` and `clock` must outlive the controller.
  JobController(store::Store& store, const Clock& clock, JobControllerOptions options = {});

  Status RunOnce() override;

 private:
  Status Reconcile(const Stored<api::Job>& job, const std::vector<Stored<api::Pod>>& pods);
  Status RemoveOrphans(const std::vector<Stored<api::Pod>>& pods);

  store::Store& store_;
  const Clock& clock_;
  EventRecorder events_;
};

}  // namespace strata::controller
