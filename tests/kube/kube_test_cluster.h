#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "kube/client.h"
#include "kube/kubeconfig.h"

// The real control plane the kube client tests run against: tools/kube/cluster.sh's loopback
// kube-apiserver, etcd, kube-controller-manager and 3 kwok nodes x 8 GPUs, started by the test
// binary's main (kube_test_main.cc) or, with STRATA_KUBECONFIG set, one already running.

namespace strata::kube::testing {

// The admin kubeconfig's path and the cluster's directory (certificates in DIR/pki).
const std::string& KubeconfigPath();
const std::string& ClusterDir();

// The admin configuration, loaded from KubeconfigPath(); the test fails if it does not load.
KubeConfig AdminConfig();

// A client as the admin, with no rate limit unless `options` sets one.
std::unique_ptr<Client> AdminClient();
std::unique_ptr<Client> NewClient(const KubeConfig& config, ClientOptions options);

// Creates a namespace "<prefix>-<pid>-<n>" and waits for its default service account (pods need
// it); returns its name.
std::string NewNamespace(Client& client, const std::string& prefix);

// A pod that strata's scheduler would place: schedulerName strata, the toleration for kwok's
// node taint, one container asking for `gpus` nvidia.com/gpu.
nlohmann::json StrataPod(const std::string& name, int gpus = 1);

// Waits up to `seconds` for `condition`, polling every 100 ms.
bool WaitFor(double seconds, const std::function<bool()>& condition);

}  // namespace strata::kube::testing
