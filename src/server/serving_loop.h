#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "api/pod.h"
#include "api/service.h"
#include "autoscaler/autoscaler.h"
#include "cluster/cache.h"
#include "cluster/stored_object.h"
#include "common/clock.h"
#include "controller/control_loop.h"
#include "controller/service_controller.h"
#include "gateway/config.h"
#include "gateway/server.h"
#include "metrics/metrics.h"
#include "server/service_token_ledger.h"
#include "store/store.h"

namespace strata::server {

// The gateway's routing table from the store: one model per Service (its spec.model; a second
// service claiming a model already taken is left out; callable by its spec.tenants only, when it
// names any), one version per service version with its weight, and as endpoints the leaders of the
// version's ready replicas that are not draining (controller::Replica::Ready). A version with no
// ready replica is listed with no endpoint, so the gateway holds its requests while a replica
// starts (the activator). Pure.
std::vector<gateway::ModelConfig> RoutesFromStore(
    const std::vector<cluster::Stored<api::Service>>& services,
    const std::vector<cluster::Stored<api::Pod>>& pods);

// The autoscaling policy a service version gets from spec.autoscaling: metric concurrency,
// queue or kvCache use Knative's windowed shape (target load per replica or target KV usage,
// the spec's stable and panic windows, the spec's scale rates) with the stable window's trend
// forecast over `cold_start`, so scale-up starts before the queue builds; rps uses strata's
// rate policy (target requests/s per replica to start from, learned online, with the arrival
// rate forecast over `cold_start`). Scale to zero only with minReplicas 0 and scaleToZeroAfter set;
// otherwise at least one replica stays. InvalidArgument naming the spec.autoscaling field when the
// spec cannot make a policy.
Result<std::unique_ptr<autoscaler::ScalingPolicy>> PolicyForService(const api::ServiceSpec& spec,
                                                                    Duration cold_start);

// Models from a source of routes other than the store's Services (the cluster's GAIE
// InferencePools: kubecompat/inference_pool_watch.h). Called from the serving loop's thread.
using RouteSource = std::function<std::vector<gateway::ModelConfig>()>;

// The Services' routes followed by `extra`'s models, less those whose name (or an adapter's)
// the Services already serve: a Service's model wins. The names left out go to `shadowed`.
// Pure.
std::vector<gateway::ModelConfig> MergeRoutes(std::vector<gateway::ModelConfig> services,
                                              std::vector<gateway::ModelConfig> extra,
                                              std::vector<std::string>* shadowed);

// The delivery layer inside `strata up`. Each pass:
//  1. reads the Services and their replica pods and hands the gateway its routing table
//     (RoutesFromStore), so endpoints appear as replicas become ready and disappear as they
//     drain, with no configuration file;
//  2. takes one snapshot of the gateway's signals (arrivals, answers and late first tokens,
//     in-flight and held requests, each replica's scraped queue and KV usage);
//  3. runs the service controller with the gateway as its ReplicaTraffic (a drain ends with the
//     replica's last stream) and itself as the ReplicaScaler: one autoscaler target per service
//     version, fed a LoadSample built from the snapshot in-process, so a load step reaches a
//     decision at the next pass, not after a metrics pipeline's polling.
// strata_autoscaler_* metrics (desired and actual replicas, the signals) go to `registry`; the
// tokens each service served (the gateway's counts) go to `tokens` when given, for the cost
// endpoint's cost per million tokens.
//
// Owned by the control plane's loop that drives it; RunOnce from one thread at a time. The
// store, cache (as the service controller wants it), clock, gateway and registry must outlive
// it.
class ServingLoop final : public controller::ControlLoop,
                          private controller::ReplicaTraffic,
                          private controller::ReplicaScaler {
 public:
  ServingLoop(store::Store& store, cluster::Cache& cache, const Clock& clock,
              gateway::GatewayServer& gateway, metrics::Registry& registry,
              controller::ServiceControllerOptions options = {},
              ServiceTokenLedger* tokens = nullptr);

  Status RunOnce() override;

  // From now on, passes only route (step 1) unless `acting` says yes: a standby control plane's
  // gateway serves, the leader's loop decides. Called before the first RunOnce.
  void ActOnlyWhile(std::function<bool()> acting);

  // Step 1 also routes `source`'s models (MergeRoutes), read each pass; they are not
  // autoscaled (no Service owns their replicas). Called before the first RunOnce.
  void AddRouteSource(RouteSource source);

 private:
  // What a version's policy is built from (spec.autoscaling, minReplicas, maxReplicas): a change
  // to any of it rebuilds the policy.
  using ScalingSpec = std::tuple<api::Autoscaling, int64_t, int64_t>;
  struct Target {
    ScalingSpec scaling;            // the spec it was built from
    bool seen = false;              // advised during the current pass
    double cold_start_seconds = 0;  // the measured cold start the policy looks ahead by
  };

  int64_t InFlight(const std::string& endpoint) const override;
  controller::ScaleAdvice Advise(const api::Service& service, const api::ServiceVersion& version,
                                 const controller::VersionReplicas& replicas) override;
  autoscaler::LoadSample Sample(const api::Service& service, const api::ServiceVersion& version,
                                const controller::VersionReplicas& replicas) const;

  cluster::Cache& cache_;
  const Clock& clock_;
  gateway::GatewayServer& gateway_;
  ServiceTokenLedger* tokens_;
  std::function<bool()> acting_ = [] { return true; };
  RouteSource extra_routes_;           // empty: none
  std::vector<std::string> shadowed_;  // the extra models last left out, to warn once
  autoscaler::Autoscaler autoscaler_;
  controller::ServiceController controller_;
  std::vector<gateway::ModelConfig> routes_;  // the table last handed to the gateway
  std::vector<gateway::VersionSignals> signals_;
  std::map<autoscaler::TargetKey, Target> targets_;
};

}  // namespace strata::server
