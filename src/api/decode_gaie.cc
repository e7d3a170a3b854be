// The Gateway API Inference Extension's kinds: inference.networking.k8s.io/v1 InferencePool and
// inference.networking.x-k8s.io/v1alpha2 InferenceObjective.
//
// Where they live in the object model: folded into the Services they select, as links (the way
// KEDA's ScaledObject and Kueue's LocalQueue are), not stored as kinds of their own. A pool says
// which pods serve which model behind the gateway; in strata a Service already is exactly that
// (its model, its replicas, the gateway's routes to them), and strata's gateway is itself the
// endpoint picker, so a stored pool would be a second home for the Service's routing with nothing
// to run. What a pool changes is folded into each Service it selects: the Deployments,
// StatefulSets and LeaderWorkerSets among the same manifests whose pod template labels match
// spec.selector.matchLabels (in the pool's namespace) serve, under GAIE's rule, the model names
// their vLLM engines answer to (VllmServedModelNames), so each becomes its Service's model. An
// objective becomes an entry of spec.objectives of every Service its pool selects: a request
// naming it in the x-gateway-inference-objective header gets its priority at the gateway.
//
// Field rule: endpointPickerRef and its failureMode are warnings (strata's gateway picks the
// endpoints; there is no extension to call or to fail), as is targetPorts (each replica's engine
// port is strata's when pods run as local processes); anything else not in the API is an error.
#include "api/compat_schema.h"
#include "api/decode_common.h"
#include "api/kinds.h"
#include "api/kube_common.h"

