#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "gateway/config.h"
#include "kube/client.h"
#include "kube/reflector.h"
#include "kubecompat/inference_pool_routes.h"

namespace strata::kubecompat {

struct InferencePoolWatchOptions {
  // How long a pass waits for news of the pools before it looks at their pods.
  Duration watch_wait = std::chrono::milliseconds(200);
  // Passed to every reflector (tests shorten the backoff after a missing CRD).
  kube::ReflectorOptions reflector;
};

// Follows a cluster's GAIE InferencePools as a source of the gateway's routes (DESIGN.md,
// "Kubernetes mode": the gateway reads InferencePool objects where users have them): a
// reflector of every namespace's InferencePools, one of InferenceObjectives, and for each pool
// a reflector of the pods of its namespace that its selector matches (a label selector on the
// watch: pods of any manager, a user's own Deployment's included). Each pass applies what
// changed and rebuilds the routing table with RoutesFromPools, so a pod that turns Ready or
// NotReady, or goes, changes the routes within a pass, and a pool deleted takes its models
// with it. A pool whose selector or port changes gets a new pod reflector.
//
// Where the cluster has no InferencePool (or InferenceObjective) CRD, that reflector's
// NotFound means "none": the pass goes on with none, and it is tried again after the
// reflector's backoff; the first such answer is logged once.
//
// RunOnce is called from one thread (the control plane's loop); Routes from any. The client
// must outlive it.
class InferencePoolWatch {
 public:
  explicit InferencePoolWatch(kube::Client& client, InferencePoolWatchOptions options = {});
  ~InferencePoolWatch();
  InferencePoolWatch(const InferencePoolWatch&) = delete;
  InferencePoolWatch& operator=(const InferencePoolWatch&) = delete;

  // One pass: the pools' changes (waiting up to watch_wait for the first), the objectives',
  // then each pool's pods'; then the routes. Returns the first failure that retrying will not
  // cure other than a missing CRD (PermissionDenied: the install's RBAC lacks
  // InferencePoolRules); the routes are rebuilt from what was read either way.
  Status RunOnce();

  // The routes from the last pass (none before the first). Thread-safe.
  std::vector<gateway::ModelConfig> Routes() const;

 private:
  using Key = std::pair<std::string, std::string>;  // namespace, name
  struct Pool {
    InferencePool pool;
    std::unique_ptr<kube::Reflector> pods_reflector;
    std::map<Key, nlohmann::json> pods;
  };
  using Objects = std::map<Key, nlohmann::json>;

  // Applies the deltas `reflector` has (waiting up to `wait` for the first) to `objects`
  // until none is waiting; whether any was. The reflector's error otherwise (NotFound: the
  // resource is not served).
  static Result<bool> Drain(kube::Reflector& reflector, Duration wait, Objects& objects);
  // Drain of a GAIE kind, whose CRD may be missing: then `objects` are none, and `missing`
  // says it was logged (once, until the kind is served again). Sets `changed` when `objects`
  // changed.
  static Status Follow(kube::Reflector& reflector, Duration wait, Objects& objects, bool& missing,
                       std::string_view kind, bool& changed);
  // Makes pools_ follow pool_objects_: new pools and changed ones get a pod reflector; a pool
  // that does not read is left out, with a warning when its error changes.
  void SyncPools();

  kube::Client& client_;
  const InferencePoolWatchOptions options_;
  std::unique_ptr<kube::Reflector> pools_reflector_;
  std::unique_ptr<kube::Reflector> objectives_reflector_;
  Objects pool_objects_;
  Objects objective_objects_;
  std::map<Key, Pool> pools_;           // the pools that read, each with its pod reflector
  std::map<Key, std::string> invalid_;  // the pools that do not, and why
  bool pools_missing_ = false;
  bool objectives_missing_ = false;
  std::vector<std::string> last_conflicts_;

  mutable std::mutex mutex_;
  std::vector<gateway::ModelConfig> routes_;  // guarded by mutex_
};

}  // namespace strata::kubecompat
