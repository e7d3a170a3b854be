#pragma once

#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/status.h"
#include "kube/client.h"
#include "node/gpu_metrics.h"

namespace strata::server {

struct InventoryAgentOptions {
  std::string node_name;  // the Node this agent describes: its own (the pod's spec.nodeName)
  std::string nvml_library = "libnvidia-ml.so.1";
};

// `strata agent --inventory`, the inventory role of the node agent on a GPU node of a
// Kubernetes cluster whose kubelet is the real one (a DaemonSet of `strata kubernetes
// manifests`): each pass reads the node's GPUs through NVML (NvmlInventory: models, memory,
// NVLink islands, MIG) and their readings (NvmlGpuMonitor: utilisation, memory, power,
// temperature, clocks, ECC, Xid), and merge-patches its own Node's metadata with
// InventoryMetadata (GPU Feature Discovery's labels, islands, MIG, health) — never its spec or
// status, which are the kubelet's. The readings are kept for Metrics.
//
// Owned by the agent command; RunOnce from one thread, Metrics from any. `client` must outlive
// it.
class InventoryAgent {
 public:
  InventoryAgent(kube::Client& client, InventoryAgentOptions options);
  ~InventoryAgent();
  InventoryAgent(const InventoryAgent&) = delete;
  InventoryAgent& operator=(const InventoryAgent&) = delete;

  // One pass. Unavailable when NVML cannot be loaded (nothing is written; the next pass tries
  // again); NotFound when the Node does not exist (yet: the kubelet registers it); the API
  // server's error when the patch fails.
  Status RunOnce();

  // The node's GPUs under the DCGM exporter's metric names (Prometheus text, the DCGM_FI_DEV_*
  // families of observe::RenderGpuMetrics) as of the last pass that read them; empty before.
  // Thread-safe.
  std::string Metrics() const;

  // The metadata the last successful pass wrote (InventoryMetadata), null before.
  const nlohmann::json& written() const { return written_; }

 private:
  kube::Client& client_;
  const InventoryAgentOptions options_;
  std::unique_ptr<node::NvmlGpuMonitor> monitor_;
  nlohmann::json written_;
  mutable std::mutex mutex_;
  std::string metrics_;  // guarded by mutex_
};

// The RBAC rules of the inventory agent's ServiceAccount: patch Nodes (its own; RBAC cannot name
// the node a pod runs on, so the agent holds itself to its --name).
std::vector<nlohmann::json> InventoryAgentRules();

}  // namespace strata::server
