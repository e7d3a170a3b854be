// KServe's serving.kserve.io/v1beta1 InferenceService, decoded into a native Service that runs
// vLLM.
#include "api/compat_schema.h"
#include "api/decode_common.h"
#include "api/kube_common.h"
#include "api/native_schema.h"

namespace strata::api {
namespace {

using T = FieldType;

// Why a framework predictor (sklearn:, pytorch:...) is refused.
constexpr std::string_view kOnlyModelPredictor =
    "strata serves language models with vLLM: use predictor.model with modelFormat huggingface "
    "or vllm";

const TypeSchema* ModelFormatSchema() {
  static const TypeSchema s{"ModelFormat",
                            "The model's format.",
                            {{"name",
                              T::kEnum,
                              "huggingface or vllm: strata serves with vLLM.",
                              nullptr,
                              {"huggingface", "vllm"},
                              true},
                             {"version", T::kString, "The format's version."}}};
  return &s;
}

const TypeSchema* ModelSpecSchema() {
  static const TypeSchema s{
      "ModelSpec",
      "The model to serve.",
      {{"modelFormat", T::kObject, "The model's format.", ModelFormatSchema, {}, true},
       {"runtime",
        T::kEnum,
        "The serving runtime; strata runs vLLM.",
        nullptr,
        {"kserve-huggingfaceserver", "kserve-vllm", "vllm"}},
       {"storageUri", T::kString, "hf://org/model, file:///path or /path.", nullptr, {}, true},
       {"resources", T::kObject, "Requests and limits per replica.",
        KubeResourceRequirementsSchema},
       {"args", T::kStringList, "More vLLM arguments (e.g. --tensor-parallel-size=2)."},
       {"env", T::kObjectList, "Environment variables.", EnvVarSchema},
       {"image", T::kUnsupported, "strata runs the vllm command"},
       {"command", T::kUnsupported, "strata runs vllm serve; give arguments in args"},
       {"protocolVersion", T::kUnsupported, "strata serves the OpenAI API"}}};
  return &s;
}

const TypeSchema* PredictorSchema() {
  static const TypeSchema s{
      "PredictorSpec",
      "The model server.",
      {{"model", T::kObject, "The model to serve.", ModelSpecSchema, {}, true},
       {"minReplicas", T::kNonNegativeInteger, "Fewest replicas (default 1)."},
       {"maxReplicas", T::kNonNegativeInteger, "Most replicas (default minReplicas)."},
       {"scaleMetric",
        T::kEnum,
        "concurrency or rps (strata scales on engine signals).",
        nullptr,
        {"concurrency", "rps", "cpu", "memory"}},
       {"scaleTarget", T::kNonNegativeInteger, "Per-replica target of the metric."},
       {"tolerations", T::kObjectList, "Node taints the replicas tolerate.", TolerationSchema},
       {"containers", T::kUnsupported, "use predictor.model"},
       {"sklearn", T::kUnsupported, kOnlyModelPredictor},
       {"xgboost", T::kUnsupported, kOnlyModelPredictor},
       {"lightgbm", T::kUnsupported, kOnlyModelPredictor},
       {"tensorflow", T::kUnsupported, kOnlyModelPredictor},
       {"pytorch", T::kUnsupported, kOnlyModelPredictor},
       {"triton", T::kUnsupported, kOnlyModelPredictor},
       {"onnx", T::kUnsupported, kOnlyModelPredictor},
       {"pmml", T::kUnsupported, kOnlyModelPredictor},
       {"paddle", T::kUnsupported, kOnlyModelPredictor},
       {"huggingface", T::kUnsupported, kOnlyModelPredictor},
       {"nodeSelector", T::kUnsupported, "choose nodes with a ResourceFlavor or gpuSelector"},
       {"serviceAccountName", T::kUnsupported, "strata has no service accounts"},
       {"canaryTrafficPercent", T::kUnsupported, "use a native Service's versions and weights"},
       {"containerConcurrency", T::kUnsupported, "use scaleMetric concurrency and scaleTarget"},
       {"timeout", T::kUnsupported, "the gateway's timeouts apply"}}};
  return &s;
}

const TypeSchema* InferenceServiceSpecSchema() {
  static const TypeSchema s{
      "InferenceServiceSpec",
      "A KServe inference service.",
      {{"predictor", T::kObject, "The model server.", PredictorSchema, {}, true},
       {"transformer", T::kUnsupported, "strata serves the model directly"},
       {"explainer", T::kUnsupported, "strata serves the model directly"}}};
  return &s;
}

// The --tensor-parallel-size given in vLLM's arguments, or 0.
int64_t TensorParallelArg(const std::vector<std::string>& args) {
  const std::string flag = "--tensor-parallel-size";
  for (size_t i = 0; i < args.size(); ++i) {
    std::string value;
    if (args[i] == flag && i + 1 < args.size()) value = args[i + 1];
    if (args[i].rfind(flag + "=", 0) == 0) value = args[i].substr(flag.size() + 1);
    if (!value.empty() && value.size() < 4 &&
        value.find_first_not_of("0123456789") == std::string::npos) {
      return std::stoll(value);
    }
  }
  return 0;
}

}  // namespace

std::string KServeModelPath(const std::string& uri, const std::string& path, FieldErrors& errors) {
  if (uri.rfind("hf://", 0) == 0 && uri.size() > 5) return uri.substr(5);
  if (uri.rfind("file://", 0) == 0 && uri.size() > 7) return uri.substr(7);
  if (!uri.empty() && uri.front() == '/') return uri;
  errors.Add(path,
             "strata loads models from hf://, file:// or an absolute path, got " + Quoted(uri));
  return "";
}

const TypeSchema* InferenceServiceSchema() {
  static const TypeSchema s =
      CompatDocument("InferenceService", "serving.kserve.io/v1beta1", "A KServe inference service.",
                     InferenceServiceSpecSchema);
  return &s;
}

void DecodeInferenceService(const FieldView& doc, DecodedDocument& out) {
  FieldErrors& errors = out.errors;
  Service service;
  service.metadata = DecodeMetadata(doc.Object("metadata"), true, true, errors);
  ServiceSpec& s = service.spec;
  s.queue = TakeQueueLabel(service.metadata);
  s.model = service.metadata.name;
  FieldView predictor = doc.Object("spec").Object("predictor");
  FieldView model = predictor.Object("model");
  std::string model_path =
      KServeModelPath(model.String("storageUri"), model.PathOf("storageUri"), errors);
  s.engine.command = {"vllm", "serve", model_path, "--served-model-name", s.model};
  s.engine.args = model.StringList("args");
  s.engine.env = DecodeEnv(model, "env", errors);
  ValidateEnv(s.engine.env, WorkloadClass::kService, model.PathOf("env"), errors);
  s.resources = FromKubeResources(model.Object("resources"), errors);
  s.tolerations = DecodeTolerations(predictor, "tolerations");
  int64_t tp = TensorParallelArg(s.engine.args);
  if (tp > 0) s.tensor_parallel = tp;
  s.min_replicas = predictor.Integer("minReplicas", 1);
  s.max_replicas = predictor.Integer("maxReplicas", 0);
  ValidateCeiling(s.min_replicas, kMaxServiceReplicas, predictor.PathOf("minReplicas"), errors);
  ValidateCeiling(s.max_replicas, kMaxServiceReplicas, predictor.PathOf("maxReplicas"), errors);
  std::string metric = predictor.String("scaleMetric", "concurrency");
  if (metric == "cpu" || metric == "memory") {
    errors.Add(predictor.PathOf("scaleMetric"),
               "strata scales on engine signals: use concurrency or rps, got " + Quoted(metric));
  }
  s.autoscaling.metric = metric;
  if (predictor.Has("scaleTarget")) {
    s.autoscaling.target = static_cast<double>(predictor.Integer("scaleTarget", 0));
    if (s.autoscaling.target <= 0) errors.Add(predictor.PathOf("scaleTarget"), "must be above 0");
  }
  ApplyServiceDefaults(s, tp > 0, predictor.Has("maxReplicas"));
  if (s.max_replicas < s.min_replicas) {
    errors.Add(predictor.PathOf("maxReplicas"),
               "must be at least minReplicas (" + std::to_string(s.min_replicas) + ")");
  }
  out.objects.push_back(std::move(service));
}

}  // namespace strata::api