namespace strata::api {
namespace {

using T = FieldType;

constexpr std::string_view kPoolGroup = "inference.networking.k8s.io";

const TypeSchema* PoolSelectorSchema() {
  static const TypeSchema s{
      "InferencePoolSelector",
      "Which pods are members of the pool, by their labels, in the pool's namespace.",
      {{"matchLabels", T::kStringMap, "Labels every member pod carries.", nullptr, {}, true}}};
  return &s;
}

const TypeSchema* PortSchema() {
  static const TypeSchema s{"Port",
                            "A port number.",
                            {{.name = "number",
                              .type = T::kNonNegativeInteger,
                              .doc = "1 to 65535.",
                              .required = true,
                              .maximum = 65535}}};
  return &s;
}

const TypeSchema* EndpointPickerRefSchema() {
  static const TypeSchema s{
      "EndpointPickerRef",
      "The endpoint picker extension (EPP) a gateway would call; strata's gateway is the picker.",
      {{"group", T::kString, "The referent's API group (default the core group)."},
       {"kind", T::kString, "The referent's kind (default Service)."},
       {"name", T::kString, "The referent's name.", nullptr, {}, true},
       {"port", T::kObject, "The picker Service's port (required for a Service).", PortSchema},
       {"failureMode",
        T::kEnum,
        "FailClose (default) or FailOpen: what a gateway does when the picker does not answer.",
        nullptr,
        {"FailOpen", "FailClose"}}}};
  return &s;
}

const TypeSchema* InferencePoolSpecSchema() {
  static const TypeSchema s{
      "InferencePoolSpec",
      "The model server pods of the pool and how a gateway picks among them.",
      {{"selector", T::kObject, PoolSelectorSchema()->doc, PoolSelectorSchema, {}, true},
       {"targetPorts",
        T::kObjectList,
        "The one port the member pods serve on.",
        PortSchema,
        {},
        true},
       {"endpointPickerRef",
        T::kObject,
        EndpointPickerRefSchema()->doc,
        EndpointPickerRefSchema,
        {},
        true}}};
  return &s;
}

const TypeSchema* PoolRefSchema() {
  static const TypeSchema s{
      "PoolObjectReference",
      "The InferencePool the objective applies to, in the objective's namespace.",
      {{"group", T::kString, "inference.networking.k8s.io (the default)."},
       {"kind", T::kString, "InferencePool (the default)."},
       {"name", T::kString, "The pool's name.", nullptr, {}, true}}};
  return &s;
}

const TypeSchema* InferenceObjectiveSpecSchema() {
  static const TypeSchema s{
      "InferenceObjectiveSpec",
      "How the gateway treats requests that name the objective.",
      {{"priority", T::kInteger,
        "Their priority (default 0): negative is sheddable (refused first when the gateway "
        "is saturated), 0 standard, positive critical."},
       {"poolRef", T::kObject, PoolRefSchema()->doc, PoolRefSchema, {}, true}}};
  return &s;
}

}  // namespace

const TypeSchema* InferencePoolSchema() {
  static const TypeSchema s = CompatDocument(
      "InferencePool", "inference.networking.k8s.io/v1",
      "A Gateway API Inference Extension pool of model servers.", InferencePoolSpecSchema);
  return &s;
}

void DecodeInferencePool(const FieldView& doc, DecodedDocument& out) {
  ObjectMeta meta = DecodeMetadata(doc.Object("metadata"), true, false, out.errors);
  FieldView spec = doc.Object("spec");
  InferencePoolLink link;
  link.namespace_name = meta.namespace_name;
  link.name = meta.name;
  FieldView selector = spec.Object("selector");
  link.match_labels = selector.StringMap("matchLabels");
  if (link.match_labels.empty()) {
    out.errors.Add(selector.PathOf("matchLabels"), "must name at least one label");
  }
  std::vector<FieldView> ports = spec.ObjectList("targetPorts");
  if (ports.size() != 1) {
    out.errors.Add(spec.PathOf("targetPorts"),
                   "the API allows exactly one port, got " + std::to_string(ports.size()));
  } else if (ports[0].Integer("number", 0) < 1) {
    out.errors.Add(ports[0].PathOf("number"), "must be 1 to 65535");
  } else {
    out.errors.Warn(spec.PathOf("targetPorts"),
                    "ignored: strata's gateway routes to the port each replica's engine listens "
                    "on, which strata gives it when pods run as local processes");
  }
  FieldView picker = spec.Object("endpointPickerRef");
  if (picker.String("kind", "Service") == "Service" && !picker.Has("port")) {
    out.errors.Add(picker.PathOf("port"), "required when kind is Service");
  }
  out.errors.Warn(spec.PathOf("endpointPickerRef"),
                  "ignored: strata's gateway is the endpoint picker (queue, KV-cache and prefix "
                  "scorers over its own replicas); " +
                      Quoted(picker.String("name")) + " is not called");
  if (picker.Has("failureMode")) {
    out.errors.Warn(picker.PathOf("failureMode"),
                    "ignored: with no picker extension to call there is none to fail");
  }
  out.inference_pool = std::move(link);
}

const TypeSchema* InferenceObjectiveSchema() {
  static const TypeSchema s =
      CompatDocument("InferenceObjective", "inference.networking.x-k8s.io/v1alpha2",
                     "A Gateway API Inference Extension objective (a request priority).",
                     InferenceObjectiveSpecSchema);
  return &s;
}

void DecodeInferenceObjective(const FieldView& doc, DecodedDocument& out) {
  ObjectMeta meta = DecodeMetadata(doc.Object("metadata"), true, false, out.errors);
  FieldView spec = doc.Object("spec");
  InferenceObjectiveLink link;
  link.namespace_name = meta.namespace_name;
  link.name = meta.name;
  link.priority = spec.Integer("priority", 0);
  FieldView pool = spec.Object("poolRef");
  const std::string group = pool.String("group", std::string(kPoolGroup));
  if (group != kPoolGroup) {
    out.errors.Add(pool.PathOf("group"),
                   Quoted(group) + ": strata reads pools of " + std::string(kPoolGroup) + " only");
  }
  const std::string kind = pool.String("kind", "InferencePool");
  if (kind != "InferencePool") {
    out.errors.Add(pool.PathOf("kind"),
                   Quoted(kind) + ": an objective applies to an InferencePool");
  }
  link.pool_name = pool.String("name");
  out.inference_objective = std::move(link);
}

}  // namespace strata::api
