#include "api/encode.h"

#include "api/duration.h"
#include "api/encode_fields.h"
#include "api/status_codec.h"
#include "common/base64.h"

namespace strata::api {
namespace {

using nlohmann::json;

json Metadata(const ObjectMeta& m) {
  json out = json::object();
  out["name"] = m.name;
  PutString(out, "namespace", m.namespace_name);
  PutMap(out, "labels", m.labels);
  PutMap(out, "annotations", m.annotations);
  PutString(out, "uid", m.uid);
  PutString(out, "resourceVersion", m.resource_version);
  PutString(out, "creationTimestamp", m.creation_timestamp);
  if (!m.managed_fields.empty()) {
    out["managedFields"] = json::parse(m.managed_fields, nullptr, /*allow_exceptions=*/false);
  }
  return out;
}

json Resources(const ResourceRequest& r) {
  json out = json::object();
  PutQuantity(out, "cpu", r.cpu);
  PutQuantity(out, "memory", r.memory);
  PutQuantity(out, "gpu", r.gpu);
  PutQuantity(out, "gpuMemory", r.gpu_memory);
  PutString(out, "migProfile", r.mig_profile);
  json limits = json::object();
  PutQuantity(limits, "cpu", r.cpu_limit);
  PutQuantity(limits, "memory", r.memory_limit);
  if (!limits.empty()) out["limits"] = std::move(limits);
  return out;
}

json Selector(const GpuSelector& s) {
  json out = json::object();
  PutStrings(out, "models", s.models);
  PutQuantity(out, "minMemory", s.min_memory);
  return out;
}

json Tolerations(const std::vector<Toleration>& tolerations) {
  json out = json::array();
  for (const Toleration& t : tolerations) {
    json item = json::object();
    PutString(item, "key", t.key);
    item["operator"] = t.op;
    PutString(item, "value", t.value);
    PutString(item, "effect", t.effect);
    out.push_back(std::move(item));
  }
  return out;
}

json EncodeProbe(const Probe& p) {
  json out = json::object();
  if (p.action == ProbeAction::kExec) {
    out["exec"] = {{"command", p.command}};
  } else {
    json handler = json::object();
    if (p.port != 0) handler["port"] = p.port;
    if (p.action == ProbeAction::kHttpGet) {
      handler["path"] = p.path;
      if (p.scheme != "HTTP") handler["scheme"] = p.scheme;
      if (!p.http_headers.empty()) {
        json headers = json::array();
        for (const HttpHeader& h : p.http_headers) {
          headers.push_back({{"name", h.name}, {"value", h.value}});
        }
        handler["httpHeaders"] = std::move(headers);
      }
    }
    out[p.action == ProbeAction::kHttpGet ? "httpGet" : "tcpSocket"] = std::move(handler);
  }
  if (p.initial_delay_seconds != 0) out["initialDelaySeconds"] = p.initial_delay_seconds;
  out["periodSeconds"] = p.period_seconds;
  out["timeoutSeconds"] = p.timeout_seconds;
  out["successThreshold"] = p.success_threshold;
  out["failureThreshold"] = p.failure_threshold;
  if (p.termination_grace_period_seconds) {
    out["terminationGracePeriodSeconds"] = *p.termination_grace_period_seconds;
  }
  return out;
}

// An env item's valueFrom in Kubernetes' shape.
json EnvSource(const EnvVarSource& s) {
  json ref = json::object();
  switch (s.kind) {
    case EnvSourceKind::kConfigMapKey:
    case EnvSourceKind::kSecretKey:
      ref = {{"name", s.name}, {"key", s.key}};
      if (s.optional) ref["optional"] = true;
      return {{s.kind == EnvSourceKind::kSecretKey ? "secretKeyRef" : "configMapKeyRef", ref}};
    case EnvSourceKind::kField:
      return {{"fieldRef", {{"fieldPath", s.path}}}};
    case EnvSourceKind::kResourceField:
      ref = {{"resource", s.path}};
      PutQuantity(ref, "divisor", s.divisor);
      return {{"resourceFieldRef", ref}};
  }
  return ref;
}

json Template(const ProcessTemplate& t) {
  json out = json::object();
  PutString(out, "image", t.image);
  out["command"] = t.command;
  PutStrings(out, "args", t.args);
  if (!t.env.empty()) {
    json env = json::array();
    for (const EnvVar& e : t.env) {
      json item = {{"name", e.name}};
      PutString(item, "value", e.value);
      if (e.value_from) item["valueFrom"] = EnvSource(*e.value_from);
      env.push_back(std::move(item));
    }
    out["env"] = std::move(env);
  }
  if (!t.env_from.empty()) {
    json env_from = json::array();
    for (const EnvFromSource& e : t.env_from) {
      json ref = {{"name", e.name}};
      if (e.optional) ref["optional"] = true;
      json item = {{e.secret ? "secretRef" : "configMapRef", std::move(ref)}};
      PutString(item, "prefix", e.prefix);
      env_from.push_back(std::move(item));
    }
    out["envFrom"] = std::move(env_from);
  }
  PutString(out, "workingDir", t.working_dir);
  const SecurityContext& security = t.security_context;
  if (security != SecurityContext()) {
    json context = json::object();
    if (security.run_as_user) context["runAsUser"] = *security.run_as_user;
    if (security.run_as_group) context["runAsGroup"] = *security.run_as_group;
    if (security.run_as_non_root) context["runAsNonRoot"] = *security.run_as_non_root;
    out["securityContext"] = std::move(context);
  }
  for (const auto& [name, probe] : {std::pair("livenessProbe", &t.liveness_probe),
                                    std::pair("readinessProbe", &t.readiness_probe),
                                    std::pair("startupProbe", &t.startup_probe)}) {
    if (*probe) out[name] = EncodeProbe(**probe);
  }
  return out;
}

json Head(std::string_view kind, const ObjectMeta& meta) {
  return {{"apiVersion", kApiVersion}, {"kind", kind}, {"metadata", Metadata(meta)}};
}

json EncodeNode(const Node& node) {
  json out = Head("Node", node.metadata);
  json spec = json::object();
  if (!node.spec.taints.empty()) {
    json taints = json::array();
    for (const Taint& t : node.spec.taints) {
      json item = {{"key", t.key}, {"effect", t.effect}};
      PutString(item, "value", t.value);
      taints.push_back(std::move(item));
    }
    spec["taints"] = std::move(taints);
  }
  if (node.spec.unschedulable) spec["unschedulable"] = true;
  PutObject(out, "spec", std::move(spec));
  json status = json::object();
  json capacity = json::object();
  PutQuantity(capacity, "cpu", node.status.cpu);
  PutQuantity(capacity, "memory", node.status.memory);
  PutObject(status, "capacity", std::move(capacity));
  if (!node.status.gpus.empty()) {
    json gpus = json::array();
    for (const NodeGpu& g : node.status.gpus) {
      json item = {{"index", g.index}, {"model", g.model}};
      PutString(item, "uuid", g.uuid);
      PutQuantity(item, "memory", g.memory);
      PutInt(item, "nvlinkIsland", g.nvlink_island);
      if (g.mig_enabled) item["migEnabled"] = true;
      if (!g.mig_instances.empty()) {
        json instances = json::array();
        for (const MigInstance& m : g.mig_instances) {
          json instance = {{"profile", m.profile}};
          PutString(instance, "uuid", m.uuid);
          instances.push_back(std::move(instance));
        }
        item["migInstances"] = std::move(instances);
      }
      gpus.push_back(std::move(item));
    }
    status["gpus"] = std::move(gpus);
  }
  if (!node.status.conditions.empty()) {
    json conditions = json::array();
    for (const NodeCondition& c : node.status.conditions) {
      json item = {{"type", c.type}, {"status", c.status}};
      PutString(item, "reason", c.reason);
      PutString(item, "message", c.message);
      PutString(item, "lastHeartbeatTime", c.last_heartbeat_time);
      PutString(item, "lastTransitionTime", c.last_transition_time);
      conditions.push_back(std::move(item));
    }
    status["conditions"] = std::move(conditions);
  }
  PutObject(out, "status", std::move(status));
  return out;
}

json EncodeQueue(const Queue& queue) {
  json out = Head("Queue", queue.metadata);
  const QueueSpec& s = queue.spec;
  json spec = json::object();
  PutString(spec, "cohort", s.cohort);
  if (!s.flavors.empty()) {
    json flavors = json::array();
    for (const FlavorQuota& f : s.flavors) {
      json resources = json::array();
      for (const ResourceQuota& r : f.resources) {
        json item = {{"name", r.resource}, {"nominal", r.nominal.ToString()}};
        if (r.borrowing_limit) item["borrowingLimit"] = r.borrowing_limit->ToString();
        if (r.lending_limit) item["lendingLimit"] = r.lending_limit->ToString();
        resources.push_back(std::move(item));
      }
      json flavor = {{"name", f.flavor}};
      PutObject(flavor, "resources", std::move(resources));
      flavors.push_back(std::move(flavor));
    }
    spec["flavors"] = std::move(flavors);
  }
  spec["weight"] = s.weight.ToString();
  spec["queueingStrategy"] = s.queueing_strategy;
  spec["preemption"] = {{"withinQueue", s.preemption.within_queue},
                        {"reclaimWithinCohort", s.preemption.reclaim_within_cohort}};
  spec["reclaimable"] = s.reclaimable;
  if (s.lend_only) spec["lendOnly"] = true;
  if (!s.local_queues.empty()) {
    json locals = json::array();
    for (const LocalQueueRef& l : s.local_queues) {
      locals.push_back({{"namespace", l.namespace_name}, {"name", l.name}});
    }
    spec["localQueues"] = std::move(locals);
  }
  out["spec"] = std::move(spec);
  if (queue.status != QueueStatus{}) out["status"] = EncodeQueueStatus(queue.status);
  return out;
}

json EncodeResourceFlavor(const ResourceFlavor& flavor) {
  json out = Head("ResourceFlavor", flavor.metadata);
  json spec = json::object();
  PutMap(spec, "nodeLabels", flavor.spec.node_labels);
  PutObject(spec, "tolerations", Tolerations(flavor.spec.tolerations));
  PutObject(out, "spec", std::move(spec));
  return out;
}

json Role(const JobRole& role) {
  json out = {
      {"name", role.name}, {"replicas", role.replicas}, {"procPerNode", role.proc_per_node}};
  PutObject(out, "resources", Resources(role.resources));
  PutMap(out, "nodeSelector", role.node_selector);
  out["template"] = Template(role.template_);
  json depends_on = json::array();
  for (const RoleDependency& d : role.depends_on) {
    depends_on.push_back({{"role", d.role}, {"status", d.status}});
  }
  PutObject(out, "dependsOn", std::move(depends_on));
  return out;
}

json EncodeJob(const Job& job) {
  json out = Head("Job", job.metadata);
  const JobSpec& s = job.spec;
  json spec = json::object();
  if (s.roles.empty()) {
    spec = {{"replicas", s.replicas}, {"procPerNode", s.proc_per_node}};
    PutObject(spec, "resources", Resources(s.resources));
    PutMap(spec, "nodeSelector", s.node_selector);
  } else {
    json roles = json::array();
    for (const JobRole& role : s.roles) roles.push_back(Role(role));
    spec["roles"] = std::move(roles);
  }
  PutObject(spec, "gpuSelector", Selector(s.gpu_selector));
  PutObject(spec, "tolerations", Tolerations(s.tolerations));
  if (!s.topology.level.empty()) {
    spec["topology"] = {{"level", s.topology.level}, {"mode", s.topology.mode}};
  }
  PutInt(spec, "maxRestarts", s.max_restarts);
  json checkpoint = json::object();
  PutString(checkpoint, "dir", s.checkpoint.dir);
  PutDuration(checkpoint, "interval", s.checkpoint.interval);
  PutObject(spec, "checkpoint", std::move(checkpoint));
  PutInt(spec, "priority", s.priority);
  PutString(spec, "queue", s.queue);
  PutDuration(spec, "runtimeLimit", s.runtime_limit);
  if (s.roles.empty()) spec["template"] = Template(s.template_);
  spec["cleanPodPolicy"] = s.clean_pod_policy;
  if (s.success_policy != JobSuccessPolicy{}) {
    json success = {{"operator", s.success_policy.op}};
    PutStrings(success, "roles", s.success_policy.roles);
    spec["successPolicy"] = std::move(success);
  }
  out["spec"] = std::move(spec);
  if (job.status != JobStatus{}) out["status"] = EncodeJobStatus(job.status);
  return out;
}

json EncodeService(const Service& service) {
  json out = Head("Service", service.metadata);
  const ServiceSpec& s = service.spec;
  json spec = {{"model", s.model}};
  json versions = json::array();
  for (const ServiceVersion& v : s.versions) {
    json item = {{"name", v.name}, {"weight", v.weight}};
    if (v.engine) item["engine"] = Template(*v.engine);
    versions.push_back(std::move(item));
  }
  spec["versions"] = std::move(versions);
  spec["engine"] = Template(s.engine);
  PutObject(spec, "resources", Resources(s.resources));
  PutObject(spec, "gpuSelector", Selector(s.gpu_selector));
  PutMap(spec, "nodeSelector", s.node_selector);
  PutObject(spec, "tolerations", Tolerations(s.tolerations));
  spec["tensorParallel"] = s.tensor_parallel;
  spec["nodesPerReplica"] = s.nodes_per_replica;
  spec["minReplicas"] = s.min_replicas;
  spec["maxReplicas"] = s.max_replicas;
  const Autoscaling& a = s.autoscaling;
  json autoscaling = {{"metric", a.metric},
                      {"target", a.target},
                      {"stableWindow", FormatDuration(a.stable_window)},
                      {"panicWindow", FormatDuration(a.panic_window)}};
  PutDuration(autoscaling, "scaleToZeroAfter", a.scale_to_zero_after);
  if (a.metric != "rps") {
    autoscaling["maxScaleUpRate"] = a.max_scale_up_rate;
    autoscaling["maxScaleDownRate"] = a.max_scale_down_rate;
  }
  spec["autoscaling"] = std::move(autoscaling);
  PutStrings(spec, "tenants", s.tenants);
  if (!s.objectives.empty()) {
    json objectives = json::array();
    for (const ServiceObjective& o : s.objectives) {
      objectives.push_back({{"name", o.name}, {"priority", o.priority}});
    }
    spec["objectives"] = std::move(objectives);
  }
  PutString(spec, "queue", s.queue);
  PutInt(spec, "priority", s.priority);
  if (s.max_surge != 1 || s.max_unavailable != 0) {
    spec["rollout"] = {{"maxSurge", s.max_surge}, {"maxUnavailable", s.max_unavailable}};
  }
  if (s.leader) spec["leader"] = Template(*s.leader);
  if (!s.topology.level.empty()) {
    spec["topology"] = {{"level", s.topology.level}, {"mode", s.topology.mode}};
  }
  if (s.ordinal_names) spec["ordinalNames"] = true;
  if (s.ordered_start) spec["orderedStart"] = true;
  out["spec"] = std::move(spec);
  if (service.status != ServiceStatus{}) out["status"] = EncodeServiceStatus(service.status);
  return out;
}

json EncodePod(const Pod& pod) {
  json out = Head("Pod", pod.metadata);
  const PodSpec& s = pod.spec;
  json spec = json::object();
  if (!s.owner.kind.empty()) {
    json owner = {{"kind", s.owner.kind}, {"name", s.owner.name}};
    PutInt(owner, "replica", s.owner.replica);
    PutInt(owner, "rank", s.owner.rank);
    PutString(owner, "uid", s.owner.uid);
    spec["owner"] = std::move(owner);
  }
  PutString(spec, "queue", s.queue);
  PutInt(spec, "priority", s.priority);
  spec["restartPolicy"] = s.restart_policy;
  PutString(spec, "nodeName", s.node_name);
  PutObject(spec, "resources", Resources(s.resources));
  PutObject(spec, "gpuSelector", Selector(s.gpu_selector));
  PutMap(spec, "nodeSelector", s.node_selector);
  PutObject(spec, "tolerations", Tolerations(s.tolerations));
  spec["template"] = Template(s.template_);
  if (!s.assigned_gpus.empty()) spec["assignedGpus"] = EncodeAssignedGpus(s.assigned_gpus);
  if (!s.gang.name.empty()) {
    json gang = {{"name", s.gang.name}, {"minMember", s.gang.min_member}};
    if (!s.gang.min_resources.empty()) {
      json resources = json::object();
      for (const auto& [name, q] : s.gang.min_resources) resources[name] = q.ToString();
      gang["minResources"] = std::move(resources);
    }
    spec["gang"] = std::move(gang);
  }
  out["spec"] = std::move(spec);
  out["status"] = EncodePodStatus(pod.status);
  return out;
}

json EncodeTenant(const Tenant& tenant) {
  json out = Head("Tenant", tenant.metadata);
  json spec = json::object();
  PutStrings(spec, "apiKeys", tenant.spec.api_keys);
  PutInt(spec, "tokensPerMinute", tenant.spec.tokens_per_minute);
  spec["priorityClass"] = tenant.spec.priority_class;
  out["spec"] = std::move(spec);
  return out;
}

json EncodeEvent(const Event& event) {
  json out = Head("Event", event.metadata);
  json involved = {{"kind", event.involved_object.kind}, {"name", event.involved_object.name}};
  PutString(involved, "namespace", event.involved_object.namespace_name);
  PutString(involved, "uid", event.involved_object.uid);
  out["involvedObject"] = std::move(involved);
  out["type"] = event.type;
  PutString(out, "reason", event.reason);
  PutString(out, "message", event.message);
  out["count"] = event.count;
  PutString(out, "firstTimestamp", event.first_timestamp);
  PutString(out, "lastTimestamp", event.last_timestamp);
  return out;
}

json EncodeNamespace(const Namespace& ns) {
  json out = Head("Namespace", ns.metadata);
  out["status"] = {{"phase", "Active"}};
  return out;
}

json EncodeConfigMap(const ConfigMap& config) {
  json out = Head("ConfigMap", config.metadata);
  PutMap(out, "data", config.data);
  json binary = json::object();
  for (const auto& [key, bytes] : config.binary_data) binary[key] = Base64Encode(bytes);
  PutObject(out, "binaryData", std::move(binary));
  if (config.immutable) out["immutable"] = true;
  return out;
}

json EncodeSecret(const Secret& secret) {
  json out = Head("Secret", secret.metadata);
  out["type"] = secret.type;
  json data = json::object();
  for (const auto& [key, bytes] : secret.data) data[key] = Base64Encode(bytes);
  PutObject(out, "data", std::move(data));
  if (secret.immutable) out["immutable"] = true;
  return out;
}

json EncodeWorkloadPriorityClass(const WorkloadPriorityClass& priority_class) {
  json out = Head("WorkloadPriorityClass", priority_class.metadata);
  json spec = {{"value", priority_class.spec.value}};
  PutString(spec, "description", priority_class.spec.description);
  out["spec"] = std::move(spec);
  return out;
}

struct Encoder {
  json operator()(const Node& v) const { return EncodeNode(v); }
  json operator()(const Queue& v) const { return EncodeQueue(v); }
  json operator()(const ResourceFlavor& v) const { return EncodeResourceFlavor(v); }
  json operator()(const Job& v) const { return EncodeJob(v); }
  json operator()(const Service& v) const { return EncodeService(v); }
  json operator()(const Pod& v) const { return EncodePod(v); }
  json operator()(const Tenant& v) const { return EncodeTenant(v); }
  json operator()(const Event& v) const { return EncodeEvent(v); }
  json operator()(const Namespace& v) const { return EncodeNamespace(v); }
  json operator()(const ConfigMap& v) const { return EncodeConfigMap(v); }
  json operator()(const Secret& v) const { return EncodeSecret(v); }
  json operator()(const WorkloadPriorityClass& v) const { return EncodeWorkloadPriorityClass(v); }
};

}  // namespace

json EncodeObject(const Object& object) { return std::visit(Encoder{}, object.value()); }

}  // namespace strata::api
