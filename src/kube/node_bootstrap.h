#pragma once

#include <string>

#include "common/clock.h"
#include "common/status.h"

namespace strata::kube {

// The kubelet's TLS bootstrap, for strata's virtual kubelet (`strata agent --kubeconfig FILE
// --bootstrap-kubeconfig BOOT`): a node gets credentials of its own, user system:node:NAME in
// group system:nodes, which the API server's Node authorizer and NodeRestriction admission
// confine to that node's Node, Lease and pods (their status), instead of running with a
// control plane's wide identity.
struct NodeBootstrap {
  std::string node_name;
  // Where the node's own kubeconfig is read from, and written (0600) when it is made.
  std::string kubeconfig_path;
  // A kubeconfig whose credentials (a bootstrap token, as `kubeadm token create` makes) may
  // create CertificateSigningRequests.
  std::string bootstrap_kubeconfig_path;
  // How long to wait for the request to be approved and signed.
  Duration wait = std::chrono::minutes(5);
  // A certificate with less than this left is replaced.
  Duration renew_before = std::chrono::hours(1);
};

// Makes sure `kubeconfig_path` holds the node's client certificate: kept when it is there, for
// this node and valid for more than renew_before; else a new key is made and its request posted
// as a CertificateSigningRequest (signer kubernetes.io/kube-apiserver-client-kubelet, usages
// digital signature and client auth, as the kubelet's) with the bootstrap credentials, and once
// the request is approved (by kube-controller-manager for bootstrap tokens bound to the
// nodeclient ClusterRole, or by an admin's `kubectl certificate approve`) and signed, the
// kubeconfig is written: the bootstrap kubeconfig's server and CA, the new key and certificate.
// Errors: the bootstrap kubeconfig's; PermissionDenied naming the request when it is denied or
// fails; DeadlineExceeded naming it (and how to approve it) when `wait` passes first.
Status EnsureNodeCredentials(const NodeBootstrap& bootstrap, const Clock& clock);

}  // namespace strata::kube
