#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "kube/client.h"

// What the Kubernetes benchmarks' load drivers (pod_load, gang_load) share: a client without a
// rate limit, and the pods they create on kwok nodes.

namespace strata::bench {

// A client of the cluster `kubeconfig` names, with no client-side rate limit. Exits the process
// with the error when the file does not load or the client cannot be made (a driver's setup).
std::unique_ptr<kube::Client> ConnectUnthrottled(const std::string& kubeconfig);

// A pod NAME for `scheduler` asking for `gpus` nvidia.com/gpu (plus 100m CPU and 128Mi),
// tolerating kwok's node taint, with `labels`.
nlohmann::json BenchPod(const std::string& name, const std::string& scheduler, int gpus,
                        const nlohmann::json& labels);

// The GPUs a pod asks for (its containers' nvidia.com/gpu limits); 0 when unreadable.
int64_t GpusOf(const nlohmann::json& pod);

}  // namespace strata::bench
