// KEDA's keda.sh/v1alpha1 ScaledObject: the autoscaling of the Deployment, StatefulSet or
// LeaderWorkerSet it targets, when its one trigger is Prometheus' on a vLLM engine metric.
//
// Why a link and not an object: strata's autoscaler reads the engines' own signals (vLLM's
// metric names) in-process every second, so a ScaledObject has nothing to run; what it decides
// is its target's replica bounds and the metric and per-replica target they follow. KEDA's
// threshold with its default metricType AverageValue is the HPA's per-replica average, which is
// what a Service's autoscaling.target means:
//   vllm:num_requests_waiting                       -> metric queue (waiting requests)
//   vllm:num_requests_running (+ waiting)           -> metric concurrency (in-flight requests)
//   vllm:gpu_cache_usage_perc, vllm:kv_cache_usage_perc -> metric kvCache (a fraction)
//   rate(vllm:request_success_total[...])           -> metric rps
// minReplicaCount (KEDA's default 0) and maxReplicaCount (100) become min/maxReplicas, and with
// a minimum of 0 cooldownPeriod (300 s) is how long an idle service waits before scaling to zero.
#include <cmath>
#include <set>

#include "api/compat_schema.h"
#include "api/decode_common.h"
#include "api/kinds.h"
#include "api/kube_common.h"
#include "api/native_schema.h"
#include "api/validation.h"

