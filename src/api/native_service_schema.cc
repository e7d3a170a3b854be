// The field tables of strata's Service kind (native_schema.h): its versions, autoscaling,
// objectives, rollout and spec.
#include "api/native_schema.h"
#include "api/validation.h"

namespace strata::api {
namespace {

using T = FieldType;

const TypeSchema* ServiceVersionSchema() {
  static const TypeSchema s{
      "ServiceVersion",
      "One version of the model; traffic splits across versions by weight.",
      {{"name",
        T::kString,
        "The version's name (header x-strata-version pins it).",
        nullptr,
        {},
        true},
       {"weight", T::kNonNegativeInteger, "Relative share of traffic (default 100)."},
       {"engine", T::kObject, "Replaces the service's engine for this version.",
        ProcessTemplateSchema}}};
  return &s;
}

const TypeSchema* AutoscalingSchema() {
  static const TypeSchema s{
      "Autoscaling",
      "How the replica count follows load.",
      {{"metric",
        T::kEnum,
        "concurrency (in-flight requests per replica; default), rps, queue (engine's waiting "
        "requests) or kvCache (KV-cache usage, 0..1).",
        nullptr,
        {"concurrency", "rps", "queue", "kvCache"}},
       {"target", T::kNumber, "The per-replica value of the metric to aim at (default 8)."},
       {"stableWindow", T::kDuration, "Window the load is averaged over (default 60s)."},
       {"panicWindow", T::kDuration, "Short window that scales up fast on bursts (default 6s)."},
       {"scaleToZeroAfter", T::kDuration,
        "Idle time after which the service scales to zero; requires minReplicas 0."},
       {"maxScaleUpRate", T::kNumber,
        "One decision asks for at most this many times the current replicas (default 1000; "
        "above 1; not with rps)."},
       {"maxScaleDownRate", T::kNumber,
        "One decision keeps at least the current replicas divided by this (default 2; above 1; "
        "not with rps)."}}};
  return &s;
}

const TypeSchema* ServiceObjectiveSchema() {
  static const TypeSchema s{
      "ServiceObjective",
      "A class of requests named in the x-gateway-inference-objective header.",
      {{"name", T::kString, "What clients put in the header.", nullptr, {}, true},
       {"priority", T::kInteger,
        "The requests' priority in place of their tenant's: negative sheddable, 0 standard, "
        "positive critical (default 0)."}}};
  return &s;
}

const TypeSchema* RolloutSchema() {
  static const TypeSchema s{
      "Rollout",
      "A rolling update's bounds, in replicas; they may not both be 0.",
      {{.name = "maxSurge",
        .type = T::kNonNegativeInteger,
        .doc = "Replicas of the new template started beyond the count (default 1).",
        .maximum = kMaxServiceReplicas},
       {.name = "maxUnavailable",
        .type = T::kNonNegativeInteger,
        .doc = "Ready replicas that may be stopped before their successors are ready (default 0).",
        .maximum = kMaxServiceReplicas}}};
  return &s;
}
}  // namespace

const TypeSchema* ServiceSpecSchema() {
  static const TypeSchema s{
      "ServiceSpec",
      "The model served, its engine and how it scales.",
      {{"model", T::kString, "The name clients put in the request's \"model\".", nullptr, {}, true},
       {"versions", T::kObjectList, "Versions and their traffic weights (default: one, v1).",
        ServiceVersionSchema},
       {"engine",
        T::kObject,
        "The engine process each replica runs.",
        ProcessTemplateSchema,
        {},
        true},
       {"resources", T::kObject, "What each pod of a replica needs.", ResourceRequestSchema},
       {"gpuSelector", T::kObject, "Which GPUs the service accepts.", GpuSelectorSchema},
       {"nodeSelector", T::kStringMap, "Labels the node of every replica's pods must carry."},
       {"tolerations", T::kObjectList, "Node taints the replicas tolerate.", TolerationSchema},
       {"tensorParallel", T::kNonNegativeInteger,
        "Tensor-parallel size (default: the replica's whole GPUs, or 1)."},
       {.name = "nodesPerReplica",
        .type = T::kNonNegativeInteger,
        .doc = "Pods (nodes) one replica spans, placed as a gang (default 1).",
        .maximum = kMaxNodesPerReplica},
       {.name = "minReplicas",
        .type = T::kNonNegativeInteger,
        .doc = "Fewest replicas (default 1; 0 allows scale to zero).",
        .maximum = kMaxServiceReplicas},
       {.name = "maxReplicas",
        .type = T::kNonNegativeInteger,
        .doc = "Most replicas (default: minReplicas, at least 1).",
        .maximum = kMaxServiceReplicas},
       {"autoscaling", T::kObject, "How the replica count follows load.", AutoscalingSchema},
       {"tenants", T::kStringList, "Tenants allowed to call the service (empty: all)."},
       {"objectives", T::kObjectList,
        "Request classes clients name in the x-gateway-inference-objective header (GAIE's "
        "InferenceObjectives), each with the priority its requests get at the gateway.",
        ServiceObjectiveSchema},
       {"queue", T::kString, "The Queue (or LocalQueue name) that admits the replicas."},
       {"priority", T::kInteger, "Scheduling priority of the replicas (default 0)."},
       {"rollout", T::kObject, "How far a rolling update may go beyond or below the count.",
        RolloutSchema},
       {"leader", T::kObject,
        "What rank 0 of a replica runs in place of the engine (default: the engine).",
        ProcessTemplateSchema},
       {"topology", T::kObject, "Where each replica's pods must or should land together.",
        TopologySchema},
       {"ordinalNames", T::kBool,
        "true: pods are named <service>-<index> (-<rank> when a replica spans nodes), as a "
        "StatefulSet's."},
       {"orderedStart", T::kBool,
        "true: one replica is created at a time, once the pods of every live replica run."}}};
  return &s;
}

}  // namespace strata::api
