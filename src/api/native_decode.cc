// Decoders of strata's native kinds: read validated JSON into the structs, apply defaults and
// check what spans fields.
#include <set>

#include "api/annotations.h"
#include "api/decode_common.h"
#include "api/job_roles.h"
#include "api/kinds.h"
#include "api/status_codec.h"

namespace strata::api {
namespace {

ObjectMeta Meta(const FieldView& doc, bool namespaced, bool label_name, FieldErrors& errors) {
  return DecodeMetadata(doc.Object("metadata"), namespaced, label_name, errors);
}

void RequirePositive(const FieldView& view, std::string_view field, int64_t value,
                     FieldErrors& errors) {
  if (value < 1) errors.Add(view.PathOf(field), "must be at least 1, got " + std::to_string(value));
}

FlavorQuota DecodeFlavorQuota(const FieldView& view, FieldErrors& errors) {
  FlavorQuota flavor{view.String("name"), {}};
  std::set<std::string> seen;
  for (const FieldView& r : view.ObjectList("resources")) {
    ResourceQuota quota{r.String("name"), r.GetQuantity("nominal"),
                        r.OptionalQuantity("borrowingLimit"), r.OptionalQuantity("lendingLimit")};
    if (!seen.insert(quota.resource).second) {
      errors.Add(r.PathOf("name"), "duplicate resource " + Quoted(quota.resource));
    }
    if (quota.lending_limit && *quota.lending_limit > quota.nominal) {
      errors.Add(r.PathOf("lendingLimit"),
                 "must not exceed nominal (" + quota.nominal.ToString() + ")");
    }
    flavor.resources.push_back(std::move(quota));
  }
  return flavor;
}

TopologyConstraint DecodeTopology(const FieldView& topology, FieldErrors& errors) {
  TopologyConstraint out{topology.String("level"), topology.String("mode", "Required")};
  if (out.level.empty() && topology.Has("mode")) {
    errors.Add(topology.PathOf("level"), "required when mode is set");
  }
  return out;
}

// spec.roles into `s`; the fields that describe the one role of a job without roles are refused
// beside them.
void DecodeJobRoles(const FieldView& spec, JobSpec& s, FieldErrors& errors) {
  for (const char* field : {"replicas", "procPerNode", "resources", "nodeSelector", "template"}) {
    if (spec.Has(field)) {
      errors.Add(spec.PathOf(field), "give it per role: the job has spec.roles");
    }
  }
  for (const FieldView& r : spec.ObjectList("roles")) {
    JobRole role;
    role.name = r.String("name");
    role.replicas = r.Integer("replicas", 1);
    role.proc_per_node = r.Integer("procPerNode", 1);
    role.resources = DecodeResourceRequest(r.Object("resources"), errors);
    role.node_selector = r.StringMap("nodeSelector");
    ValidateLabels(role.node_selector, r.PathOf("nodeSelector"), errors);
    role.template_ = DecodeProcessTemplate(r.Object("template"), WorkloadClass::kTraining, errors);
    for (const FieldView& d : r.ObjectList("dependsOn")) {
      role.depends_on.push_back({d.String("role"), d.String("status", "Ready")});
    }
    s.roles.push_back(std::move(role));
  }
  if (s.roles.empty()) errors.Add(spec.PathOf("roles"), "needs at least one role");
}

}  // namespace

void DecodeNativeNode(const FieldView& doc, DecodedDocument& out) {
  Node node;
  node.metadata = Meta(doc, false, false, out.errors);
  FieldView spec = doc.Object("spec");
  for (const FieldView& t : spec.ObjectList("taints")) {
    node.spec.taints.push_back(
        {t.String("key"), t.String("value"), t.String("effect", "NoSchedule")});
  }
  node.spec.unschedulable = spec.Bool("unschedulable", false);
  FieldView status = doc.Object("status");
  node.status.cpu = status.Object("capacity").GetQuantity("cpu");
  node.status.memory = status.Object("capacity").GetQuantity("memory");
  std::set<int64_t> indices;
  for (const FieldView& g : status.ObjectList("gpus")) {
    NodeGpu gpu;
    gpu.index = g.Integer("index", 0);
    gpu.uuid = g.String("uuid");
    gpu.model = g.String("model");
    gpu.memory = g.GetQuantity("memory");
    gpu.nvlink_island = g.Integer("nvlinkIsland", 0);
    gpu.mig_enabled = g.Bool("migEnabled", false);
    for (const FieldView& m : g.ObjectList("migInstances")) {
      gpu.mig_instances.push_back({m.String("profile"), m.String("uuid")});
    }
    if (!gpu.mig_enabled && !gpu.mig_instances.empty()) {
      out.errors.Add(g.PathOf("migInstances"), "MIG instances need migEnabled: true");
    }
    if (!indices.insert(gpu.index).second) {
      out.errors.Add(g.PathOf("index"), "duplicate GPU index " + std::to_string(gpu.index));
    }
    node.status.gpus.push_back(std::move(gpu));
  }
  for (const FieldView& c : status.ObjectList("conditions")) {
    node.status.conditions.push_back(
        {c.String("type"), c.String("status", "Unknown"), c.String("reason"), c.String("message"),
         c.String("lastHeartbeatTime"), c.String("lastTransitionTime")});
  }
  out.objects.push_back(std::move(node));
}

void DecodeNativeQueue(const FieldView& doc, DecodedDocument& out) {
  Queue queue;
  queue.metadata = Meta(doc, false, false, out.errors);
  FieldView spec = doc.Object("spec");
  queue.spec.cohort = spec.String("cohort");
  std::set<std::string> flavors;
  for (const FieldView& f : spec.ObjectList("flavors")) {
    FlavorQuota flavor = DecodeFlavorQuota(f, out.errors);
    if (!flavors.insert(flavor.flavor).second) {
      out.errors.Add(f.PathOf("name"), "duplicate flavor " + Quoted(flavor.flavor));
    }
    queue.spec.flavors.push_back(std::move(flavor));
  }
  queue.spec.weight = spec.GetQuantity("weight", Quantity::FromUnits(1));
  queue.spec.queueing_strategy = spec.String("queueingStrategy", "BestEffortFIFO");
  FieldView preemption = spec.Object("preemption");
  queue.spec.preemption.within_queue = preemption.String("withinQueue", "Never");
  queue.spec.preemption.reclaim_within_cohort = preemption.String("reclaimWithinCohort", "Never");
  queue.spec.reclaimable = spec.Bool("reclaimable", true);
  queue.spec.lend_only = spec.Bool("lendOnly", false);
  for (const FieldView& l : spec.ObjectList("localQueues")) {
    queue.spec.local_queues.push_back({l.String("namespace"), l.String("name")});
  }
  queue.status = DecodeQueueStatus(doc.Object("status"));
  out.objects.push_back(std::move(queue));
}

void DecodeNativeResourceFlavor(const FieldView& doc, DecodedDocument& out) {
  ResourceFlavor flavor;
  flavor.metadata = Meta(doc, false, false, out.errors);
  FieldView spec = doc.Object("spec");
  flavor.spec.node_labels = spec.StringMap("nodeLabels");
  ValidateLabels(flavor.spec.node_labels, spec.PathOf("nodeLabels"), out.errors);
  flavor.spec.tolerations = DecodeTolerations(spec, "tolerations");
  out.objects.push_back(std::move(flavor));
}

void DecodeNativeJob(const FieldView& doc, DecodedDocument& out) {
  Job job;
  job.metadata = Meta(doc, true, true, out.errors);
  FieldView spec = doc.Object("spec");
  JobSpec& s = job.spec;
  if (spec.Has("roles")) {
    DecodeJobRoles(spec, s, out.errors);
  } else {
    s.replicas = spec.Integer("replicas", 1);
    RequirePositive(spec, "replicas", s.replicas, out.errors);
    s.proc_per_node = spec.Integer("procPerNode", 1);
    RequirePositive(spec, "procPerNode", s.proc_per_node, out.errors);
    s.resources = DecodeResourceRequest(spec.Object("resources"), out.errors);
    s.node_selector = spec.StringMap("nodeSelector");
    ValidateLabels(s.node_selector, spec.PathOf("nodeSelector"), out.errors);
    if (!spec.Has("template")) out.errors.Add(spec.PathOf("template"), "required");
    s.template_ =
        DecodeProcessTemplate(spec.Object("template"), WorkloadClass::kTraining, out.errors);
  }
  s.gpu_selector = DecodeGpuSelector(spec.Object("gpuSelector"));
  s.tolerations = DecodeTolerations(spec, "tolerations");
  s.topology = DecodeTopology(spec.Object("topology"), out.errors);
  s.max_restarts = spec.Integer("maxRestarts", 0);
  FieldView checkpoint = spec.Object("checkpoint");
  s.checkpoint.dir = checkpoint.String("dir");
  s.checkpoint.interval = checkpoint.GetDuration("interval");
  if (s.checkpoint.dir.empty() && checkpoint.Has("interval")) {
    out.errors.Add(checkpoint.PathOf("dir"), "required when interval is set");
  }
  s.priority = spec.Integer("priority", 0);
  s.queue = spec.String("queue");
  s.runtime_limit = spec.GetDuration("runtimeLimit");
  s.clean_pod_policy = spec.String("cleanPodPolicy", "Running");
  FieldView success = spec.Object("successPolicy");
  s.success_policy.op = success.String("operator", "All");
  s.success_policy.roles = success.StringList("roles");
  ValidateJobRoles(s, {}, out.errors);
  job.status = DecodeJobStatus(doc.Object("status"));
  out.objects.push_back(std::move(job));
}

void DecodeNativeService(const FieldView& doc, DecodedDocument& out) {
  Service service;
  service.metadata = Meta(doc, true, true, out.errors);
  FieldView spec = doc.Object("spec");
  ServiceSpec& s = service.spec;
  s.model = spec.String("model");
  std::set<std::string> names;
  int64_t total_weight = 0;
  for (const FieldView& v : spec.ObjectList("versions")) {
    ServiceVersion version{v.String("name"), v.Integer("weight", 100), std::nullopt};
    if (v.Has("engine")) {
      version.engine =
          DecodeProcessTemplate(v.Object("engine"), WorkloadClass::kService, out.errors);
    }
    if (!names.insert(version.name).second) {
      out.errors.Add(v.PathOf("name"), "duplicate version " + Quoted(version.name));
    }
    total_weight += std::min<int64_t>(version.weight, 1'000'000);
    s.versions.push_back(std::move(version));
  }
  if (!s.versions.empty() && total_weight == 0) {
    out.errors.Add(spec.PathOf("versions"), "at least one version needs a weight above 0");
  }
  s.engine = DecodeProcessTemplate(spec.Object("engine"), WorkloadClass::kService, out.errors);
  s.resources = DecodeResourceRequest(spec.Object("resources"), out.errors);
  s.gpu_selector = DecodeGpuSelector(spec.Object("gpuSelector"));
  s.node_selector = spec.StringMap("nodeSelector");
  ValidateLabels(s.node_selector, spec.PathOf("nodeSelector"), out.errors);
  s.tolerations = DecodeTolerations(spec, "tolerations");
  s.tensor_parallel = spec.Integer("tensorParallel", 1);
  RequirePositive(spec, "tensorParallel", s.tensor_parallel, out.errors);
  s.nodes_per_replica = spec.Integer("nodesPerReplica", 1);
  RequirePositive(spec, "nodesPerReplica", s.nodes_per_replica, out.errors);
  s.min_replicas = spec.Integer("minReplicas", 1);
  s.max_replicas = spec.Integer("maxReplicas", 1);
  FieldView autoscaling = spec.Object("autoscaling");
  Autoscaling& a = s.autoscaling;
  a.metric = autoscaling.String("metric", "concurrency");
  a.target = autoscaling.Number("target", 8);
  a.stable_window = autoscaling.GetDuration("stableWindow", std::chrono::seconds(60));
  a.panic_window = autoscaling.GetDuration("panicWindow", std::chrono::seconds(6));
  a.scale_to_zero_after = autoscaling.GetDuration("scaleToZeroAfter");
  a.max_scale_up_rate = autoscaling.Number("maxScaleUpRate", a.max_scale_up_rate);
  a.max_scale_down_rate = autoscaling.Number("maxScaleDownRate", a.max_scale_down_rate);
  if (a.target <= 0) out.errors.Add(autoscaling.PathOf("target"), "must be above 0");
  for (const char* rate : {"maxScaleUpRate", "maxScaleDownRate"}) {
    if (!autoscaling.Has(rate)) continue;
    if (a.metric == "rps") {
      out.errors.Add(autoscaling.PathOf(rate),
                     "applies to the concurrency, queue and kvCache metrics; rps paces its own "
                     "scale-down");
    } else if (!(autoscaling.Number(rate, 0) > 1)) {
      out.errors.Add(autoscaling.PathOf(rate), "must be above 1 (a ratio of replica counts)");
    }
  }
  if (a.metric == "kvCache" && a.target > 1) {
    out.errors.Add(autoscaling.PathOf("target"), "kvCache is a fraction: at most 1");
  }
  if (a.scale_to_zero_after.count() > 0 && s.min_replicas != 0) {
    out.errors.Add(autoscaling.PathOf("scaleToZeroAfter"), "needs minReplicas: 0");
  }
  s.tenants = spec.StringList("tenants");
  std::set<std::string> objective_names;
  for (const FieldView& objective : spec.ObjectList("objectives")) {
    ServiceObjective& o = s.objectives.emplace_back();
    o.name = objective.String("name");
    o.priority = objective.Integer("priority", 0);
    if (!objective_names.insert(o.name).second) {
      out.errors.Add(objective.PathOf("name"), Quoted(o.name) + " is named twice");
    }
  }
  s.queue = spec.String("queue");
  s.priority = spec.Integer("priority", 0);
  FieldView rollout = spec.Object("rollout");
  s.max_surge = rollout.Integer("maxSurge", 1);
  s.max_unavailable = rollout.Integer("maxUnavailable", 0);
  if (s.max_surge == 0 && s.max_unavailable == 0) {
    out.errors.Add(rollout.PathOf("maxUnavailable"),
                   "may not be 0 when maxSurge is 0: the update could never start a replica");
  }
  if (spec.Has("leader")) {
    s.leader = DecodeProcessTemplate(spec.Object("leader"), WorkloadClass::kService, out.errors);
  }
  s.topology = DecodeTopology(spec.Object("topology"), out.errors);
  s.ordinal_names = spec.Bool("ordinalNames", false);
  s.ordered_start = spec.Bool("orderedStart", false);
  ApplyServiceDefaults(s, spec.Has("tensorParallel"), spec.Has("maxReplicas"));
  if (s.max_replicas < s.min_replicas) {
    out.errors.Add(spec.PathOf("maxReplicas"),
                   "must be at least minReplicas (" + std::to_string(s.min_replicas) + ")");
  }
  service.status = DecodeServiceStatus(doc.Object("status"));
  out.objects.push_back(std::move(service));
}

void DecodeNativePod(const FieldView& doc, DecodedDocument& out) {
  Pod pod;
  pod.metadata = Meta(doc, true, false, out.errors);
  FieldView spec = doc.Object("spec");
  PodSpec& s = pod.spec;
  FieldView owner = spec.Object("owner");
  s.owner = {owner.String("kind"), owner.String("name"), owner.Integer("replica", 0),
             owner.Integer("rank", 0), owner.String("uid")};
  s.queue = spec.String("queue");
  s.priority = spec.Integer("priority", 0);
  s.restart_policy = spec.String("restartPolicy", "Always");
  s.node_name = spec.String("nodeName");
  s.resources = DecodeResourceRequest(spec.Object("resources"), out.errors);
  s.gpu_selector = DecodeGpuSelector(spec.Object("gpuSelector"));
  s.node_selector = spec.StringMap("nodeSelector");
  ValidateLabels(s.node_selector, spec.PathOf("nodeSelector"), out.errors);
  s.tolerations = DecodeTolerations(spec, "tolerations");
  WorkloadClass workload =
      s.owner.kind == "Service" ? WorkloadClass::kService : WorkloadClass::kTraining;
  // strata adds nothing to the environment of a pod it did not make: every name is the user's.
  const bool foreign = pod.metadata.annotations.count(kForeignPodAnnotation) > 0;
  s.template_ = DecodeProcessTemplate(spec.Object("template"), workload, out.errors, !foreign);
  s.assigned_gpus = DecodeAssignedGpus(spec, "assignedGpus");
  if (!s.assigned_gpus.empty() && s.node_name.empty()) {
    out.errors.Add(spec.PathOf("assignedGpus"), "GPUs are assigned only with nodeName");
  }
  FieldView gang = spec.Object("gang");
  s.gang = {gang.String("name"), gang.Integer("minMember", 0), gang.QuantityMap("minResources")};
  pod.status = DecodePodStatus(doc.Object("status"));
  out.objects.push_back(std::move(pod));
}

void DecodeNativeTenant(const FieldView& doc, DecodedDocument& out) {
  Tenant tenant;
  tenant.metadata = Meta(doc, false, false, out.errors);
  FieldView spec = doc.Object("spec");
  tenant.spec.api_keys = spec.StringList("apiKeys");
  std::set<std::string> keys;
  for (size_t i = 0; i < tenant.spec.api_keys.size(); ++i) {
    const std::string& key = tenant.spec.api_keys[i];
    std::string path = IndexPath(spec.PathOf("apiKeys"), i);
    if (key.size() < 8) out.errors.Add(path, "an API key needs at least 8 characters");
    if (!keys.insert(key).second) out.errors.Add(path, "duplicate API key");
  }
  tenant.spec.tokens_per_minute = spec.Integer("tokensPerMinute", 0);
  tenant.spec.priority_class = spec.String("priorityClass", "standard");
  out.objects.push_back(std::move(tenant));
}

void DecodeNativeWorkloadPriorityClass(const FieldView& doc, DecodedDocument& out) {
  WorkloadPriorityClass priority_class;
  priority_class.metadata = Meta(doc, false, false, out.errors);
  FieldView spec = doc.Object("spec");
  priority_class.spec.value = spec.Integer("value", 0);
  CheckWorkloadPriority(priority_class.spec.value, spec.PathOf("value"), out.errors);
  priority_class.spec.description = spec.String("description");
  out.objects.push_back(std::move(priority_class));
}

void DecodeNativeNamespace(const FieldView& doc, DecodedDocument& out) {
  // Its name is a DNS-1123 label, as every object's namespace is.
  out.objects.push_back(Namespace{Meta(doc, false, true, out.errors)});
}

void DecodeNativeEvent(const FieldView& doc, DecodedDocument& out) {
  Event event;
  event.metadata = Meta(doc, true, false, out.errors);
  FieldView involved = doc.Object("involvedObject");
  event.involved_object = {involved.String("kind"), involved.String("name"),
                           involved.String("namespace"), involved.String("uid")};
  event.type = doc.String("type", "Normal");
  event.reason = doc.String("reason");
  event.message = doc.String("message");
  event.count = doc.Integer("count", 1);
  event.first_timestamp = doc.String("firstTimestamp");
  event.last_timestamp = doc.String("lastTimestamp");
  out.objects.push_back(std::move(event));
}

}  // namespace strata::api
