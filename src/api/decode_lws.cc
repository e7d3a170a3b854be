// LeaderWorkerSet (leaderworkerset.x-k8s.io/v1), decoded into a native Service whose replicas
// span nodes.
//
// Why a Service: an LWS group is one replica of a model server too big for one node (vLLM or
// SGLang across nodes): it runs until deleted and is replaced when it fails, as a Service's
// replica is. A Service's replica already has LWS's shape: nodesPerReplica pods placed as one
// gang (all of them or none, on as many nodes as they need), rank 0 the leader whose engine the
// gateway routes to, and LWS's environment (LWS_LEADER_ADDRESS, LWS_GROUP_SIZE,
// LWS_WORKER_INDEX) set by the node agent. So replicas (groups) become minReplicas =
// maxReplicas, size nodesPerReplica, the leaderTemplate's container what rank 0 runs
// (spec.leader) and the workerTemplate's the engine of the other ranks. restartPolicy
// RecreateGroupOnPodRestart is what the service controller does with a broken replica: every pod
// of the group stops and the group is created anew. The rollout's maxSurge and maxUnavailable
// (LWS's defaults 0 and 1) become the Service's rollout. The pods carry LWS's labels (name,
// group-index, worker-index), and the exclusive-topology annotation keeps each group's pods
// within one domain of that node label key (a Required topology).
#include "api/annotations.h"
#include "api/compat_schema.h"
#include "api/decode_common.h"
#include "api/kube_common.h"
#include "api/native_schema.h"

