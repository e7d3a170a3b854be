#include "api/decode_common.h"

#include <array>
#include <limits>
#include <random>
#include <utility>

#include "api/decode_probe.h"

namespace strata::api {
namespace {

constexpr std::array<std::pair<std::string_view, int64_t>, 5> kPriorityClasses = {{
    {"system-node-critical", 2000001000},
    {"system-cluster-critical", 2000000000},
    {"critical", 1000},
    {"standard", 0},
    {"sheddable", -1000},
}};

// Kubernetes' limit on an object's annotations, keys and values together (apimachinery's
// TotalAnnotationSizeLimitB): annotations ride along on every read and watch event of the
// object, so a few megabytes of them would slow every loop that reads it.
constexpr size_t kMaxAnnotationBytes = 256 * 1024;

// Kubernetes' generated names: the prefix, cut so that the whole stays a valid name, and five
// characters from an alphabet without vowels (no words) or look-alikes (no 0/o, 1/l).
constexpr std::string_view kNameAlphabet = "bcdfghjklmnpqrstvwxz2456789";
constexpr size_t kGeneratedSuffix = 5;

std::string GenerateName(std::string prefix, size_t max_length) {
  thread_local std::mt19937_64 random{std::random_device{}()};
  std::uniform_int_distribution<size_t> pick(0, kNameAlphabet.size() - 1);
  if (prefix.size() > max_length - kGeneratedSuffix) prefix.resize(max_length - kGeneratedSuffix);
  for (size_t i = 0; i < kGeneratedSuffix; ++i) prefix += kNameAlphabet[pick(random)];
  return prefix;
}

}  // namespace

ObjectMeta DecodeMetadata(const FieldView& metadata, bool namespaced, bool label_name,
                          FieldErrors& errors) {
  ObjectMeta meta;
  meta.name = metadata.String("name");
  std::string name_path = metadata.PathOf("name");
  if (!metadata.Has("name") && metadata.Has("generateName")) {
    name_path = metadata.PathOf("generateName");
    meta.name = GenerateName(metadata.String("generateName"), label_name ? 63 : 253);
  }
  if (!metadata.Has("name") && !metadata.Has("generateName")) {
    errors.Add(name_path, "required field is missing (or give metadata.generateName)");
  } else if (label_name) {
    ValidateLabelName(meta.name, name_path, errors);
  } else {
    ValidateSubdomainName(meta.name, name_path, errors);
  }
  if (namespaced) {
    meta.namespace_name = metadata.String("namespace", kDefaultNamespace);
    ValidateLabelName(meta.namespace_name, metadata.PathOf("namespace"), errors);
  } else if (metadata.Has("namespace")) {
    errors.Add(metadata.PathOf("namespace"),
               "this kind is cluster-scoped and has no namespace; remove the field");
  }
  meta.labels = metadata.StringMap("labels");
  ValidateLabels(meta.labels, metadata.PathOf("labels"), errors);
  meta.annotations = metadata.StringMap("annotations");
  ValidateAnnotationKeys(meta.annotations, metadata.PathOf("annotations"), errors);
  size_t annotation_bytes = 0;
  for (const auto& [key, value] : meta.annotations) annotation_bytes += key.size() + value.size();
  if (annotation_bytes > kMaxAnnotationBytes) {
    errors.Add(metadata.PathOf("annotations"),
               "too long: keys and values may not total more than " +
                   std::to_string(kMaxAnnotationBytes) + " bytes (they total " +
                   std::to_string(annotation_bytes) + ")");
  }
  meta.uid = metadata.String("uid");
  meta.resource_version = metadata.String("resourceVersion");
  meta.creation_timestamp = metadata.String("creationTimestamp");
  if (const nlohmann::json& managed = metadata.Raw("managedFields");
      managed.is_array() && !managed.empty()) {
    meta.managed_fields = managed.dump();
  }
  return meta;
}

ResourceRequest DecodeResourceRequest(const FieldView& view, FieldErrors& errors) {
  ResourceRequest r;
  r.cpu = view.GetQuantity("cpu");
  r.memory = view.GetQuantity("memory");
  r.gpu = view.GetQuantity("gpu");
  r.gpu_memory = view.GetQuantity("gpuMemory");
  r.mig_profile = view.String("migProfile");
  const FieldView limits = view.Object("limits");
  r.cpu_limit = limits.GetQuantity("cpu");
  r.memory_limit = limits.GetQuantity("memory");
  ValidateResourceRequest(r, view.path(), errors);
  return r;
}

GpuSelector DecodeGpuSelector(const FieldView& view) {
  return {view.StringList("models"), view.GetQuantity("minMemory")};
}

std::vector<Toleration> DecodeTolerations(const FieldView& parent, std::string_view field) {
  std::vector<Toleration> out;
  for (const FieldView& t : parent.ObjectList(field)) {
    out.push_back(
        {t.String("key"), t.String("operator", "Equal"), t.String("value"), t.String("effect")});
  }
  return out;
}

std::vector<EnvVar> DecodeEnv(const FieldView& parent, std::string_view field,
                              FieldErrors& errors) {
  std::vector<EnvVar> out;
  for (const FieldView& e : parent.ObjectList(field)) {
    out.push_back({e.String("name"), e.String("value"), DecodeEnvVarSource(e, errors)});
  }
  return out;
}

SecurityContext DecodeSecurityContext(const FieldView& view, FieldErrors& errors) {
  // Linux ids are 32 bits; (uid_t)-1 means "no change" to setuid, so it is no user.
  constexpr int64_t kMaxId = 0xfffffffe;
  SecurityContext out;
  for (const char* field : {"runAsUser", "runAsGroup"}) {
    if (!view.Has(field)) continue;
    int64_t id = view.Integer(field, 0);
    if (id < 0 || id > kMaxId) {
      errors.Add(view.PathOf(field), "must be between 0 and 4294967294");
      continue;
    }
    (field == std::string_view("runAsUser") ? out.run_as_user : out.run_as_group) = id;
  }
  if (view.Has("runAsNonRoot")) out.run_as_non_root = view.Bool("runAsNonRoot", true);
  if (out.Contradictory()) {
    errors.Add(view.PathOf("runAsUser"), "is 0 (root) but runAsNonRoot is true");
  }
  return out;
}

ProcessTemplate DecodeProcessTemplate(const FieldView& view, WorkloadClass workload,
                                      FieldErrors& errors, bool env_names_reserved) {
  ProcessTemplate t;
  t.image = view.String("image");
  t.command = view.StringList("command");
  if (view.Has("command") && t.command.empty()) {
    errors.Add(view.PathOf("command"), "must name a program");
  }
  t.args = view.StringList("args");
  t.env = DecodeEnv(view, "env", errors);
  if (env_names_reserved) ValidateEnv(t.env, workload, view.PathOf("env"), errors);
  t.env_from = DecodeEnvFrom(view, "envFrom", errors);
  t.working_dir = view.String("workingDir");
  t.security_context = DecodeSecurityContext(view.Object("securityContext"), errors);
  DecodeProbes(view, ProbePorts{workload, {}, {}}, ProbeDefaults::kNone, t, errors);
  return t;
}

void ApplyServiceDefaults(ServiceSpec& spec, bool tensor_parallel_given, bool max_replicas_given) {
  if (spec.versions.empty()) spec.versions.push_back({"v1", 100, std::nullopt});
  if (!tensor_parallel_given) {
    int64_t whole_gpus = spec.resources.gpu.milli() / 1000;
    int64_t total = 0;
    if (__builtin_mul_overflow(whole_gpus, spec.nodes_per_replica, &total)) {
      total = std::numeric_limits<int64_t>::max();
    }
    spec.tensor_parallel = std::max<int64_t>(1, total);
  }
  if (!max_replicas_given) spec.max_replicas = std::max<int64_t>(1, spec.min_replicas);
}

std::optional<int64_t> PriorityForClass(std::string_view name, std::string_view path,
                                        FieldErrors& errors) {
  for (const auto& [class_name, priority] : kPriorityClasses) {
    if (class_name == name) return priority;
  }
  errors.Add(std::string(path),
             "unknown priority class " + Quoted(name) +
                 "; strata knows critical, standard, sheddable, system-cluster-critical and "
                 "system-node-critical");
  return std::nullopt;
}

void CheckWorkloadPriority(int64_t value, std::string_view path, FieldErrors& errors) {
  if (value < -2000000000 || value > 1000000000) {
    errors.Add(std::string(path),
               "must be between -2000000000 and 1000000000 (Kubernetes' user priorities)");
  }
}

}  // namespace strata::api
