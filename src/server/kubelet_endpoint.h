#pragma once

#include <memory>
#include <string>

#include "common/status.h"
#include "kube/client.h"
#include "kube/kubelet_server.h"
#include "store/store.h"

namespace strata::server {

struct KubeletEndpointOptions {
  std::string host = "127.0.0.1";
  int port = 0;
  // PEM of the CA whose client certificates may connect (the API server's kubelet client);
  // empty: the CA the kubeconfig trusts for the API server (one CA signs both in kubeadm's
  // clusters).
  std::string client_ca_pem;
  // The node a request about an unknown pod is authorized against (so that an unauthorized
  // caller learns nothing of which pods exist).
  std::string default_node;
};

// The kubelet endpoint of a control plane whose store is on Kubernetes: `kubectl logs` of the
// pods its node agent runs, through the API server's node proxy to the Node's daemonEndpoints.
// Serves PodLogs (server/pod_logs.h) from `pods_dir` for GET /containerLogs/NS/POD/CONTAINER
// (follow, tailLines as kubectl sends them), for callers whose certificate the CA signed and
// whom a SubjectAccessReview allows nodes/proxy of the pod's node (kube::NodeAccessReviewer).
// `store` and `client` must outlive the server.
Result<std::unique_ptr<kube::KubeletServer>> StartKubeletEndpoint(const store::Store& store,
                                                                  kube::Client& client,
                                                                  const std::string& pods_dir,
                                                                  KubeletEndpointOptions options);

}  // namespace strata::server
