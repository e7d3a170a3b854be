// Kubernetes core/v1: the Pod kind, and the container and resource pieces other compatible kinds
// embed.
#include <set>

#include "api/compat_schema.h"
#include "api/decode_common.h"
#include "api/decode_probe.h"
#include "api/kube_common.h"
#include "api/native_schema.h"
#include "api/torchrun_env.h"

namespace strata::api {
namespace {

using T = FieldType;

constexpr std::string_view kExtendedPrefix = "nvidia.com/";

bool IsExtended(const std::string& name) { return name.rfind(kExtendedPrefix, 0) == 0; }

// Applies one resource's amount to the native request, or reports an unknown resource.
void ApplyResource(const std::string& name, const Quantity& amount, const std::string& path,
                   ResourceRequest& out, FieldErrors& errors) {
  if (name == "cpu") {
    out.cpu = amount;
  } else if (name == "memory") {
    out.memory = amount;
  } else if (name == "nvidia.com/gpu") {
    if (amount.milli() % 1000 != 0) {
      errors.Add(path, "nvidia.com/gpu counts whole GPUs, got " + Quoted(amount.ToString()) +
                           "; for a share of a GPU use strata's native resources.gpu");
    }
    out.gpu = amount;
  } else if (name == "nvidia.com/gpumem") {
    if (amount.Units() > (int64_t{1} << 30)) {
      errors.Add(path, "nvidia.com/gpumem counts MiB per GPU; " + Quoted(amount.ToString()) +
                           " is more than any GPU has");
      return;
    }
    out.gpu_memory = Quantity::FromUnits(amount.Units() * 1024 * 1024, Quantity::Format::kBinarySI);
  } else if (name.rfind("nvidia.com/mig-", 0) == 0) {
    if (amount.milli() != 1000) errors.Add(path, "strata gives a pod one MIG instance; use 1");
    out.mig_profile = name.substr(std::string("nvidia.com/mig-").size());
  } else {
    errors.Add(path, "resource " + Quoted(name) +
                         " is not supported by strata (cpu, memory, nvidia.com/gpu, "
                         "nvidia.com/gpumem, nvidia.com/mig-<profile>)");
  }
}

}  // namespace

const TypeSchema* KubeResourceRequirementsSchema() {
  static const TypeSchema s{
      "ResourceRequirements",
      "Kubernetes resource requests and limits.",
      {{"limits", T::kQuantityMap, "Most the container may use; nvidia.com/gpu goes here."},
       {"requests", T::kQuantityMap, "What the container is guaranteed."},
       {"claims", T::kUnsupported, "strata has no dynamic resource allocation"}}};
  return &s;
}

const TypeSchema* KubeContainerPortSchema() {
  static const TypeSchema s{"ContainerPort",
                            "A port the container listens on (documentation, as in Kubernetes).",
                            {{"name", T::kString, "The port's name."},
                             {"containerPort", T::kInteger, "The port number.", nullptr, {}, true},
                             {"protocol", T::kEnum, "TCP (default).", nullptr, {"TCP"}},
                             {"hostPort", T::kUnsupported, "processes use the host's network"},
                             {"hostIP", T::kUnsupported, "processes use the host's network"}}};
  return &s;
}

// Kubernetes' SecurityContext (container) and PodSecurityContext (pod) in one: the user and
// group are honoured; what needs a container runtime is accepted with a warning.
const TypeSchema* KubeSecurityContextSchema() {
  constexpr std::string_view kNoRuntime =
      "pods run as local processes, without a container runtime";
  static const TypeSchema s{
      "SecurityContext",
      "Who the processes run as.",
      {{"runAsUser", T::kInteger, "The user id (0: root, only on nodes that allow root pods)."},
       {"runAsGroup", T::kInteger, "The group id."},
       {"runAsNonRoot", T::kBool, "true: never root; false with no runAsUser: asks for root."},
       {"allowPrivilegeEscalation", T::kIgnored, kNoRuntime},
       {"capabilities", T::kIgnored, kNoRuntime},
       {"privileged", T::kIgnored, kNoRuntime},
       {"readOnlyRootFilesystem", T::kIgnored, kNoRuntime},
       {"procMount", T::kIgnored, kNoRuntime},
       {"seccompProfile", T::kIgnored, kNoRuntime},
       {"seLinuxOptions", T::kIgnored, kNoRuntime},
       {"appArmorProfile", T::kIgnored, kNoRuntime},
       {"windowsOptions", T::kIgnored, kNoRuntime},
       {"fsGroup", T::kIgnored, kNoRuntime},
       {"fsGroupChangePolicy", T::kIgnored, kNoRuntime},
       {"supplementalGroups", T::kIgnored, kNoRuntime},
       {"supplementalGroupsPolicy", T::kIgnored, kNoRuntime},
       {"seLinuxChangePolicy", T::kIgnored, kNoRuntime},
       {"sysctls", T::kIgnored, kNoRuntime}}};
  return &s;
}

const TypeSchema* KubeContainerSchema() {
  static const TypeSchema s{
      "Container",
      "A Kubernetes container; strata runs its command as processes.",
      {{"name", T::kString, "The container's name."},
       {"image", T::kString, "Container image, used by the Kubernetes mode."},
       {"command", T::kStringList, "The program and its first arguments."},
       {"args", T::kStringList, "More arguments."},
       {"env", T::kObjectList, "Environment variables.", EnvVarSchema},
       {"workingDir", T::kString, "Working directory."},
       {"resources", T::kObject, "Requests and limits.", KubeResourceRequirementsSchema},
       {"ports", T::kObjectList,
        "Ports it listens on; strata gives each engine its port in STRATA_PORT.",
        KubeContainerPortSchema},
       {"imagePullPolicy", T::kIgnored, "pods run as local processes and pull no images"},
       {"volumeMounts", T::kIgnored, "pods run as local processes and see the host's file system"},
       {"securityContext", T::kObject, "Who the processes run as.", KubeSecurityContextSchema},
       {"livenessProbe", T::kObject, "Kills (and so restarts) the pod when it fails.",
        KubeProbeSchema},
       {"readinessProbe", T::kObject, "Decides whether the pod is Ready (gets traffic).",
        KubeProbeSchema},
       {"startupProbe", T::kObject, "Holds the other probes back until it passes.",
        KubeProbeSchema},
       {"terminationMessagePath", T::kIgnored, "strata records each process's exit status"},
       {"terminationMessagePolicy", T::kIgnored, "strata records each process's exit status"},
       {"envFrom", T::kObjectList, "ConfigMaps and Secrets whose keys become variables.",
        EnvFromSourceSchema}}};
  return &s;
}

// A pod volume: configuration volumes mean nothing to local processes and are accepted with a
// warning; a volume that holds data would change what the program sees, so it is an error.
const TypeSchema* KubeVolumeSchema() {
  static const TypeSchema s{
      "Volume",
      "A pod volume; only configuration and scratch volumes are accepted.",
      {{"name", T::kString, "The volume's name.", nullptr, {}, true},
       {"configMap", T::kIgnored,
        "not mounted: pods run as local processes without a mount namespace, so its files do not "
        "appear at the volumeMounts' mountPath; read the ConfigMap through env valueFrom or "
        "envFrom"},
       {"secret", T::kIgnored,
        "not mounted: pods run as local processes without a mount namespace, so its files do not "
        "appear at the volumeMounts' mountPath; read the Secret through env valueFrom or envFrom"},
       {"downwardAPI", T::kIgnored, "pods run as local processes and see the host's file system"},
       {"projected", T::kIgnored, "pods run as local processes and see the host's file system"},
       {"emptyDir", T::kIgnored, "pods run as local processes and see the host's file system"},
       {"persistentVolumeClaim", T::kUnsupported,
        "strata has no persistent volumes; give the data's host path in the command"},
       {"hostPath", T::kUnsupported, "processes see the host's file system; use the path itself"},
       {"nfs", T::kUnsupported, "strata mounts no volumes"},
       {"csi", T::kUnsupported, "strata mounts no volumes"},
       {"ephemeral", T::kUnsupported, "strata mounts no volumes"}}};
  return &s;
}

const TypeSchema* KubePodSpecSchema() {
  static const TypeSchema s{
      "PodSpec",
      "A Kubernetes pod spec with one container.",
      {{"containers", T::kObjectList, "Exactly one container.", KubeContainerSchema, {}, true},
       {"restartPolicy",
        T::kEnum,
        "Always (default), OnFailure or Never.",
        nullptr,
        {"Always", "OnFailure", "Never"}},
       {"nodeName", T::kString, "Bind to this node."},
       {"priority", T::kInteger, "Scheduling priority."},
       {"priorityClassName", T::kString,
        "critical, standard, sheddable, system-cluster-critical or system-node-critical."},
       {"tolerations", T::kObjectList, "Node taints the pod tolerates.", TolerationSchema},
       {"nodeSelector", T::kStringMap,
        "Labels the pod's node must carry (Pods, batch Jobs, JobSets, Volcano Jobs, "
        "Deployments, StatefulSets and LeaderWorkerSets)."},
       {"affinity", T::kUnsupported, "use strata's topology constraint on a Job"},
       {"volumes", T::kObjectList, "Configuration and scratch volumes.", KubeVolumeSchema},
       {"initContainers", T::kUnsupported, "strata runs one container per pod"},
       {"schedulerName",
        T::kEnum,
        "strata, the only scheduler here (what strata serves a pod with; another is refused).",
        nullptr,
        {"strata"}},
       {"serviceAccountName", T::kIgnored, "local processes carry no service account token"},
       {"serviceAccount", T::kIgnored, "local processes carry no service account token"},
       {"automountServiceAccountToken", T::kIgnored,
        "local processes carry no service account token"},
       {"securityContext", T::kObject, "Who the processes run as (the container's wins).",
        KubeSecurityContextSchema},
       {"dnsPolicy", T::kIgnored, "local processes use the host's resolver"},
       {"enableServiceLinks", T::kIgnored, "strata sets no service environment variables"},
       {"hostNetwork", T::kUnsupported, "processes always use the host's network"},
       {"imagePullSecrets", T::kIgnored, "pods run as local processes and pull no images"}}};
  return &s;
}

const TypeSchema* KubePodTemplateMetadataSchema() {
  static const TypeSchema s{
      "PodTemplateMetadata",
      "Labels and annotations of a pod template.",
      {{"name", T::kIgnored, "strata names the pods it creates"},
       {"labels", T::kIgnored, "strata's pods do not carry a template's labels"},
       {"annotations", T::kStringMap,
        "Kueue's topology requests (kueue.x-k8s.io/podset-required-topology or "
        "podset-preferred-topology: a node label key); other annotations are ignored, with a "
        "warning."}}};
  return &s;
}

const TypeSchema* KubePodTemplateSchema() {
  static const TypeSchema s{
      "PodTemplateSpec",
      "A Kubernetes pod template.",
      {{"metadata", T::kObject, "Labels and annotations.", KubePodTemplateMetadataSchema},
       {"spec", T::kObject, "The pod spec.", KubePodSpecSchema, {}, true}}};
  return &s;
}

const TypeSchema* CoreV1PodSchema() {
  static const TypeSchema s =
      CompatDocument("Pod", "v1", "A Kubernetes Pod with one container.", KubePodSpecSchema);
  return &s;
}

TypeSchema CompatDocument(std::string_view kind, std::string_view api_version, std::string_view doc,
                          const TypeSchema* (*spec)()) {
  return {kind,
          doc,
          {{"apiVersion", T::kString, api_version, nullptr, {}, true},
           {"kind", T::kString, kind, nullptr, {}, true},
           {"metadata", T::kObject, "Name, namespace, labels.", ObjectMetaSchema, {}, true},
           {"spec", T::kObject, spec()->doc, spec, {}, true},
           {"status", T::kIgnored, "status is set by strata"}}};
}

TopologyConstraint TemplateTopology(const FieldView& pod_template, FieldErrors& errors) {
  FieldView metadata = pod_template.Object("metadata");
  std::string path = metadata.PathOf("annotations");
  TopologyConstraint topology;
  for (const auto& [key, value] : metadata.StringMap("annotations")) {
    std::string mode = key == kKueueRequiredTopologyAnnotation    ? "Required"
                       : key == kKueuePreferredTopologyAnnotation ? "Preferred"
                                                                  : "";
    if (mode.empty()) {
      errors.Warn(KeyPath(path, key), "ignored: strata reads Kueue's topology annotations only");
      continue;
    }
    if (!topology.level.empty()) {
      errors.Add(KeyPath(path, key), "give a required or a preferred topology, not both");
      continue;
    }
    if (value.empty()) errors.Add(KeyPath(path, key), "must name a node label key");
    topology = {value, mode};
  }
  return topology;
}

Duration ActiveDeadline(const FieldView& parent, FieldErrors& errors) {
  constexpr int64_t kMaxSeconds = 100000LL * 3600;
  if (!parent.Has("activeDeadlineSeconds")) return Duration{0};
  int64_t seconds = parent.Integer("activeDeadlineSeconds", 0);
  if (seconds < 1 || seconds > kMaxSeconds) {
    errors.Add(parent.PathOf("activeDeadlineSeconds"),
               "must be at least 1 and at most 100000 hours");
    return Duration{0};
  }
  return std::chrono::seconds(seconds);
}

std::string TakeQueueLabel(ObjectMeta& meta) {
  auto it = meta.labels.find(std::string(kKueueQueueNameLabel));
  if (it == meta.labels.end()) return "";
  std::string queue = it->second;
  meta.labels.erase(it);
  return queue;
}

ResourceRequest FromKubeResources(const FieldView& resources, FieldErrors& errors) {
  ResourceRequest out;
  std::map<std::string, Quantity> limits = resources.QuantityMap("limits");
  std::map<std::string, Quantity> requests = resources.QuantityMap("requests");
  std::string limits_path = resources.PathOf("limits");
  std::string requests_path = resources.PathOf("requests");
  for (const auto& [name, request] : requests) {
    auto limit = limits.find(name);
    std::string path = JoinPath(requests_path, name);
    if (limit == limits.end()) {
      if (IsExtended(name)) {
        errors.Add(path,
                   "an extended resource needs a limit equal to its request (Kubernetes' "
                   "rule); set limits." +
                       name);
      } else {
        ApplyResource(name, request, path, out, errors);
      }
    } else if (IsExtended(name) && limit->second != request) {
      errors.Add(path, "must equal the limit for an extended resource (Kubernetes' rule), got " +
                           Quoted(request.ToString()) + " with limit " +
                           Quoted(limit->second.ToString()));
    } else if (limit->second < request) {
      errors.Add(path, "must be at most the limit (Kubernetes' rule), got " +
                           Quoted(request.ToString()) + " with limit " +
                           Quoted(limit->second.ToString()));
    }
  }
  for (const auto& [name, limit] : limits) {
    ApplyResource(name, limit, JoinPath(limits_path, name), out, errors);
  }
  // A request below its limit is what is reserved; the limit is what the processes may use.
  for (const auto& [name, request] : requests) {
    auto limit = limits.find(name);
    if (limit == limits.end() || !(request < limit->second)) continue;
    if (name == "cpu") {
      out.cpu = request;
      out.cpu_limit = limit->second;
    } else if (name == "memory") {
      out.memory = request;
      out.memory_limit = limit->second;
    }
  }
  return out;
}

KubeContainer FromSingleContainer(const FieldView& pod_spec, WorkloadClass workload,
                                  FieldErrors& errors, bool command_required,
                                  bool node_selector_honoured, ProbeDefaults probe_defaults,
                                  const HandSetRendezvous* rendezvous) {
  KubeContainer out;
  if (node_selector_honoured) {
    out.node_selector = pod_spec.StringMap("nodeSelector");
    ValidateLabels(out.node_selector, pod_spec.PathOf("nodeSelector"), errors);
  } else if (pod_spec.Has("nodeSelector")) {
    errors.Add(pod_spec.PathOf("nodeSelector"),
               "not supported by strata: choose nodes with a ResourceFlavor's nodeLabels or "
               "strata's gpuSelector");
  }
  std::vector<FieldView> containers = pod_spec.ObjectList("containers");
  if (containers.size() != 1) {
    errors.Add(pod_spec.PathOf("containers"),
               "strata runs one container per pod, got " + std::to_string(containers.size()));
    return out;
  }
  const FieldView& c = containers.front();
  out.process.image = c.String("image");
  out.process.command = c.StringList("command");
  if (out.process.command.empty() && command_required) {
    errors.Add(c.PathOf("command"),
               "required: strata runs the command itself and cannot read an image's entrypoint");
  }
  out.process.args = c.StringList("args");
  out.process.env = DecodeEnv(c, "env", errors);
  std::vector<bool> stood_in;
  if (rendezvous != nullptr) {
    std::vector<std::string> argv = out.process.command;
    argv.insert(argv.end(), out.process.args.begin(), out.process.args.end());
    stood_in = HandSetStandIns(out.process.env, *rendezvous, IsTorchrunLauncher(argv),
                               c.PathOf("env"), errors);
  }
  ValidateEnv(out.process.env, workload, c.PathOf("env"), errors, stood_in);
  for (size_t i = stood_in.size(); i-- > 0;) {
    if (stood_in[i]) out.process.env.erase(out.process.env.begin() + static_cast<ptrdiff_t>(i));
  }
  out.process.env_from = DecodeEnvFrom(c, "envFrom", errors);
  out.process.working_dir = c.String("workingDir");
  // Kubernetes' rule: a field the container sets wins over the pod's.
  SecurityContext pod_level = DecodeSecurityContext(pod_spec.Object("securityContext"), errors);
  const SecurityContext own = DecodeSecurityContext(c.Object("securityContext"), errors);
  SecurityContext& security = out.process.security_context;
  security = own;
  if (!security.run_as_user) security.run_as_user = pod_level.run_as_user;
  if (!security.run_as_group) security.run_as_group = pod_level.run_as_group;
  if (!security.run_as_non_root) security.run_as_non_root = pod_level.run_as_non_root;
  // (One level contradicting itself is reported by DecodeSecurityContext.)
  if (security.Contradictory() && !own.Contradictory() && !pod_level.Contradictory()) {
    errors.Add(c.PathOf("securityContext"), "runAsUser is 0 (root) but runAsNonRoot is true");
  }
  out.resources = FromKubeResources(c.Object("resources"), errors);
  ProbePorts ports{workload, {}, {}};
  for (const FieldView& port : c.ObjectList("ports")) {
    const int64_t number = port.Integer("containerPort", 0);
    ports.declared.insert(number);
    if (port.Has("name")) ports.named[port.String("name")] = number;
  }
  // KServe's config serves vLLM on its port 8000, whether the container declares it or not.
  if (probe_defaults == ProbeDefaults::kKServeEngine) ports.declared.insert(kKServeEnginePort);
  DecodeProbes(c, ports, probe_defaults, out.process, errors);
  return out;
}

void DecodeCoreV1Pod(const FieldView& doc, DecodedDocument& out) {
  Pod pod;
  pod.metadata = DecodeMetadata(doc.Object("metadata"), true, false, out.errors);
  pod.spec.queue = TakeQueueLabel(pod.metadata);
  FieldView spec = doc.Object("spec");
  KubeContainer container = FromSingleContainer(spec, WorkloadClass::kTraining, out.errors,
                                                /*command_required=*/true,
                                                /*node_selector_honoured=*/true);
  pod.spec.template_ = std::move(container.process);
  pod.spec.resources = std::move(container.resources);
  pod.spec.node_selector = std::move(container.node_selector);
  pod.spec.restart_policy = spec.String("restartPolicy", "Always");
  pod.spec.node_name = spec.String("nodeName");
  pod.spec.priority = spec.Integer("priority", 0);
  if (spec.Has("priorityClassName")) {
    if (spec.Has("priority")) {
      out.errors.Add(spec.PathOf("priority"), "give priority or priorityClassName, not both");
    }
    pod.spec.priority = PriorityForClass(spec.String("priorityClassName"),
                                         spec.PathOf("priorityClassName"), out.errors)
                            .value_or(0);
  }
  pod.spec.tolerations = DecodeTolerations(spec, "tolerations");
  out.objects.push_back(std::move(pod));
}

}  // namespace strata::api
