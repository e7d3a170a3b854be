#pragma once

#include <optional>
#include <string>
#include <vector>

#include "api/job.h"
#include "api/object_meta.h"
#include "api/workload.h"
#include "common/clock.h"

namespace strata::api {

// One version of a service's model; traffic splits across versions by weight. `engine`, when
// set, replaces the service's engine template for this version.
struct ServiceVersion {
  std::string name;
  int64_t weight = 100;
  std::optional<ProcessTemplate> engine;

  bool operator==(const ServiceVersion&) const = default;
};

// How the replica count follows load (Knative's shape). `metric`: concurrency (in-flight
// requests per replica), rps, queue (engine's waiting requests) or kvCache (KV-cache usage
// fraction). `scale_to_zero_after` 0 keeps at least minReplicas. The rates bound one decision's
// change as Knative's max-scale-up-rate and max-scale-down-rate do (at most current x up-rate,
// at least current / down-rate); the rps metric paces its own scale-down and takes neither.
struct Autoscaling {
  std::string metric = "concurrency";
  double target = 8;
  Duration stable_window = std::chrono::seconds(60);
  Duration panic_window = std::chrono::seconds(6);
  Duration scale_to_zero_after{0};
  double max_scale_up_rate = 1000;
  double max_scale_down_rate = 2;

  bool operator==(const Autoscaling&) const = default;
};

// A class of requests a client names in the x-gateway-inference-objective header (a GAIE
// InferenceObjective): the gateway gives such a request this priority in place of its tenant's
// (negative: sheddable, 0: standard, positive: critical).
struct ServiceObjective {
  std::string name;
  int64_t priority = 0;

  bool operator==(const ServiceObjective&) const = default;
};

struct ServiceSpec {
  std::string model;  // the name clients put in the request body's "model"
  std::vector<ServiceVersion> versions;
  ProcessTemplate engine;
  ResourceRequest resources;  // per pod; a replica spans nodes_per_replica pods
  GpuSelector gpu_selector;
  std::map<std::string, std::string> node_selector;  // node labels every replica pod's node carries
  std::vector<Toleration> tolerations;
  int64_t tensor_parallel = 1;
  int64_t nodes_per_replica = 1;
  int64_t min_replicas = 1;
  int64_t max_replicas = 1;
  Autoscaling autoscaling;
  std::vector<std::string> tenants;          // empty: every tenant
  std::vector<ServiceObjective> objectives;  // names unique
  std::string queue;
  int64_t priority = 0;
  // A rolling update's bounds, in replicas (Kubernetes' maxSurge and maxUnavailable): at most
  // max_surge replicas beyond the count, at most max_unavailable fewer ready than the count.
  int64_t max_surge = 1;
  int64_t max_unavailable = 0;
  // A replica spanning nodes whose rank 0 runs other processes than the rest (a
  // LeaderWorkerSet's leaderTemplate): rank 0 runs it in place of the engine.
  std::optional<ProcessTemplate> leader;
  TopologyConstraint topology;  // where each replica's pods must or should land together
  // A StatefulSet's identity: pods named "<service>-<index>" ("-<rank>" added when a replica
  // spans nodes) instead of "<service>-<version>-<index>".
  bool ordinal_names = false;
  // A StatefulSet's OrderedReady: one replica is created at a time, once every live replica's
  // pods run.
  bool ordered_start = false;

  bool operator==(const ServiceSpec&) const = default;
};

// What the service controller reports of one version of a service.
struct ServiceVersionStatus {
  std::string name;
  int64_t desired_replicas = 0;   // what the autoscaler (or minReplicas) asks for
  int64_t replicas = 0;           // replicas not being drained
  int64_t ready_replicas = 0;     // serving: readiness probe passed, not draining
  int64_t starting_replicas = 0;  // created, not yet ready
  int64_t draining_replicas = 0;  // finishing their streams before they stop
  int64_t updated_replicas = 0;   // not draining, running the current template
  std::string reason;             // why desired last changed, in the autoscaler's words

  bool operator==(const ServiceVersionStatus&) const = default;
};

// One change of a version's desired replica count, for `describe service`.
struct ScaleDecisionRecord {
  std::string time;  // RFC 3339
  std::string version;
  int64_t from = 0;
  int64_t to = 0;
  std::string reason;

  bool operator==(const ScaleDecisionRecord&) const = default;
};

// The status of a Service, which the service controller owns.
struct ServiceStatus {
  std::vector<ServiceVersionStatus> versions;
  std::vector<ScaleDecisionRecord> decisions;  // newest last, at most kMaxDecisions
  // Mean time from a replica's creation to its readiness, over the replicas seen becoming
  // ready (0: none yet). The autoscaler's forecast horizon.
  double cold_start_seconds = 0;
  int64_t cold_starts_measured = 0;

  static constexpr size_t kMaxDecisions = 20;

  bool operator==(const ServiceStatus&) const = default;

  // The status of version `name`, added when absent.
  ServiceVersionStatus& Version(const std::string& name);
  const ServiceVersionStatus* FindVersion(const std::string& name) const;
  // Appends `record`, dropping the oldest beyond kMaxDecisions.
  void Record(ScaleDecisionRecord record);
};

// An inference service: replicas of an engine behind the gateway. Namespaced.
struct Service {
  ObjectMeta metadata;
  ServiceSpec spec;
  ServiceStatus status;

  bool operator==(const Service&) const = default;
};

}  // namespace strata::api
