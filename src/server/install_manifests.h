#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace strata::server {

// What `strata kubernetes manifests` installs to run strata's control plane on a cluster with
// the store on the Kubernetes API (`strata up --store kubernetes --no-nodes`): nodes join it
// with `strata agent --kubeconfig`.
struct StoreInstallOptions {
  std::string namespace_name = "strata-system";
  std::string image;  // REQUIRES: not empty
  int replicas = 2;
  // The Secret (made by the admin, never printed here) whose key `tokens` holds the bearer
  // tokens the API accepts, one per line: the API listens beyond loopback, so it needs them.
  std::string api_tokens_secret = "strata-api-tokens";
};

// The control plane's grant (ServiceAccount strata-control-plane: kubestore::StoreClusterRules(),
// node Leases in kube-node-lease, its election Lease); its Deployment of `replicas` planes with
// leader election, each serving the REST API and the gateway on every address of its pod, the
// API's tokens read from the Secret; and the Services strata-api (7070) and strata-gateway (8000).
std::vector<nlohmann::json> ControlPlaneObjects(const StoreInstallOptions& options);

// The inventory agent on GPU nodes: its grant (ServiceAccount strata-inventory,
// InventoryAgentRules()) and a DaemonSet of `strata agent --inventory --name=$(NODE_NAME)
// --metrics-listen=0.0.0.0:9400` on the nodes GPU Feature Discovery labels
// nvidia.com/gpu.present=true or Node Feature Discovery finds an NVIDIA PCI device on,
// tolerating nvidia.com/gpu taints; NVIDIA_VISIBLE_DEVICES=all and
// NVIDIA_DRIVER_CAPABILITIES=utility have the NVIDIA container runtime give it NVML (no GPU is
// requested: it reads them all, as GFD and dcgm-exporter do). Port "metrics" serves the DCGM
// figures, /healthz its readiness.
std::vector<nlohmann::json> InventoryAgentObjects(const StoreInstallOptions& options);

}  // namespace strata::server