namespace strata::api {
namespace {

using T = FieldType;

constexpr std::string_view kMetricsStrataReads =
    "vllm:num_requests_waiting, vllm:num_requests_running, vllm:gpu_cache_usage_perc, "
    "vllm:kv_cache_usage_perc or rate(vllm:request_success_total[...])";

const TypeSchema* ScaleTargetRefSchema() {
  static const TypeSchema s{
      "ScaleTargetRef",
      "The workload to scale: a Deployment, StatefulSet or LeaderWorkerSet among the same "
      "manifests.",
      {{"apiVersion", T::kString, "apps/v1 or leaderworkerset.x-k8s.io/v1 (checked by kind)."},
       {"kind",
        T::kEnum,
        "Deployment (default), StatefulSet or LeaderWorkerSet.",
        nullptr,
        {"Deployment", "StatefulSet", "LeaderWorkerSet"}},
       {"name",
        T::kString,
        "The target's name, in the ScaledObject's namespace.",
        nullptr,
        {},
        true},
       {"envSourceContainerName", T::kIgnored,
        "strata's triggers read no environment of the target"}}};
  return &s;
}

const TypeSchema* AuthenticationRefSchema() {
  static const TypeSchema s{"AuthenticationRef",
                            "KEDA's credentials for the metrics source.",
                            {{"name", T::kString, "A TriggerAuthentication."},
                             {"kind", T::kString, "TriggerAuthentication or its cluster kind."}}};
  return &s;
}

const TypeSchema* TriggerSchema() {
  static const TypeSchema s{
      "ScaleTrigger",
      "What the target scales on: Prometheus' query of one vLLM engine metric.",
      {{"type",
        T::kString,
        "prometheus (strata reads the engines' vLLM metrics itself).",
        nullptr,
        {},
        true},
       {"name", T::kString, "The trigger's name."},
       {"metadata",
        T::kStringMap,
        "query (PromQL naming one vLLM metric), threshold (per replica), activationThreshold "
        "(0 only), serverAddress and the connection settings (ignored: strata reads the engines "
        "directly).",
        nullptr,
        {},
        true},
       {"metricType",
        T::kEnum,
        "AverageValue (default: threshold per replica); Value and Utilization are not read.",
        nullptr,
        {"AverageValue", "Value", "Utilization"}},
       {"authenticationRef", T::kIgnored,
        "strata reads the engines' metrics itself and needs no credentials for Prometheus",
        AuthenticationRefSchema},
       {"useCachedMetrics", T::kIgnored, "strata reads signals in-process, without a cache"}}};
  return &s;
}

const TypeSchema* ScaledObjectSpecSchema() {
  static const TypeSchema s{
      "ScaledObjectSpec",
      "How the target's replica count follows its engines' load.",
      {{"scaleTargetRef", T::kObject, ScaleTargetRefSchema()->doc, ScaleTargetRefSchema, {}, true},
       {"minReplicaCount", T::kNonNegativeInteger, "Fewest replicas (KEDA's default 0)."},
       {"maxReplicaCount", T::kNonNegativeInteger, "Most replicas (KEDA's default 100)."},
       {"cooldownPeriod", T::kNonNegativeInteger,
        "Seconds without load before scaling to zero, with minReplicaCount 0 (default 300)."},
       {"pollingInterval", T::kIgnored,
        "strata reads the engines' signals every second instead of polling a metrics server"},
       {"initialCooldownPeriod", T::kUnsupported,
        "strata does not delay the first scale-down to zero; leave it out"},
       {"idleReplicaCount", T::kUnsupported,
        "strata scales between zero and minReplicaCount by load alone; give minReplicaCount"},
       {"fallback", T::kUnsupported,
        "strata reads the engines directly, with no metrics source to lose; leave it out"},
       {"advanced", T::kUnsupported,
        "strata's autoscaler has its own stable and panic windows (a Service's "
        "spec.autoscaling); the HPA's behavior and scaling modifiers are not read"},
       {"triggers", T::kObjectList, TriggerSchema()->doc, TriggerSchema, {}, true}}};
  return &s;
}

// Every vllm:* metric name in a PromQL query.
std::set<std::string> VllmMetrics(std::string_view query) {
  std::set<std::string> names;
  constexpr std::string_view kPrefix = "vllm:";
  for (size_t at = query.find(kPrefix); at != std::string_view::npos;
       at = query.find(kPrefix, at + 1)) {
    size_t end = at + kPrefix.size();
    while (end < query.size() && (std::isalnum(static_cast<unsigned char>(query[end])) ||
                                  query[end] == '_' || query[end] == ':')) {
      ++end;
    }
    names.insert(std::string(query.substr(at, end - at)));
  }
  return names;
}

// The Service metric a query's vLLM metrics stand for, or empty after reporting why not.
std::string MetricOfQuery(const std::string& query, const std::string& path, FieldErrors& errors) {
  const std::set<std::string> names = VllmMetrics(query);
  const std::set<std::string> waiting{"vllm:num_requests_waiting"};
  const std::set<std::string> running{"vllm:num_requests_running"};
  const std::set<std::string> in_flight{"vllm:num_requests_running", "vllm:num_requests_waiting"};
  if (names == waiting) return "queue";
  if (names == running || names == in_flight) {
    if (names == running) {
      errors.Warn(path,
                  "strata's concurrency metric counts every in-flight request, waiting ones too "
                  "(vllm:num_requests_running + vllm:num_requests_waiting)");
    }
    return "concurrency";
  }
  if (names == std::set<std::string>{"vllm:gpu_cache_usage_perc"} ||
      names == std::set<std::string>{"vllm:kv_cache_usage_perc"}) {
    return "kvCache";
  }
  if (names == std::set<std::string>{"vllm:request_success_total"} &&
      query.find("rate(") != std::string::npos) {
    return "rps";
  }
  std::string found;
  for (const std::string& name : names) found += (found.empty() ? "" : ", ") + name;
  errors.Add(path, (names.empty() ? "names no vLLM metric"
                                  : "names " + found + ", which strata does not scale on") +
                       "; strata scales a service on one of " + std::string(kMetricsStrataReads));
  return "";
}

std::optional<double> PositiveNumber(const std::string& text) {
  try {
    size_t used = 0;
    double value = std::stod(text, &used);
    if (used != text.size() || !(value > 0) || !std::isfinite(value)) return std::nullopt;
    return value;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

void DecodeTrigger(const FieldView& trigger, ScaledObjectLink& link, FieldErrors& errors) {
  const std::string type = trigger.String("type");
  if (type != "prometheus") {
    errors.Add(trigger.PathOf("type"),
               Quoted(type) +
                   ": strata scales services on their engines' signals; give a prometheus "
                   "trigger whose query names " +
                   std::string(kMetricsStrataReads));
    return;
  }
  const std::string metric_type = trigger.String("metricType", "AverageValue");
  if (metric_type != "AverageValue") {
    errors.Add(trigger.PathOf("metricType"),
               Quoted(metric_type) + ": strata's target is per replica (AverageValue)");
  }
  const std::string meta_path = trigger.PathOf("metadata");
  std::map<std::string, std::string> metadata = trigger.StringMap("metadata");
  static const std::set<std::string> kConnection{
      "serverAddress", "namespace",        "unsafeSsl",       "ignoreNullValues", "authModes",
      "customHeaders", "timeout",          "queryParameters", "cortexOrgID",      "awsRegion",
      "identityOwner", "customAuthHeader", "customAuthValue"};
  for (const auto& [key, value] : metadata) {
    if (key == "query" || key == "threshold" || key == "activationThreshold") continue;
    if (kConnection.count(key) > 0) {
      errors.Warn(KeyPath(meta_path, key),
                  "ignored: strata reads the engines' metrics itself, not through Prometheus");
    } else {
      errors.Add(KeyPath(meta_path, key), "unknown prometheus trigger setting");
    }
  }
  auto query = metadata.find("query");
  if (query == metadata.end()) {
    errors.Add(KeyPath(meta_path, "query"), "required field is missing");
  } else {
    link.autoscaling.metric = MetricOfQuery(query->second, KeyPath(meta_path, "query"), errors);
  }
  auto threshold = metadata.find("threshold");
  if (threshold == metadata.end()) {
    errors.Add(KeyPath(meta_path, "threshold"), "required field is missing");
  } else if (std::optional<double> value = PositiveNumber(threshold->second)) {
    link.autoscaling.target = *value;
    if (link.autoscaling.metric == "kvCache" && *value > 1) {
      errors.Add(KeyPath(meta_path, "threshold"),
                 "the KV-cache usage is a fraction: at most 1, got " + threshold->second);
    }
  } else {
    errors.Add(KeyPath(meta_path, "threshold"),
               "expected a number > 0, got " + Quoted(threshold->second));
  }
  auto activation = metadata.find("activationThreshold");
  if (activation != metadata.end() && activation->second != "0") {
    errors.Add(KeyPath(meta_path, "activationThreshold"),
               Quoted(activation->second) +
                   ": strata wakes a service scaled to zero on its first request (0 only)");
  }
}

}  // namespace

const TypeSchema* ScaledObjectSchema() {
  static const TypeSchema s = CompatDocument("ScaledObject", "keda.sh/v1alpha1",
                                             "A KEDA scaled object.", ScaledObjectSpecSchema);
  return &s;
}

void DecodeScaledObject(const FieldView& doc, DecodedDocument& out) {
  ObjectMeta meta = DecodeMetadata(doc.Object("metadata"), true, false, out.errors);
  FieldView spec = doc.Object("spec");
  ScaledObjectLink link;
  link.namespace_name = meta.namespace_name;
  link.name = meta.name;
  FieldView target = spec.Object("scaleTargetRef");
  link.target_kind = target.String("kind", "Deployment");
  link.target_name = target.String("name");
  link.min_replicas = spec.Integer("minReplicaCount", 0);
  link.max_replicas = spec.Integer("maxReplicaCount", 100);
  if (link.max_replicas < 1) {
    out.errors.Add(spec.PathOf("maxReplicaCount"), "must be at least 1");
  } else if (link.max_replicas > kMaxServiceReplicas) {
    out.errors.Add(spec.PathOf("maxReplicaCount"), std::to_string(link.max_replicas) +
                                                       " exceeds the limit of " +
                                                       std::to_string(kMaxServiceReplicas));
  } else if (link.min_replicas > link.max_replicas) {
    out.errors.Add(spec.PathOf("minReplicaCount"), std::to_string(link.min_replicas) +
                                                       " is more than maxReplicaCount " +
                                                       std::to_string(link.max_replicas));
  }
  if (link.min_replicas == 0) {
    link.autoscaling.scale_to_zero_after =
        std::chrono::seconds(spec.Integer("cooldownPeriod", 300));
  }
  std::vector<FieldView> triggers = spec.ObjectList("triggers");
  if (triggers.size() != 1) {
    out.errors.Add(spec.PathOf("triggers"),
                   "strata follows one trigger, got " + std::to_string(triggers.size()));
  } else {
    DecodeTrigger(triggers[0], link, out.errors);
  }
  out.scaled_object = std::move(link);
}

}  // namespace strata::api
