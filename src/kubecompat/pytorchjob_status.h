#pragma once

#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

#include "api/job.h"
#include "api/pod.h"
#include "common/clock.h"

namespace strata::kubecompat {

// Kubeflow's JobStatus (kubeflow.org/v1) of a PyTorchJob that strata runs as the strata Job
// `job`, whose pods are `pods`, as Kubeflow's training operator would write it:
//   conditions       Created, then the state the Job is in (Running, Restarting, Succeeded or
//                    Failed) last, each with Kubeflow's reasons (PyTorchJobCreated,
//                    PyTorchJobRunning, ...); a state left is set False (Running after a
//                    restart, a success or a failure) before the new one is added, so that the
//                    newest condition, the State column, is the current state. A condition
//                    that did not change keeps its place and times; one whose status changed
//                    gets `now` as its lastTransitionTime
//   replicaStatuses  per replica type the PyTorchJob names (Master is the pod of rank 0,
//                    Worker the others): active, succeeded and failed pods of the Job's current
//                    run, and the types' label selector
//   startTime, completionTime  the Job's
// `pytorchjob` is the object as read from the API server: its status's conditions are the
// starting point. Pure; thread-safe.
nlohmann::json PyTorchJobStatus(const nlohmann::json& pytorchjob, const api::Job& job,
                                const std::vector<api::Pod>& pods, TimePoint now);

// The status of a PyTorchJob strata cannot run (`message` says why: a field it does not
// honour, a strata Job of the same name that is not its own): Created and then Failed, reason
// PyTorchJobFailedValidation, as Kubeflow's operator reports a job it refuses.
nlohmann::json RefusedStatus(const nlohmann::json& pytorchjob, std::string_view message,
                             TimePoint now);

// Whether a status needs writing: `desired` differs from the object's `status` in more than the
// times a write stamps (lastReconcileTime, the conditions' lastUpdateTime).
bool StatusChanged(const nlohmann::json& pytorchjob, const nlohmann::json& desired);

}  // namespace strata::kubecompat
