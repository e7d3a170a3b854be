#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "api/service.h"
#include "cluster/cache.h"
#include "cluster/event_recorder.h"
#include "common/clock.h"
#include "controller/control_loop.h"
#include "controller/service_replicas.h"
#include "store/store.h"

namespace strata::controller {

// What the serving path knows of the traffic a replica carries, so a drain ends when its last
// stream does. In `strata up`, the gateway's own in-flight count per endpoint.
class ReplicaTraffic {
 public:
  virtual ~ReplicaTraffic() = default;
  // Requests in flight to the engine at `endpoint` ("host:port"); 0 when none or unknown.
  virtual int64_t InFlight(const std::string& endpoint) const = 0;
};

// One version's replicas as the controller counts them at one pass.
struct VersionReplicas {
  int ready = 0;
  int starting = 0;               // live, not yet ready (pending, bound, loading weights)
  double cold_start_seconds = 0;  // measured mean creation-to-ready time (0: none yet)
};

// How many replicas a version should have now, and why.
struct ScaleAdvice {
  int desired = 0;
  std::string reason;
};

// Decides a version's replica count from its load. In `strata up`, the autoscaler over the
// gateway's signals (server/serving_loop.h); a controller without one keeps minReplicas.
class ReplicaScaler {
 public:
  virtual ~ReplicaScaler() = default;
  // Called once per version per pass. The controller clamps the answer to [0, maxReplicas].
  virtual ScaleAdvice Advise(const api::Service& service, const api::ServiceVersion& version,
                             const VersionReplicas& replicas) = 0;
};

struct ServiceControllerOptions {
  // A draining replica stops once the gateway has no request in flight to it, but not before
  // `route_settle` has passed (routing tables everywhere have dropped it), and at the latest
  // after `drain_grace` (streams still open then are cut).
  Duration route_settle = std::chrono::seconds(1);
  Duration drain_grace = std::chrono::seconds(60);
  // An event that says the same thing again within this interval is not rewritten.
  Duration event_repeat_interval = std::chrono::minutes(1);
  // About the most pod writes (creations, drain and stop marks, deletions) one pass makes over
  // every service, a replica's pods all or none (Kubernetes' ReplicaSet controller has the same
  // bound, burstReplicas = 500): a large scale-up or scale-down proceeds over several passes,
  // each of which sees what changed since (a service deleted meanwhile creates nothing more).
  int64_t max_pod_writes_per_pass = 500;
};

// The inference service controller. Each pass reads every Service and the pods it owns
// (owner kind Service) and, per version:
//  - asks the ReplicaScaler for the desired count (minReplicas without one) and records each
//    change with its reason in the status (`describe service` shows them) and as an event;
//  - creates the missing replicas as unbound pods (service_replicas.h), which the scheduler
//    places as one gang per replica (TP=2: two GPUs of one NVLink island; a replica spanning
//    nodes: all its pods or none);
//  - drains replicas beyond the count (not-ready ones first, then the highest index): marks
//    their pods draining, so the gateway sends them nothing new; once their in-flight requests
//    end (ReplicaTraffic) or the drain grace passes, asks the agent to stop them; pods that
//    never got a node are deleted at once;
//  - rolling update: when the version's template hash changes, creates replicas with the new
//    template up to spec.max_surge beyond the count (default 1), and drains an old ready one
//    each time the ready replicas would still cover the count less spec.max_unavailable
//    (default 0: serving capacity never drops) without it;
//  - with ordinalNames, a replica takes an index below the count (plus maxSurge while an update
//    goes on), so a StatefulSet's successor waits for its predecessor's name;
//  - with orderedStart (a StatefulSet's OrderedReady), creates one replica at a time, once the
//    pods of every live replica run (readiness aside: a StatefulSet's pods need not serve an
//    engine's /health);
//  - replaces a broken replica (a pod failed, or its node went): its other pods are stopped,
//    and once all are terminal the pods are deleted and a new replica is created;
//  - writes the status: desired, live, ready, starting, draining and updated replicas per
//    version, the measured cold start, the last scale decisions.
// Pods of a deleted Service, or of a version no longer listed, are drained and stopped alike.
// A pass makes about max_pod_writes_per_pass pod writes at most, the rest at the next passes
// (its own writes wake the loop again).
// Every service is reconciled at each pass (its desired count moves with its load), reading its
// pods through the cache (cluster::kPodsByOwner). Writes go one object at a time and each is
// redone from what the store holds: a replica whose pods were not all created gets the missing
// ones, a replica partly marked draining or stopping is marked whole, and the status is written
// last, from what the pass saw; so a crash between any two writes converges.
//
// Owned by the loop that drives it (ControlLoop); not thread-safe. Keeps only its cache cursor
// and the deleted services whose pods are still going between passes: a restarted controller
// converges to the same state.
class ServiceController final : public ControlLoop {
 public:
  // `store`, `cache` (following Services and Pods, with cluster::kPodsByOwner) and `clock` must
  // outlive the controller; so must `traffic` and `scaler` when not null.
  ServiceController(store::Store& store, cluster::Cache& cache, const Clock& clock,
                    ServiceControllerOptions options = {}, const ReplicaTraffic* traffic = nullptr,
                    ReplicaScaler* scaler = nullptr);

  Status RunOnce() override;

 private:
  struct Pass;
  Status Reconcile(const cluster::Stored<api::Service>& service, std::vector<Replica> replicas);
  Status RemoveOrphans(const std::string& namespace_name, const std::string& service,
                       std::vector<Replica> replicas);

  store::Store& store_;
  cluster::Cache& cache_;
  const Clock& clock_;
  ServiceControllerOptions options_;
  const ReplicaTraffic* traffic_;
  ReplicaScaler* scaler_;
  cluster::EventRecorder events_;
  uint64_t cursor_ = 0;
  // Pod writes this pass may still make (max_pod_writes_per_pass at its start).
  int64_t writes_left_ = 0;
  // Deleted services (namespace, name) whose pods are still being drained and stopped.
  std::set<std::pair<std::string, std::string>> orphaned_;
};

}  // namespace strata::controller
