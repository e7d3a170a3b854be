#pragma once

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "api/node.h"
#include "common/status.h"
#include "kube/client.h"
#include "kube/kubelet_server.h"
#include "store/store.h"

namespace strata::server {

struct KubeletEndpointOptions {
  // HOST:PORT (--kubelet-listen); port 0: any free one.
  std::string listen = "127.0.0.1:0";
  // PEM file of the CA whose client certificates may connect (the API server's kubelet client);
  // empty: the CA the kubeconfig trusts for the API server (one CA signs both in kubeadm's
  // clusters).
  std::string client_ca_file;
  // Where the node runtime keeps the pods' files (node::ProcessRuntime's data dir + "/pods").
  std::string pods_dir;
};

// The kubelet endpoint of nodes whose store is on Kubernetes: `kubectl logs` of the pods their
// agent runs, through the API server's node proxy to the Nodes' daemonEndpoints. Serves PodLogs
// (server/pod_logs.h) for GET /containerLogs/NS/POD/CONTAINER (follow, tailLines as kubectl
// sends them), to callers whose certificate the CA signed and whom a SubjectAccessReview allows
// nodes/proxy of the pod's node (kube::NodeAccessReviewer; a pod it cannot find is judged
// against the first node, so that an unauthorized caller learns nothing of which pods exist).
// Annotates each of `nodes` with where the API server is to reach it
// (api::kKubeletEndpointAnnotation: the listener's host, or when it listens on every address the
// node's own address), and says where it listens on `out`. `store` and `client` must outlive
// the server. InvalidArgument for a bad listen address or CA file.
Result<std::unique_ptr<kube::KubeletServer>> StartNodesKubelet(
    const store::Store& store, kube::Client& client, const KubeletEndpointOptions& options,
    std::vector<api::Node>& nodes, std::ostream& out);

}  // namespace strata::server