namespace strata::api {
namespace {

using T = FieldType;

constexpr std::string_view kExclusiveTopologyAnnotation =
    "leaderworkerset.sigs.k8s.io/exclusive-topology";

const TypeSchema* LeaderWorkerTemplateSchema() {
  static const TypeSchema s{
      "LeaderWorkerTemplate",
      "The pods of one group: a leader and size - 1 workers.",
      {{"leaderTemplate", T::kObject,
        "The leader's pod template (default: the worker's); only its container may differ.",
        ReplicaPodTemplateSchema},
       {"workerTemplate",
        T::kObject,
        "The workers' pod template.",
        ReplicaPodTemplateSchema,
        {},
        true},
       {.name = "size",
        .type = T::kNonNegativeInteger,
        .doc = "Pods per group, the leader included (default 1); the Service's nodesPerReplica.",
        .maximum = kMaxNodesPerReplica},
       {"restartPolicy",
        T::kEnum,
        "RecreateGroupOnPodRestart (default): a failed pod stops and recreates its whole group.",
        nullptr,
        {"RecreateGroupOnPodRestart", "RecreateGroupAfterStart", "Default", "None"}},
       {"subGroupPolicy", T::kUnsupported,
        "strata places a group as one gang and has no subgroups"},
       {"volumeClaimTemplates", T::kUnsupported,
        "strata has no persistent volumes; give the data's host path in the command"},
       {"persistentVolumeClaimRetentionPolicy", T::kIgnored, "strata has no persistent volumes"}}};
  return &s;
}

const TypeSchema* RollingUpdateConfigurationSchema() {
  static const TypeSchema s{
      "RollingUpdateConfiguration",
      "How far an update may go beyond or below the group count.",
      {{"maxSurge", T::kIntOrString,
        "Groups beyond the count: a number or a percentage, rounded up (default 0)."},
       {"maxUnavailable", T::kIntOrString,
        "Groups below the count: a number or a percentage, rounded down (default 1)."},
       {"partition", T::kNonNegativeInteger,
        "0 only: strata updates every group (a canary partition has no home yet)."}}};
  return &s;
}

const TypeSchema* RolloutStrategySchema() {
  static const TypeSchema s{
      "RolloutStrategy",
      "How groups of a new template replace the old ones.",
      {{"type", T::kEnum, "RollingUpdate (the only one).", nullptr, {"RollingUpdate"}},
       {"rollingUpdateConfiguration", T::kObject, "The update's bounds.",
        RollingUpdateConfigurationSchema}}};
  return &s;
}

const TypeSchema* LeaderWorkerSetSpecSchema() {
  static const TypeSchema s{
      "LeaderWorkerSetSpec",
      "Groups of a leader and workers; strata runs it as a Service whose replicas span nodes.",
      {{.name = "replicas",
        .type = T::kNonNegativeInteger,
        .doc = "Groups (default 1); the Service's minReplicas and maxReplicas.",
        .maximum = kMaxServiceReplicas},
       {"leaderWorkerTemplate",
        T::kObject,
        "The pods of one group.",
        LeaderWorkerTemplateSchema,
        {},
        true},
       {"rolloutStrategy", T::kObject, "How an update replaces groups.", RolloutStrategySchema},
       {"startupPolicy",
        T::kEnum,
        "LeaderCreated (default): strata starts a group's pods together.",
        nullptr,
        {"LeaderCreated", "LeaderReady"}},
       {"networkConfig", T::kIgnored,
        "pods are reached at their node's address (LWS_LEADER_ADDRESS); strata makes no headless "
        "Service"}}};
  return &s;
}

// Reports where the leader's template asks for what strata gives every pod of a group alike.
void CheckLeaderMatchesWorkers(const FieldView& leader_template, const ServiceSpec& leader,
                               const ServiceSpec& workers, FieldErrors& errors) {
  constexpr std::string_view kSame =
      "strata gives every pod of a group the same resources, node selector, tolerations, "
      "priority and topology: must equal the workerTemplate's";
  FieldView pod_spec = leader_template.Object("spec");
  if (leader.resources != workers.resources) {
    errors.Add(pod_spec.PathOf("containers") + "[0].resources", std::string(kSame));
  }
  if (leader.node_selector != workers.node_selector) {
    errors.Add(pod_spec.PathOf("nodeSelector"), std::string(kSame));
  }
  if (leader.tolerations != workers.tolerations) {
    errors.Add(pod_spec.PathOf("tolerations"), std::string(kSame));
  }
  if (leader.priority != workers.priority) {
    errors.Add(pod_spec.PathOf("priorityClassName"), std::string(kSame));
  }
  if (leader.topology != workers.topology) {
    errors.Add(leader_template.Object("metadata").PathOf("annotations"), std::string(kSame));
  }
}

}  // namespace

const TypeSchema* LeaderWorkerSetSchema() {
  static const TypeSchema s =
      CompatDocument("LeaderWorkerSet", "leaderworkerset.x-k8s.io/v1",
                     "A LeaderWorkerSet: replicas of a leader and workers across nodes.",
                     LeaderWorkerSetSpecSchema);
  return &s;
}

void DecodeLeaderWorkerSet(const FieldView& doc, DecodedDocument& out) {
  FieldErrors& errors = out.errors;
  Service service;
  FieldView metadata = doc.Object("metadata");
  service.metadata = DecodeMetadata(metadata, true, true, errors);
  ServiceSpec& s = service.spec;
  s.queue = TakeQueueLabel(service.metadata);
  s.model = service.metadata.name;
  FieldView spec = doc.Object("spec");
  FieldView lwt = spec.Object("leaderWorkerTemplate");

  std::map<std::string, std::string> labels;
  DecodeReplicaPodTemplate(lwt.Object("workerTemplate"), s, labels, errors);
  if (lwt.Has("leaderTemplate")) {
    FieldView leader_template = lwt.Object("leaderTemplate");
    ServiceSpec leader;
    leader.queue = s.queue;
    std::map<std::string, std::string> leader_labels;
    DecodeReplicaPodTemplate(leader_template, leader, leader_labels, errors);
    CheckLeaderMatchesWorkers(leader_template, leader, s, errors);
    for (const auto& [key, value] : leader_labels) {
      auto it = labels.find(key);
      if (it == labels.end() || it->second != value) {
        errors.Warn(KeyPath(leader_template.Object("metadata").PathOf("labels"), key),
                    "ignored: every pod of a group carries the workerTemplate's labels (and "
                    "leaderworkerset.sigs.k8s.io/worker-index 0 marks the leader)");
      }
    }
    if (s.queue.empty()) s.queue = leader.queue;
    s.leader = std::move(leader.engine);
  }
  for (const auto& [key, value] : labels) service.metadata.labels[key] = value;
  service.metadata.labels[kLwsNameLabel] = service.metadata.name;

  s.nodes_per_replica = std::max<int64_t>(1, lwt.Integer("size", 1));
  if (lwt.Has("size") && lwt.Integer("size", 1) < 1) {
    errors.Add(lwt.PathOf("size"), "must be at least 1 (the leader)");
  }
  std::string restart = lwt.String("restartPolicy", "RecreateGroupOnPodRestart");
  if (restart != "RecreateGroupOnPodRestart") {
    errors.Add(lwt.PathOf("restartPolicy"),
               Quoted(restart) +
                   ": strata stops and recreates a whole group as soon as any of its pods "
                   "fails (RecreateGroupOnPodRestart); restarting a pod alone has no home yet");
  }
  if (spec.String("startupPolicy", "LeaderCreated") == "LeaderReady") {
    errors.Add(spec.PathOf("startupPolicy"),
               "LeaderReady: strata starts a group's pods together; use LeaderCreated");
  }

  s.min_replicas = spec.Integer("replicas", 1);
  s.max_replicas = s.min_replicas;
  FieldView rolling = spec.Object("rolloutStrategy").Object("rollingUpdateConfiguration");
  if (rolling.Integer("partition", 0) > 0) {
    errors.Add(rolling.PathOf("partition"),
               "strata updates every group: a partition has no home yet");
  }
  // LWS's defaults: no surge, one group unavailable.
  const nlohmann::json& surge = rolling.Raw("maxSurge");
  if ((surge.is_null() || ZeroBound(surge)) && ZeroBound(rolling.Raw("maxUnavailable"))) {
    errors.Add(rolling.PathOf("maxUnavailable"),
               "may not be 0 when maxSurge is 0: no group could be replaced");
  }
  s.max_surge = RolloutBound(rolling, "maxSurge", "0", s.min_replicas, true, errors);
  s.max_unavailable = RolloutBound(rolling, "maxUnavailable", "1", s.min_replicas, false, errors);
  if (s.max_surge == 0 && s.max_unavailable == 0) s.max_unavailable = 1;  // both rounded to 0

  auto exclusive = service.metadata.annotations.find(std::string(kExclusiveTopologyAnnotation));
  if (exclusive != service.metadata.annotations.end()) {
    std::string path = KeyPath(metadata.PathOf("annotations"), kExclusiveTopologyAnnotation);
    if (exclusive->second.empty()) {
      errors.Add(path, "must name a node label key");
    } else if (s.min_replicas > 1) {
      errors.Add(path,
                 "strata keeps each group within one domain but may place two groups in the "
                 "same one: exclusive placement needs replicas 1, got " +
                     std::to_string(s.min_replicas));
    } else if (!s.topology.level.empty() &&
               (s.topology.level != exclusive->second || s.topology.mode != "Required")) {
      errors.Add(path, "contradicts the pod template's Kueue topology annotation");
    }
    s.topology = {exclusive->second, "Required"};
    service.metadata.annotations.erase(exclusive);
  }
  ApplyServiceDefaults(s, false, true);
  out.objects.push_back(std::move(service));
}

}  // namespace strata::api
