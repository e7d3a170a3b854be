// Kubernetes apps/v1 Deployment and StatefulSet, decoded into a native Service.
//
// Why a Service: a Deployment's (or StatefulSet's) pods run until deleted (restartPolicy
// Always) and a failed one is replaced, forever; that is what a Service's replicas are, and what
// a Job's pods are not (a Job runs them once, to completion, and restarts the whole group at
// most maxRestarts times). Each replica is one pod (nodesPerReplica 1) running the template's one
// container as the Service's engine; replicas sets minReplicas and maxReplicas alike, so no
// autoscaler moves the count; the model clients name at the gateway is the object's name. The
// rollout bounds (a Deployment's maxSurge and maxUnavailable, a StatefulSet's maxUnavailable
// without a surge) become the Service's rollout. A StatefulSet adds its identity: pods named
// <name>-0, <name>-1 ... (ordinalNames), whose successor takes the same name, and, with
// podManagementPolicy OrderedReady (its default), one replica started at a time (orderedStart).
// As for every Service, a node with simulated GPUs runs engine-sim in the engine's place.
#include <algorithm>
#include <cmath>

#include "api/compat_schema.h"
#include "api/decode_common.h"
#include "api/kube_common.h"
#include "api/native_schema.h"

namespace strata::api {
namespace {

using T = FieldType;

const TypeSchema* LabelSelectorSchema() {
  static const TypeSchema s{
      "LabelSelector",
      "Which pods belong to the object: they must be the template's (Kubernetes' rule).",
      {{"matchLabels", T::kStringMap, "Labels the template's pods carry."},
       {"matchExpressions", T::kUnsupported,
        "strata checks the selector against the template's labels: give matchLabels"}}};
  return &s;
}

const TypeSchema* ReplicaPodTemplateMetadataSchema() {
  static const TypeSchema s{
      "PodTemplateMetadata",
      "Labels and annotations of a replica's pod template.",
      {{"name", T::kIgnored, "strata names the pods it creates"},
       {"labels", T::kStringMap, "Labels the pods carry (kueue.x-k8s.io/queue-name: the queue)."},
       {"annotations", T::kStringMap,
        "Kueue's topology requests (kueue.x-k8s.io/podset-required-topology or "
        "podset-preferred-topology: a node label key); other annotations are ignored, with a "
        "warning."}}};
  return &s;
}

const TypeSchema* DeploymentRollingUpdateSchema() {
  static const TypeSchema s{
      "RollingUpdateDeployment",
      "How far an update may go beyond or below the replica count.",
      {{"maxSurge", T::kIntOrString,
        "Pods beyond the count: a number or a percentage, rounded up (default 25%)."},
       {"maxUnavailable", T::kIntOrString,
        "Pods below the count: a number or a percentage, rounded down (default 25%)."}}};
  return &s;
}

const TypeSchema* DeploymentStrategySchema() {
  static const TypeSchema s{
      "DeploymentStrategy",
      "How pods of a new template replace the old ones.",
      {{"type",
        T::kEnum,
        "RollingUpdate (default) or Recreate (every old replica stops as the update begins; "
        "strata starts the new ones while the old ones stop).",
        nullptr,
        {"RollingUpdate", "Recreate"}},
       {"rollingUpdate", T::kObject, "The update's bounds.", DeploymentRollingUpdateSchema}}};
  return &s;
}

const TypeSchema* DeploymentSpecSchema() {
  static const TypeSchema s{
      "DeploymentSpec",
      "A Kubernetes Deployment; strata runs it as a Service of one-pod replicas.",
      {{.name = "replicas",
        .type = T::kNonNegativeInteger,
        .doc = "Pods (default 1); the Service's minReplicas and maxReplicas.",
        .maximum = kMaxServiceReplicas},
       {"selector", T::kObject, "The template's pods.", LabelSelectorSchema, {}, true},
       {"template", T::kObject, "The pod template.", ReplicaPodTemplateSchema, {}, true},
       {"strategy", T::kObject, "How an update replaces pods.", DeploymentStrategySchema},
       {"paused", T::kBool, "false only: strata rolls every update out."},
       {"minReadySeconds", T::kUnsupported,
        "a strata replica counts as available once its engine answers /health"},
       {"revisionHistoryLimit", T::kIgnored, "strata keeps no old ReplicaSets to roll back to"},
       {"progressDeadlineSeconds", T::kIgnored, "strata reports no rollout deadline"}}};
  return &s;
}

const TypeSchema* StatefulSetRollingUpdateSchema() {
  static const TypeSchema s{
      "RollingUpdateStatefulSetStrategy",
      "How many pods an update may stop at once.",
      {{"maxUnavailable", T::kIntOrString,
        "Pods stopped at once: a number or a percentage, rounded down, at least 1 (default 1)."},
       {"partition", T::kNonNegativeInteger,
        "0 only: strata updates every pod (a canary partition has no home yet)."}}};
  return &s;
}

const TypeSchema* StatefulSetUpdateStrategySchema() {
  static const TypeSchema s{
      "StatefulSetUpdateStrategy",
      "How pods of a new template replace the old ones.",
      {{"type",
        T::kEnum,
        "RollingUpdate (default): highest ordinal first, each successor under the same name.",
        nullptr,
        {"RollingUpdate", "OnDelete"}},
       {"rollingUpdate", T::kObject, "The update's bounds.", StatefulSetRollingUpdateSchema}}};
  return &s;
}

const TypeSchema* StatefulSetSpecSchema() {
  static const TypeSchema s{
      "StatefulSetSpec",
      "A Kubernetes StatefulSet; strata runs it as a Service whose pods are <name>-0, <name>-1 ...",
      {{.name = "replicas",
        .type = T::kNonNegativeInteger,
        .doc = "Pods (default 1); the Service's minReplicas and maxReplicas.",
        .maximum = kMaxServiceReplicas},
       {"selector", T::kObject, "The template's pods.", LabelSelectorSchema, {}, true},
       {"template", T::kObject, "The pod template.", ReplicaPodTemplateSchema, {}, true},
       {"podManagementPolicy",
        T::kEnum,
        "OrderedReady (default: one pod at a time, once the ones before it run) or Parallel.",
        nullptr,
        {"OrderedReady", "Parallel"}},
       {"updateStrategy", T::kObject, "How an update replaces pods.",
        StatefulSetUpdateStrategySchema},
       {"serviceName", T::kIgnored,
        "pods are reached at their node's address; strata makes no headless Service"},
       {"volumeClaimTemplates", T::kUnsupported,
        "strata has no persistent volumes; give the data's host path in the command"},
       {"persistentVolumeClaimRetentionPolicy", T::kIgnored, "strata has no persistent volumes"},
       {"ordinals", T::kUnsupported, "strata numbers a StatefulSet's pods from 0"},
       {"minReadySeconds", T::kUnsupported,
        "a strata replica counts as available once its engine answers /health"},
       {"revisionHistoryLimit", T::kIgnored, "strata keeps no old revisions to roll back to"}}};
  return &s;
}

// The Service common to both kinds: metadata (namespace "default" when none), replicas as a
// fixed count, the selector checked against the template, the template as the engine.
Service DecodeAppsService(const FieldView& doc, FieldErrors& errors) {
  Service service;
  service.metadata = DecodeMetadata(doc.Object("metadata"), true, true, errors);
  ServiceSpec& s = service.spec;
  s.queue = TakeQueueLabel(service.metadata);
  s.model = service.metadata.name;
  FieldView spec = doc.Object("spec");
  FieldView pod_template = spec.Object("template");
  std::map<std::string, std::string> template_labels;
  DecodeReplicaPodTemplate(pod_template, s, template_labels, errors);
  CheckSelector(spec.Object("selector"), template_labels,
                pod_template.Object("metadata").PathOf("labels"), errors);
  for (auto& [key, value] : template_labels) service.metadata.labels[key] = value;
  s.min_replicas = spec.Integer("replicas", 1);
  s.max_replicas = s.min_replicas;
  ApplyServiceDefaults(s, false, true);
  return service;
}

}  // namespace

const TypeSchema* ReplicaPodTemplateSchema() {
  static const TypeSchema s{
      "PodTemplateSpec",
      "A Kubernetes pod template whose pods run until deleted.",
      {{"metadata", T::kObject, "Labels and annotations.", ReplicaPodTemplateMetadataSchema},
       {"spec", T::kObject, "The pod spec.", KubePodSpecSchema, {}, true}}};
  return &s;
}

void DecodeReplicaPodTemplate(const FieldView& pod_template, ServiceSpec& out,
                              std::map<std::string, std::string>& labels, FieldErrors& errors) {
  FieldView metadata = pod_template.Object("metadata");
  labels = metadata.StringMap("labels");
  ValidateLabels(labels, metadata.PathOf("labels"), errors);
  auto queue = labels.find(std::string(kKueueQueueNameLabel));
  if (queue != labels.end()) {
    if (!out.queue.empty() && out.queue != queue->second) {
      errors.Add(KeyPath(metadata.PathOf("labels"), kKueueQueueNameLabel),
                 "names queue " + Quoted(queue->second) + " but the object's label names " +
                     Quoted(out.queue));
    }
    out.queue = queue->second;
    labels.erase(queue);
  }
  FieldView pod_spec = pod_template.Object("spec");
  if (pod_spec.String("restartPolicy", "Always") != "Always") {
    errors.Add(pod_spec.PathOf("restartPolicy"),
               "must be Always (Kubernetes' rule for pods that run until deleted)");
  }
  for (const char* field : {"nodeName", "priority"}) {
    if (pod_spec.Has(field)) {
      errors.Add(pod_spec.PathOf(field), "set per replica: strata places the replicas");
    }
  }
  KubeContainer container = FromSingleContainer(pod_spec, WorkloadClass::kService, errors,
                                                /*command_required=*/true,
                                                /*node_selector_honoured=*/true);
  out.engine = std::move(container.process);
  out.resources = container.resources;
  out.node_selector = std::move(container.node_selector);
  out.tolerations = DecodeTolerations(pod_spec, "tolerations");
  out.topology = TemplateTopology(pod_template, errors);
  if (pod_spec.Has("priorityClassName")) {
    out.priority = PriorityForClass(pod_spec.String("priorityClassName"),
                                    pod_spec.PathOf("priorityClassName"), errors)
                       .value_or(0);
  }
}

void CheckSelector(const FieldView& selector, const std::map<std::string, std::string>& labels,
                   const std::string& labels_path, FieldErrors& errors) {
  for (const auto& [key, value] : selector.StringMap("matchLabels")) {
    auto it = labels.find(key);
    if (it == labels.end() || it->second != value) {
      errors.Add(KeyPath(selector.PathOf("matchLabels"), key),
                 "selects " + Quoted(key + "=" + value) + " but " + labels_path +
                     " does not carry it (Kubernetes' rule: the selector selects the template's "
                     "pods)");
    }
  }
}

bool ZeroBound(const nlohmann::json& value) {
  return (value.is_number_integer() && value.get<int64_t>() == 0) ||
         (value.is_string() && value.get<std::string>() == "0%");
}

int64_t RolloutBound(const FieldView& parent, std::string_view field, std::string_view fallback,
                     int64_t replicas, bool round_up, FieldErrors& errors) {
  const nlohmann::json& raw = parent.Raw(field);
  if (raw.is_null() && fallback.back() != '%') return std::stoll(std::string(fallback));
  if (raw.is_number_integer()) {
    int64_t count = raw.get<int64_t>();
    if (count < 0) errors.Add(parent.PathOf(field), "must not be negative");
    return std::max<int64_t>(count, 0);
  }
  std::string text = raw.is_string() ? raw.get<std::string>() : std::string(fallback);
  int64_t percent = -1;
  if (text.size() >= 2 && text.size() <= 4 && text.back() == '%' &&
      text.find_first_not_of("0123456789") == text.size() - 1) {
    percent = std::stoll(text.substr(0, text.size() - 1));
  }
  if (percent < 0 || percent > 100) {
    errors.Add(parent.PathOf(field),
               "must be a number of pods or a percentage from 0% to 100%, got " + Quoted(text));
    return 0;
  }
  return round_up ? (replicas * percent + 99) / 100 : replicas * percent / 100;
}

const TypeSchema* DeploymentSchema() {
  static const TypeSchema s =
      CompatDocument("Deployment", "apps/v1", "A Kubernetes Deployment.", DeploymentSpecSchema);
  return &s;
}

void DecodeDeployment(const FieldView& doc, DecodedDocument& out) {
  FieldErrors& errors = out.errors;
  Service service = DecodeAppsService(doc, errors);
  ServiceSpec& s = service.spec;
  FieldView spec = doc.Object("spec");
  if (spec.Bool("paused", false)) {
    errors.Add(spec.PathOf("paused"), "strata rolls every update out; leave paused out");
  }
  FieldView strategy = spec.Object("strategy");
  if (strategy.String("type", "RollingUpdate") == "Recreate") {
    if (strategy.Has("rollingUpdate")) {
      errors.Add(strategy.PathOf("rollingUpdate"), "only with type RollingUpdate");
    }
    s.max_surge = 0;
    s.max_unavailable = std::max<int64_t>(1, s.min_replicas);
  } else {
    FieldView rolling = strategy.Object("rollingUpdate");
    if (ZeroBound(rolling.Raw("maxSurge")) && ZeroBound(rolling.Raw("maxUnavailable"))) {
      errors.Add(rolling.PathOf("maxUnavailable"),
                 "may not be 0 when maxSurge is 0 (Kubernetes' rule): no pod could be replaced");
    }
    s.max_surge = RolloutBound(rolling, "maxSurge", "25%", s.min_replicas, true, errors);
    s.max_unavailable =
        RolloutBound(rolling, "maxUnavailable", "25%", s.min_replicas, false, errors);
    // Kubernetes' rule when both round to 0 (10% of a few pods, say): one may be unavailable.
    if (s.max_surge == 0 && s.max_unavailable == 0) s.max_unavailable = 1;
  }
  out.objects.push_back(std::move(service));
}

const TypeSchema* StatefulSetSchema() {
  static const TypeSchema s =
      CompatDocument("StatefulSet", "apps/v1", "A Kubernetes StatefulSet.", StatefulSetSpecSchema);
  return &s;
}

void DecodeStatefulSet(const FieldView& doc, DecodedDocument& out) {
  FieldErrors& errors = out.errors;
  Service service = DecodeAppsService(doc, errors);
  ServiceSpec& s = service.spec;
  FieldView spec = doc.Object("spec");
  s.ordinal_names = true;
  s.ordered_start = spec.String("podManagementPolicy", "OrderedReady") == "OrderedReady";
  FieldView strategy = spec.Object("updateStrategy");
  if (strategy.String("type", "RollingUpdate") == "OnDelete") {
    errors.Add(strategy.PathOf("type"),
               "OnDelete: strata replaces the pods of an old template itself; use RollingUpdate");
  }
  FieldView rolling = strategy.Object("rollingUpdate");
  if (rolling.Integer("partition", 0) > 0) {
    errors.Add(rolling.PathOf("partition"),
               "strata updates every pod of a StatefulSet: a partition has no home yet");
  }
  // A StatefulSet never runs more pods than its count: its successor takes the old pod's name.
  s.max_surge = 0;
  s.max_unavailable = std::max<int64_t>(
      1, RolloutBound(rolling, "maxUnavailable", "1", s.min_replicas, false, errors));
  out.objects.push_back(std::move(service));
}

}  // namespace strata::api
