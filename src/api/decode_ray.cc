// KubeRay's ray.io/v1 RayCluster and RayJob. A cluster's head and worker groups become one native
// Job: one gang of 1 + the workers' pods, each running the script of ray_start.h, which starts
// the pod's group with `ray start` as KubeRay would. A RayJob's head runs the entrypoint once
// Ray is up, and the job ends with the head (its success role), stopping the workers.
#include <algorithm>
#include <array>

#include "api/compat_schema.h"
#include "api/decode_common.h"
#include "api/kube_common.h"
#include "api/native_schema.h"
#include "api/ray_start.h"

namespace strata::api {
namespace {

using T = FieldType;

// KubeRay's annotation that runs the containers' own commands instead of `ray start`.
constexpr std::string_view kOverwriteCommandAnnotation = "ray.io/overwrite-container-cmd";
// The manager KubeRay answers to, whose part strata plays.
constexpr std::string_view kKubeRayOperator = "ray.io/kuberay-operator";
// KubeRay recreates a RayCluster's failed pods without end; strata restarts the gang, this often.
constexpr int64_t kClusterRestarts = 1'000'000;
// Parameters strata sets itself: the head's role and address, and whether Ray blocks.
constexpr std::array<std::string_view, 3> kOwnStartParams = {"address", "head", "block"};

constexpr std::string_view kNoAddresses =
    "strata gives every pod the head's address (MASTER_ADDR and RAY_ADDRESS) itself";

// Kubernetes' container, with the lifecycle hooks KubeRay's samples give Ray pods.
const TypeSchema* RayContainerSchema() {
  static const TypeSchema s = [] {
    TypeSchema c = *KubeContainerSchema();
    c.doc = "A Ray container: strata runs its command, if any, then `ray start`.";
    c.fields.push_back({"lifecycle", T::kIgnored,
                        "strata runs no lifecycle hooks; a stopped pod's processes get SIGTERM, "
                        "which stops Ray"});
    return c;
  }();
  return &s;
}

const TypeSchema* RayPodSpecSchema() {
  static const TypeSchema s = [] {
    TypeSchema p = *KubePodSpecSchema();
    for (FieldSpec& f : p.fields) {
      if (f.name == "containers") f.nested = RayContainerSchema;
      if (f.name == "restartPolicy") {
        f.doc = "Any: strata restarts a Ray cluster's pods as one group.";
      }
    }
    return p;
  }();
  return &s;
}

const TypeSchema* RayPodTemplateSchema() {
  static const TypeSchema s = [] {
    TypeSchema t = *KubePodTemplateSchema();
    for (FieldSpec& f : t.fields) {
      if (f.name == "spec") f.nested = RayPodSpecSchema;
    }
    return t;
  }();
  return &s;
}

const TypeSchema* HeadGroupSpecSchema() {
  static const TypeSchema s{
      "HeadGroupSpec",
      "The head pod.",
      {{"template", T::kObject, "The head's pod template.", RayPodTemplateSchema, {}, true},
       {"rayStartParams", T::kStringMap,
        "`ray start` options without their dashes (port, dashboard-host, num-cpus...)."},
       {"serviceType", T::kIgnored, kNoAddresses},
       {"headService", T::kIgnored, kNoAddresses},
       {"enableIngress", T::kUnsupported, "strata creates no Ingress; reach the head directly"}}};
  return &s;
}

const TypeSchema* WorkerGroupSpecSchema() {
  static const TypeSchema s{
      "WorkerGroupSpec",
      "A group of worker pods from one template.",
      {{"groupName", T::kString, "The group's name.", nullptr, {}, true},
       {"replicas", T::kNonNegativeInteger,
        "Worker replicas (default 0), kept between minReplicas and maxReplicas."},
       {"minReplicas", T::kNonNegativeInteger, "Fewest replicas (default 0)."},
       {"maxReplicas", T::kNonNegativeInteger, "Most replicas (default no limit)."},
       {"numOfHosts", T::kNonNegativeInteger, "Pods per replica (default 1)."},
       {"rayStartParams", T::kStringMap, "`ray start` options without their dashes."},
       {"template", T::kObject, "The workers' pod template.", RayPodTemplateSchema, {}, true},
       {"idleTimeoutSeconds", T::kIgnored, "only the Ray autoscaler reads it"},
       {"scaleStrategy", T::kUnsupported, "strata runs every replica; scale with replicas"},
       {"suspend", T::kUnsupported, "suspend the whole RayCluster (spec.suspend) in a queue"}}};
  return &s;
}

const TypeSchema* RayClusterSpecSchema() {
  static const TypeSchema s{
      "RayClusterSpec",
      "A Ray cluster: a head and worker groups, placed and started as one gang.",
      {{"headGroupSpec", T::kObject, "The head pod.", HeadGroupSpecSchema, {}, true},
       {"workerGroupSpecs", T::kObjectList, "The worker groups.", WorkerGroupSpecSchema},
       {"rayVersion", T::kString, "The Ray version of the image (informational)."},
       {"enableInTreeAutoscaling", T::kBool,
        "false: strata runs each group's replicas (the Ray autoscaler is not supported)."},
       {"suspend", T::kBool,
        "true: wait for the queue's admission; needs the kueue.x-k8s.io/queue-name label."},
       {"managedBy", T::kString, "ray.io/kuberay-operator (the default), whose part strata plays."},
       {"headServiceAnnotations", T::kIgnored, kNoAddresses},
       {"autoscalerOptions", T::kUnsupported, "strata does not run the Ray autoscaler"},
       {"gcsFaultToleranceOptions", T::kUnsupported,
        "strata restarts the whole cluster; it keeps no GCS state in Redis"}}};
  return &s;
}

const TypeSchema* RayJobSpecSchema() {
  static const TypeSchema s{
      "RayJobSpec",
      "A Ray job: a cluster made for it, and an entrypoint run once the cluster is up.",
      {{"entrypoint",
        T::kString,
        "The shell command run on the head once Ray is up, with RAY_ADDRESS set; its exit status "
        "is the job's.",
        nullptr,
        {},
        true},
       {"rayClusterSpec",
        T::kObject,
        "The cluster made for the job.",
        RayClusterSpecSchema,
        {},
        true},
       {"shutdownAfterJobFinishes", T::kBool,
        "true: the cluster's pods are deleted when the entrypoint ends. strata stops the cluster "
        "when the entrypoint ends either way; false keeps its pods for their logs."},
       {"submissionMode",
        T::kEnum,
        "K8sJobMode (default), HTTPMode or SidecarMode: strata runs the entrypoint on the head.",
        nullptr,
        {"K8sJobMode", "HTTPMode", "SidecarMode", "InteractiveMode"}},
       {"backoffLimit", T::kNonNegativeInteger,
        "Retries of the whole job, each on a new cluster (default 0)."},
       {"activeDeadlineSeconds", T::kInteger, "The job's runtime limit."},
       {"suspend", T::kBool,
        "true: wait for the queue's admission; needs the kueue.x-k8s.io/queue-name label."},
       {"managedBy", T::kString, "ray.io/kuberay-operator (the default), whose part strata plays."},
       {"submitterPodTemplate", T::kIgnored,
        "strata runs the entrypoint on the head pod itself, with RAY_ADDRESS set"},
       {"submitterConfig", T::kIgnored,
        "strata runs the entrypoint on the head pod itself; retry the job with backoffLimit"},
       {"ttlSecondsAfterFinished", T::kIgnored,
        "strata stops the cluster as soon as the entrypoint ends"},
       {"jobId", T::kIgnored, "strata names the run after the RayJob"},
       {"metadata", T::kIgnored, "strata runs the entrypoint directly, not as a submitted job"},
       {"runtimeEnvYAML", T::kUnsupported,
        "strata does not build Ray runtime environments: install packages in the image and set "
        "env in the head group's template"},
       {"entrypointNumCpus", T::kUnsupported,
        "the entrypoint runs on the head with the head's resources"},
       {"entrypointNumGpus", T::kUnsupported,
        "the entrypoint runs on the head with the head's resources"},
       {"entrypointResources", T::kUnsupported,
        "the entrypoint runs on the head with the head's resources"},
       {"clusterSelector", T::kUnsupported,
        "strata makes each RayJob its own cluster: give rayClusterSpec"},
       {"deletionStrategy", T::kUnsupported,
        "strata stops the cluster when the entrypoint ends (shutdownAfterJobFinishes)"}}};
  return &s;
}

// Reports a managedBy other than KubeRay's operator.
void RequireKubeRay(const FieldView& spec, FieldErrors& errors) {
  if (spec.Has("managedBy") && spec.String("managedBy") != kKubeRayOperator) {
    errors.Add(spec.PathOf("managedBy"),
               "strata manages every Ray object it admits: leave it out or give " +
                   std::string(kKubeRayOperator) + ", got " + Quoted(spec.String("managedBy")));
  }
}

// A group's start parameters without those strata sets itself (reporting any it may not take).
std::map<std::string, std::string> StartParams(const FieldView& group, bool head,
                                               FieldErrors& errors) {
  std::map<std::string, std::string> params = group.StringMap("rayStartParams");
  const std::string path = group.PathOf("rayStartParams");
  for (std::string_view own : kOwnStartParams) {
    auto it = params.find(std::string(own));
    if (it == params.end()) continue;
    if (own != "block") {
      errors.Add(KeyPath(path, it->first), "set by strata: " + std::string(kNoAddresses));
    } else if (it->second != "true") {
      errors.Warn(KeyPath(path, it->first),
                  "ignored: strata runs `ray start --block`, so that the pod lives as long as Ray");
    }
    params.erase(it);
  }
  auto port = params.find("port");
  if (port != params.end()) {
    if (!head) {
      errors.Add(KeyPath(path, "port"), "only the head's port can be given");
    } else if (port->second.empty() || port->second.size() > 5 ||
               port->second.find_first_not_of("0123456789") != std::string::npos ||
               std::stoi(port->second) < 1 || std::stoi(port->second) > 65535) {
      errors.Add(KeyPath(path, "port"), "must be a port number, got " + Quoted(port->second));
    }
  }
  return params;
}

// The largest of each resource of `a` and `b`; reports differing MIG profiles at `path`.
ResourceRequest Largest(const ResourceRequest& a, const ResourceRequest& b, const std::string& path,
                        FieldErrors& errors) {
  ResourceRequest out = a;
  out.cpu = std::max(a.cpu, b.cpu);
  out.memory = std::max(a.memory, b.memory);
  out.gpu = std::max(a.gpu, b.gpu);
  out.gpu_memory = std::max(a.gpu_memory, b.gpu_memory);
  if (a.mig_profile != b.mig_profile) {
    errors.Add(path, "every group of a Ray cluster needs the same MIG profile");
  }
  return out;
}

// One group read from its spec: its Ray side, and its template read as a gang's.
struct DecodedGroup {
  RayGroup group;
  JobSpec gang;  // the template's process, resources, tolerations, topology and priority
  std::string resources_path;
};

DecodedGroup DecodeGroup(const FieldView& spec, int64_t pods, bool head, bool overwrite,
                         FieldErrors& errors) {
  DecodedGroup out;
  FieldView pod_template = spec.Object("template");
  DecodeGangPodTemplate(pod_template, out.gang, errors, /*command_required=*/overwrite);
  if (!out.gang.node_selector.empty()) {
    errors.Add(pod_template.Object("spec").PathOf("nodeSelector"),
               "not supported by strata for a Ray cluster: choose nodes with a ResourceFlavor's "
               "nodeLabels or strata's gpuSelector");
  }
  out.group.pods = pods;
  out.group.start_params = StartParams(spec, head, errors);
  out.group.process = out.gang.template_;
  out.group.resources = out.gang.resources;
  std::vector<FieldView> containers = pod_template.Object("spec").ObjectList("containers");
  out.resources_path =
      containers.empty() ? pod_template.PathOf("spec") : containers.front().PathOf("resources");
  return out;
}

// Reports a field of `group`'s template that differs from the head's: one gang runs one image
// as one user, with one set of tolerations, one topology and one priority.
void RequireSameAsHead(const DecodedGroup& group, const DecodedGroup& head,
                       const FieldView& template_view, FieldErrors& errors) {
  const std::string path = template_view.PathOf("spec");
  const std::string why =
      ": strata places a Ray cluster's pods as one gang and needs it to equal "
      "the head group's";
  const ProcessTemplate& p = group.gang.template_;
  const ProcessTemplate& h = head.gang.template_;
  if (p.image != h.image) errors.Add(JoinPath(path, "containers[0].image"), "differs" + why);
  if (p.security_context != h.security_context) {
    errors.Add(JoinPath(path, "securityContext"), "differs" + why);
  }
  if (group.gang.tolerations != head.gang.tolerations) {
    errors.Add(JoinPath(path, "tolerations"), "differ" + why);
  }
  if (group.gang.priority != head.gang.priority) {
    errors.Add(JoinPath(path, "priorityClassName"), "differs" + why);
  }
  if (group.gang.topology != head.gang.topology) {
    errors.Add(template_view.Object("metadata").PathOf("annotations"),
               "Kueue topology annotations differ" + why);
  }
}

// The workers of a worker group: replicas kept between minReplicas and maxReplicas, KubeRay's
// rule, times numOfHosts.
int64_t WorkerPods(const FieldView& group, FieldErrors& errors) {
  const int64_t min = group.Integer("minReplicas", 0);
  const int64_t max = group.Integer("maxReplicas", kMaxJobReplicas);
  if (min > max) errors.Add(group.PathOf("minReplicas"), "must not be above maxReplicas");
  const int64_t replicas = std::clamp(group.Integer("replicas", 0), min, std::max(min, max));
  const int64_t hosts = group.Integer("numOfHosts", 1);
  if (hosts < 1) errors.Add(group.PathOf("numOfHosts"), "must be at least 1");
  int64_t pods = 0;
  if (__builtin_mul_overflow(replicas, hosts, &pods) || pods > kMaxJobReplicas) {
    errors.Add(group.PathOf("replicas"), "replicas x numOfHosts makes more than " +
                                             std::to_string(kMaxJobReplicas) + " pods");
    return 0;
  }
  return pods;
}

// Decodes `cluster` (a RayClusterSpec) into `job`'s gang; `entrypoint` is empty for a RayCluster.
void DecodeRayCluster(const FieldView& cluster, bool overwrite, const RayEntrypoint& entrypoint,
                      Job& job, FieldErrors& errors) {
  JobSpec& s = job.spec;
  RequireKubeRay(cluster, errors);
  if (cluster.Bool("enableInTreeAutoscaling", false)) {
    errors.Add(cluster.PathOf("enableInTreeAutoscaling"),
               "strata does not run the Ray autoscaler: it starts each worker group's replicas; "
               "leave it out or set false");
  }
  FieldView head_spec = cluster.Object("headGroupSpec");
  std::vector<DecodedGroup> groups;
  groups.push_back(DecodeGroup(head_spec, 1, true, overwrite, errors));
  int64_t pods = 1;
  for (const FieldView& worker : cluster.ObjectList("workerGroupSpecs")) {
    const int64_t group_pods = WorkerPods(worker, errors);
    if (pods + group_pods > kMaxJobReplicas) {
      errors.Add(worker.PathOf("replicas"),
                 "the cluster has more than " + std::to_string(kMaxJobReplicas) + " pods");
      return;
    }
    pods += group_pods;
    if (group_pods == 0) continue;  // a group scaled to nothing starts no pod
    groups.push_back(DecodeGroup(worker, group_pods, false, overwrite, errors));
    RequireSameAsHead(groups.back(), groups.front(), worker.Object("template"), errors);
  }
  if (!errors.empty()) return;

  const DecodedGroup& head = groups.front();
  s.replicas = pods;
  s.tolerations = head.gang.tolerations;
  s.topology = head.gang.topology;
  s.priority = head.gang.priority;
  s.resources = head.group.resources;
  for (const DecodedGroup& g : groups) {
    s.resources = Largest(s.resources, g.group.resources, g.resources_path, errors);
  }
  for (const DecodedGroup& g : groups) {
    if (g.group.resources != s.resources) {
      errors.Warn(g.resources_path,
                  "every pod of a strata gang reserves the same resources: this group's pods "
                  "reserve cpu " +
                      s.resources.cpu.ToString() + ", memory " + s.resources.memory.ToString() +
                      " and " + s.resources.gpu.ToString() +
                      " GPU(s), the largest group's; `ray start` advertises its own request");
    }
  }
  std::vector<RayGroup> ray_groups;
  for (const DecodedGroup& g : groups) ray_groups.push_back(g.group);
  s.template_.image = head.gang.template_.image;
  s.template_.security_context = head.gang.template_.security_context;
  s.template_.command = {"/bin/bash", "-c", RayPodScript(ray_groups, entrypoint, overwrite)};
}

// Whether the object asks for its containers' own commands (KubeRay's annotation).
bool OverwriteCommand(const ObjectMeta& meta) {
  auto it = meta.annotations.find(std::string(kOverwriteCommandAnnotation));
  return it != meta.annotations.end() && it->second == "true";
}

// A RayJob's gang as two roles of one template, the head (rank 0, which runs the entrypoint)
// and the workers, so that the job succeeds with its head and stops the workers then.
void SplitHeadRole(JobSpec& s) {
  JobRole head{.name = "head",
               .replicas = 1,
               .proc_per_node = s.proc_per_node,
               .resources = s.resources,
               .template_ = s.template_};
  s.roles.push_back(head);
  if (s.replicas > 1) {
    JobRole workers = head;
    workers.name = "worker";
    workers.replicas = s.replicas - 1;
    s.roles.push_back(std::move(workers));
  }
  s.replicas = JobSpec{}.replicas;
  s.proc_per_node = JobSpec{}.proc_per_node;
  s.resources = {};
  s.template_ = {};
  s.success_policy.roles = {"head"};
}

}  // namespace

const TypeSchema* RayClusterSchema() {
  static const TypeSchema s =
      CompatDocument("RayCluster", "ray.io/v1", "A KubeRay Ray cluster.", RayClusterSpecSchema);
  return &s;
}

const TypeSchema* RayJobSchema() {
  static const TypeSchema s =
      CompatDocument("RayJob", "ray.io/v1", "A KubeRay Ray job.", RayJobSpecSchema);
  return &s;
}

void DecodeRayCluster(const FieldView& doc, DecodedDocument& out) {
  FieldErrors& errors = out.errors;
  Job job;
  job.metadata = DecodeMetadata(doc.Object("metadata"), true, true, errors);
  job.spec.queue = TakeQueueLabel(job.metadata);
  job.spec.max_restarts = kClusterRestarts;
  FieldView spec = doc.Object("spec");
  RequireQueueToSuspend(spec, "RayCluster", job.spec.queue, errors);
  DecodeRayCluster(spec, OverwriteCommand(job.metadata), RayEntrypoint{}, job, errors);
  out.objects.push_back(std::move(job));
}

void DecodeRayJob(const FieldView& doc, DecodedDocument& out) {
  FieldErrors& errors = out.errors;
  Job job;
  job.metadata = DecodeMetadata(doc.Object("metadata"), true, true, errors);
  JobSpec& s = job.spec;
  s.queue = TakeQueueLabel(job.metadata);
  FieldView spec = doc.Object("spec");
  RequireQueueToSuspend(spec, "RayJob", s.queue, errors);
  RequireKubeRay(spec, errors);
  if (spec.String("submissionMode") == "InteractiveMode") {
    errors.Add(spec.PathOf("submissionMode"),
               "strata runs the entrypoint itself once the cluster is up; InteractiveMode is not "
               "supported");
  }
  const std::string entrypoint = spec.String("entrypoint");
  if (entrypoint.empty()) errors.Add(spec.PathOf("entrypoint"), "must not be empty");
  s.max_restarts = spec.Integer("backoffLimit", 0);
  s.runtime_limit = ActiveDeadline(spec, errors);
  if (spec.Bool("shutdownAfterJobFinishes", false)) {
    s.clean_pod_policy = "All";
  } else {
    s.clean_pod_policy = "None";
    errors.Warn(spec.PathOf("shutdownAfterJobFinishes"),
                "false (the default): strata ends a RayJob with its entrypoint and stops the "
                "cluster's processes then; their pods are kept for their logs");
  }
  FieldView cluster = spec.Object("rayClusterSpec");
  if (cluster.Bool("suspend", false)) {
    errors.Add(cluster.PathOf("suspend"), "suspend the RayJob itself (spec.suspend)");
  }
  DecodeRayCluster(cluster, OverwriteCommand(job.metadata), RayEntrypoint{entrypoint}, job, errors);
  SplitHeadRole(s);
  out.objects.push_back(std::move(job));
}

}  // namespace strata::api
