#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "api/resource_catalog.h"
#include "common/clock.h"

namespace strata::client {

// `strata describe`: one object as a person reads it, from JSON the REST API served. Shows the
// object's identity and spec; its state (a job's phase, restarts out of maxRestarts,
// preemptions and last checkpoint; a pod's node, GPUs, exit code; a queue's use of its quota
// per resource; a node's GPUs and who holds them); its conditions; for a pending workload the
// scheduler's explanation exactly as the controller stored it (reason tier, then
// kube-scheduler's message); the pods of a job or service; and the object's events, oldest
// first. `pods` are the pods related to the object (a node's, a job's, a queue's: see
// RelatedPods' callers); `events` are those whose involvedObject is the object. Pure; thread-safe.
std::string FormatDescription(const api::ResourceType& type, const nlohmann::json& object,
                              const std::vector<nlohmann::json>& pods,
                              const std::vector<nlohmann::json>& events, TimePoint now);

}  // namespace strata::client
