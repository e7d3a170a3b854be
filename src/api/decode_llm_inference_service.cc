// KServe's LLMInferenceService (serving.kserve.io v1alpha1 and v1alpha2, one shape), decoded
// into a native Service that runs vLLM behind strata's gateway: model.uri and model.name give
// `vllm serve`'s model and served name, parallelism its parallel sizes, replicas the replica
// count, a worker a replica that spans several nodes, and the router strata's own gateway.
#include "api/compat_schema.h"
#include "api/decode_common.h"
#include "api/kube_common.h"
#include "api/native_schema.h"

namespace strata::api {
namespace {

using T = FieldType;

constexpr std::string_view kGatewayRoutes =
    "strata's gateway routes requests by their model name to the service's replicas";
constexpr std::string_view kGatewayPicks =
    "strata's gateway picks replicas itself, in-process (queue, KV cache, prefix affinity)";

const TypeSchema* LoraAdapterSchema() {
  static const TypeSchema s{
      "LoRAAdapter",
      "A LoRA adapter vLLM loads beside the model.",
      {{"uri", T::kString, "hf://org/adapter, file:///path or /path.", nullptr, {}, true},
       {"name", T::kString, "The name clients give as the model to use it.", nullptr, {}, true}}};
  return &s;
}

const TypeSchema* LoraSchema() {
  static const TypeSchema s{
      "LoRASpec",
      "LoRA adapters.",
      {{"adapters", T::kObjectList, "The adapters (vLLM's --lora-modules).", LoraAdapterSchema}}};
  return &s;
}

const TypeSchema* LLMModelSchema() {
  static const TypeSchema s{
      "LLMModelSpec",
      "The model to serve.",
      {{"uri", T::kString, "hf://org/model, file:///path or /path.", nullptr, {}, true},
       {"name", T::kString, "The model name clients put in requests (default metadata.name)."},
       {"lora", T::kObject, "LoRA adapters served beside the model.", LoraSchema},
       {"criticality", T::kUnsupported,
        "strata sheds requests by tenant priority: give the Tenant a priority"}}};
  return &s;
}

const TypeSchema* ParallelismSchema() {
  static const TypeSchema s{
      "ParallelismSpec",
      "vLLM's parallel sizes.",
      {{"tensor", T::kNonNegativeInteger, "Tensor-parallel size (--tensor-parallel-size)."},
       {"pipeline", T::kNonNegativeInteger, "Pipeline-parallel size (--pipeline-parallel-size)."},
       {"data", T::kNonNegativeInteger, "Data-parallel size (--data-parallel-size)."},
       {"dataLocal", T::kNonNegativeInteger,
        "Data-parallel ranks per node (--data-parallel-size-local)."},
       {"dataRPCPort", T::kNonNegativeInteger,
        "The data-parallel RPC port (--data-parallel-rpc-port)."},
       {"expert", T::kBool, "Expert parallelism (--enable-expert-parallel)."}}};
  return &s;
}

const TypeSchema* RefsOnlySchema() {
  static const TypeSchema s{
      "Refs",
      "References to objects managed elsewhere.",
      {{"refs", T::kUnsupported, kGatewayRoutes}, {"spec", T::kUnsupported, kGatewayRoutes}}};
  return &s;
}

const TypeSchema* RouteSchema() {
  static const TypeSchema s{"GatewayRoutesSpec",
                            "An HTTPRoute; {} means strata's gateway route.",
                            {{"http", T::kObject, "The HTTPRoute: {} only.", RefsOnlySchema}}};
  return &s;
}

const TypeSchema* SchedulerSchema() {
  static const TypeSchema s{"SchedulerSpec",
                            "The endpoint picker; {} means strata's gateway picker.",
                            {{"pool", T::kUnsupported, kGatewayPicks},
                             {"template", T::kIgnored, kGatewayPicks},
                             {"config", T::kUnsupported, kGatewayPicks}}};
  return &s;
}

const TypeSchema* RouterSchema() {
  static const TypeSchema s{
      "RouterSpec",
      "How the service is reached: strata's gateway, whichever of these is given.",
      {{"route", T::kObject, "{}: strata's gateway route.", RouteSchema},
       {"gateway", T::kObject, "{}: strata's gateway.", RefsOnlySchema},
       {"ingress", T::kObject, "{}: strata's gateway.", RefsOnlySchema},
       {"scheduler", T::kObject, "{}: strata's gateway picker.", SchedulerSchema}}};
  return &s;
}

const TypeSchema* LLMInferenceServiceSpecSchema() {
  static const TypeSchema s{
      "LLMInferenceServiceSpec",
      "A KServe LLM inference service.",
      {{"model", T::kObject, "The model to serve.", LLMModelSchema, {}, true},
       {"replicas", T::kNonNegativeInteger, "Replicas (default 1)."},
       {"parallelism", T::kObject, "vLLM's parallel sizes.", ParallelismSchema},
       {"template", T::kObject,
        "The engine pod: one container whose command, if given, replaces `vllm serve`.",
        KubePodSpecSchema},
       {"worker", T::kObject,
        "The other pods of a replica that spans nodes: the same container as the template's.",
        KubePodSpecSchema},
       {"router", T::kObject, "How the service is reached: strata's gateway.", RouterSchema},
       {"storageInitializer", T::kIgnored,
        "strata runs no init container: vLLM reads the model from its URI itself"},
       {"prefill", T::kUnsupported, "disaggregated prefill is not supported"},
       {"baseRefs", T::kUnsupported,
        "strata has no LLMInferenceServiceConfig objects: give the fields in the service"}}};
  return &s;
}

// vLLM's flags for the parallel sizes given.
std::vector<std::string> ParallelismArgs(const FieldView& parallelism) {
  std::vector<std::string> args;
  for (const auto& [field, flag] :
       std::initializer_list<std::pair<std::string_view, std::string_view>>{
           {"tensor", "--tensor-parallel-size"},
           {"pipeline", "--pipeline-parallel-size"},
           {"data", "--data-parallel-size"},
           {"dataLocal", "--data-parallel-size-local"},
           {"dataRPCPort", "--data-parallel-rpc-port"}}) {
    if (parallelism.Has(field)) {
      args.push_back(std::string(flag) + "=" + std::to_string(parallelism.Integer(field, 1)));
    }
  }
  if (parallelism.Bool("expert", false)) args.push_back("--enable-expert-parallel");
  return args;
}

// Pods one replica spans when a worker is given: data / dataLocal with data parallelism, else
// tensor x pipeline over the GPUs each pod has. Reports a count that does not divide, or one.
int64_t NodesPerReplica(const FieldView& spec, const ResourceRequest& per_pod,
                        FieldErrors& errors) {
  FieldView p = spec.Object("parallelism");
  const std::string path = spec.PathOf("worker");
  int64_t nodes = 0;
  if (p.Has("data")) {
    const int64_t data = p.Integer("data", 1);
    const int64_t local = p.Integer("dataLocal", 0);
    if (local < 1 || data % local != 0) {
      errors.Add(p.PathOf("dataLocal"),
                 "with a worker, needs to divide parallelism.data: the replica spans data / "
                 "dataLocal nodes");
      return 1;
    }
    nodes = data / local;
  } else {
    const int64_t gpus = per_pod.gpu.milli() / 1000;
    const int64_t ranks = p.Integer("tensor", 1) * p.Integer("pipeline", 1);
    if (gpus < 1 || ranks % gpus != 0) {
      errors.Add(path, "a replica spans tensor x pipeline (" + std::to_string(ranks) +
                           ") GPUs over pods of " + std::to_string(gpus) +
                           " nvidia.com/gpu each: the template's GPUs must divide it");
      return 1;
    }
    nodes = ranks / gpus;
  }
  if (nodes < 2 || nodes > kMaxNodesPerReplica) {
    errors.Add(path, "the parallel sizes make " + std::to_string(nodes) +
                         " node(s) per replica: a worker needs 2 to " +
                         std::to_string(kMaxNodesPerReplica) + "; leave it out for one");
    return 1;
  }
  return nodes;
}

// Reports a worker container that differs from the template's where strata runs one engine.
void RequireSameEngine(const FieldView& worker, const KubeContainer& main,
                       const KubeContainer& other, FieldErrors& errors) {
  std::vector<FieldView> containers = worker.ObjectList("containers");
  if (containers.empty()) return;
  const FieldView& c = containers.front();
  const std::string why =
      "strata runs one engine container on every pod of a replica: it must equal the template's";
  if (other.resources != main.resources && c.Has("resources")) {
    errors.Add(c.PathOf("resources"), why);
  }
  const ProcessTemplate& a = main.process;
  const ProcessTemplate& b = other.process;
  if ((c.Has("image") && a.image != b.image) || (c.Has("command") && a.command != b.command) ||
      (c.Has("args") && a.args != b.args) || (c.Has("env") && a.env != b.env)) {
    errors.Add(c.path(), why + " (image, command, args, env)");
  }
  for (const auto& [field, probe] : {std::pair("livenessProbe", &ProcessTemplate::liveness_probe),
                                     std::pair("readinessProbe", &ProcessTemplate::readiness_probe),
                                     std::pair("startupProbe", &ProcessTemplate::startup_probe)}) {
    if (c.Has(field) && a.*probe != b.*probe) errors.Add(c.PathOf(field), why);
  }
}

}  // namespace

const TypeSchema* LLMInferenceServiceV1alpha1Schema() {
  static const TypeSchema s =
      CompatDocument("LLMInferenceService", "serving.kserve.io/v1alpha1",
                     "A KServe LLM inference service.", LLMInferenceServiceSpecSchema);
  return &s;
}

const TypeSchema* LLMInferenceServiceV1alpha2Schema() {
  static const TypeSchema s =
      CompatDocument("LLMInferenceService", "serving.kserve.io/v1alpha2",
                     "A KServe LLM inference service.", LLMInferenceServiceSpecSchema);
  return &s;
}

void DecodeLLMInferenceService(const FieldView& doc, DecodedDocument& out) {
  FieldErrors& errors = out.errors;
  Service service;
  service.metadata = DecodeMetadata(doc.Object("metadata"), true, true, errors);
  ServiceSpec& s = service.spec;
  s.queue = TakeQueueLabel(service.metadata);
  FieldView spec = doc.Object("spec");
  FieldView model = spec.Object("model");
  s.model = model.String("name", service.metadata.name);
  const std::string model_path = KServeModelPath(model.String("uri"), model.PathOf("uri"), errors);

  FieldView pod_spec = spec.Object("template");
  KubeContainer main;
  if (spec.Has("template")) {
    // Without a command, strata runs the engine KServe's config would (`vllm serve`), and
    // the probes KServe's config completes are read as such.
    std::vector<FieldView> containers = pod_spec.ObjectList("containers");
    const bool engine_by_strata = containers.size() == 1 && !containers[0].Has("command");
    main =
        FromSingleContainer(pod_spec, WorkloadClass::kService, errors, false, false,
                            engine_by_strata ? ProbeDefaults::kKServeEngine : ProbeDefaults::kNone);
    for (const char* field : {"nodeName", "priority"}) {
      if (pod_spec.Has(field)) {
        errors.Add(pod_spec.PathOf(field), "set per service: strata places its replicas");
      }
    }
    s.tolerations = DecodeTolerations(pod_spec, "tolerations");
    if (pod_spec.Has("priorityClassName")) {
      s.priority = PriorityForClass(pod_spec.String("priorityClassName"),
                                    pod_spec.PathOf("priorityClassName"), errors)
                       .value_or(0);
    }
  }
  s.resources = main.resources;
  s.engine = main.process;
  FieldView parallelism = spec.Object("parallelism");
  if (main.process.command.empty()) {
    s.engine.command = {"vllm", "serve", model_path, "--served-model-name", s.model};
    std::vector<std::string> args = ParallelismArgs(parallelism);
    std::vector<std::string> modules;
    for (const FieldView& adapter : model.Object("lora").ObjectList("adapters")) {
      modules.push_back(adapter.String("name") + "=" +
                        KServeModelPath(adapter.String("uri"), adapter.PathOf("uri"), errors));
    }
    if (!modules.empty()) {
      args.push_back("--enable-lora");
      args.push_back("--lora-modules");
      args.insert(args.end(), modules.begin(), modules.end());
    }
    args.insert(args.end(), main.process.args.begin(), main.process.args.end());
    s.engine.args = std::move(args);
  } else if (model.Object("lora").Has("adapters")) {
    errors.Add(model.Object("lora").PathOf("adapters"),
               "strata gives adapters to `vllm serve`, which the template's command replaces: "
               "give them in the command");
  }
  const bool tp_given = parallelism.Has("tensor");
  if (tp_given) s.tensor_parallel = parallelism.Integer("tensor", 1);
  if (spec.Has("worker")) {
    FieldView worker = spec.Object("worker");
    KubeContainer other = FromSingleContainer(
        worker, WorkloadClass::kService, errors, false, false,
        main.process.command.empty() ? ProbeDefaults::kKServeEngine : ProbeDefaults::kNone);
    RequireSameEngine(worker, main, other, errors);
    s.nodes_per_replica = NodesPerReplica(spec, s.resources, errors);
  }
  const int64_t replicas = spec.Integer("replicas", 1);
  if (replicas < 1) {
    errors.Add(spec.PathOf("replicas"),
               "strata runs at least one replica of a service: delete the service to stop it");
  }
  ValidateCeiling(replicas, kMaxServiceReplicas, spec.PathOf("replicas"), errors);
  s.min_replicas = replicas;
  s.max_replicas = replicas;
  ApplyServiceDefaults(s, tp_given, true);
  if (!spec.Has("router")) {
    errors.Warn(spec.PathOf("router"),
                "absent: strata serves every Service's model on its gateway all the same");
  }
  out.objects.push_back(std::move(service));
}

}  // namespace strata::api
