#pragma once

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "cluster/cache.h"
#include "common/clock.h"
#include "common/status.h"
#include "kube/client.h"
#include "kube/reflector.h"

namespace strata::kubecompat {

struct PyTorchJobOperatorOptions {
  // How long a pass waits for news of PyTorchJobs before it reconciles what it has.
  Duration watch_wait = std::chrono::milliseconds(200);
  // How often the owner of the PyTorchJob CRD is looked at again (installed later, or handed
  // over to Kubeflow's operator).
  Duration ownership_recheck = std::chrono::seconds(30);
};

// The RBAC rules the operator needs, for the control plane's grant: its CRD (get, by name),
// PyTorchJobs (get, list, watch) and their status (get, update). The strata Jobs it makes are
// the store's rules'.
std::vector<nlohmann::json> PyTorchJobOperatorRules();

// kubeflow.org/v1 PyTorchJobs run by strata, on a cluster where Kubeflow's training operator is
// not installed and `strata kubernetes manifests --compat-crds` installed strata's CRD for them
// (DESIGN.md, "Kubernetes mode": `kubectl apply -f pytorchjob.yaml` just works). Where the CRD
// is not strata's (Kubeflow's operator owns the kind) or is absent, it does nothing.
//
// Each PyTorchJob becomes a strata Job of the same name and namespace, decoded as `strata apply`
// decodes one (api::DecodeObject), owned by the PyTorchJob (ownerReferences, so that deleting it
// deletes the Job and, through the Job, its pods: the garbage collector of
// kube-controller-manager does it) and annotated with its uid. The Job's state is mirrored back
// into the PyTorchJob's status (pytorchjob_status.h). A PyTorchJob that does not decode, or
// whose name a strata Job of someone else's holds, is Failed with the reason. The spec is read
// once: a later edit changes nothing (Kubeflow's PyTorchJobs are immutable in effect too).
//
// Reads the strata Jobs and their pods through the plane's cache, writes through `client`;
// correct if the process dies between any two writes (a Job made and no status written yet is
// found on the next pass). Used from one thread (the control plane's leader loop); `client` and
// `cache` must outlive it.
class PyTorchJobOperator {
 public:
  PyTorchJobOperator(kube::Client& client, cluster::Cache& cache, const Clock& clock,
                     PyTorchJobOperatorOptions options = {});
  ~PyTorchJobOperator();
  PyTorchJobOperator(const PyTorchJobOperator&) = delete;
  PyTorchJobOperator& operator=(const PyTorchJobOperator&) = delete;

  // One pass: the CRD's owner (now and then), the PyTorchJobs' changes (waiting up to
  // watch_wait for the first), the strata Jobs' changes in the cache, and then each PyTorchJob
  // concerned reconciled. Returns the first failure of a request; the next pass goes on.
  Status RunOnce();

 private:
  using Key = std::pair<std::string, std::string>;  // namespace, name

  // Whether the CRD is strata's, read again every ownership_recheck.
  Result<bool> Owned();
  // Applies the PyTorchJobs' deltas, marking what changed dirty.
  Status Follow();
  Status Reconcile(const Key& key, const nlohmann::json& pytorchjob);
  Status CreateJob(const Key& key, const nlohmann::json& pytorchjob);
  Status WriteStatus(const nlohmann::json& pytorchjob, nlohmann::json status);

  kube::Client& client_;
  cluster::Cache& cache_;
  const Clock& clock_;
  const PyTorchJobOperatorOptions options_;
  std::unique_ptr<kube::Reflector> reflector_;
  std::map<Key, nlohmann::json> pytorchjobs_;
  std::set<Key> dirty_;
  uint64_t cursor_ = 0;
  std::optional<bool> owned_;  // unknown until the CRD was first read
  TimePoint next_ownership_check_{};
};

}  // namespace strata::kubecompat
