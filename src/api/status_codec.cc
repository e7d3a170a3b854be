#include "api/status_codec.h"

#include "api/encode_fields.h"

namespace strata::api {
namespace {

json EncodeConditions(const std::vector<Condition>& conditions) {
  json out = json::array();
  for (const Condition& c : conditions) {
    json item = {{"type", c.type}, {"status", c.status}};
    PutString(item, "reason", c.reason);
    PutString(item, "message", c.message);
    PutString(item, "lastTransitionTime", c.last_transition_time);
    out.push_back(std::move(item));
  }
  return out;
}

std::vector<Condition> DecodeConditions(const FieldView& status) {
  std::vector<Condition> out;
  for (const FieldView& c : status.ObjectList("conditions")) {
    out.push_back({c.String("type"), c.String("status", "Unknown"), c.String("reason"),
                   c.String("message"), c.String("lastTransitionTime")});
  }
  return out;
}

json EncodePlacement(const JobPlacement& placement) {
  json out = {{"run", placement.run}};
  PutString(out, "flavor", placement.flavor);
  PutString(out, "masterAddr", placement.master_addr);
  PutInt(out, "masterPort", placement.master_port);
  PutString(out, "boundAt", placement.bound_at);
  json pods = json::array();
  for (const JobPodAssignment& pod : placement.pods) {
    json item = {{"rank", pod.rank}, {"nodeName", pod.node_name}};
    if (!pod.gpus.empty()) item["gpus"] = EncodeAssignedGpus(pod.gpus);
    pods.push_back(std::move(item));
  }
  out["pods"] = std::move(pods);
  return out;
}

JobPlacement DecodePlacement(const FieldView& view) {
  JobPlacement out;
  out.run = view.Integer("run", 0);
  out.flavor = view.String("flavor");
  out.master_addr = view.String("masterAddr");
  out.master_port = view.Integer("masterPort", 0);
  out.bound_at = view.String("boundAt");
  for (const FieldView& pod : view.ObjectList("pods")) {
    out.pods.push_back(
        {pod.Integer("rank", 0), pod.String("nodeName"), DecodeAssignedGpus(pod, "gpus")});
  }
  return out;
}

}  // namespace

json EncodeAssignedGpus(const std::vector<AssignedGpu>& gpus) {
  json out = json::array();
  for (const AssignedGpu& g : gpus) {
    json item = {{"index", g.index}, {"share", g.share.ToString()}};
    PutString(item, "uuid", g.uuid);
    PutQuantity(item, "memory", g.memory);
    PutString(item, "migInstance", g.mig_instance);
    out.push_back(std::move(item));
  }
  return out;
}

std::vector<AssignedGpu> DecodeAssignedGpus(const FieldView& parent, std::string_view field) {
  std::vector<AssignedGpu> out;
  for (const FieldView& g : parent.ObjectList(field)) {
    out.push_back({g.Integer("index", 0), g.String("uuid"),
                   g.GetQuantity("share", Quantity::FromUnits(1)), g.GetQuantity("memory"),
                   g.String("migInstance")});
  }
  return out;
}

json EncodePodStatus(const PodStatus& status) {
  json out = {{"phase", PodPhaseName(status.phase)}};
  if (status.exit_code) out["exitCode"] = *status.exit_code;
  PutInt(out, "restartCount", status.restart_count);
  PutString(out, "reason", status.reason);
  PutString(out, "message", status.message);
  PutString(out, "podIP", status.pod_ip);
  return out;
}

PodStatus DecodePodStatus(const FieldView& status) {
  PodStatus out;
  out.phase = ParsePodPhase(status.String("phase", "Pending")).value_or(PodPhase::kPending);
  if (status.Has("exitCode")) out.exit_code = status.Integer("exitCode", 0);
  out.restart_count = status.Integer("restartCount", 0);
  out.reason = status.String("reason");
  out.message = status.String("message");
  out.pod_ip = status.String("podIP");
  return out;
}

json EncodeJobStatus(const JobStatus& status) {
  json out = {{"phase", JobPhaseName(status.phase)}};
  PutInt(out, "restartCount", status.restart_count);
  PutInt(out, "preemptionCount", status.preemption_count);
  PutInt(out, "runs", status.runs);
  PutString(out, "reason", status.reason);
  PutString(out, "message", status.message);
  PutString(out, "startTime", status.start_time);
  PutString(out, "completionTime", status.completion_time);
  PutString(out, "lastCheckpointTime", status.last_checkpoint_time);
  if (!status.conditions.empty()) out["conditions"] = EncodeConditions(status.conditions);
  if (status.placement) out["placement"] = EncodePlacement(*status.placement);
  return out;
}

JobStatus DecodeJobStatus(const FieldView& status) {
  JobStatus out;
  out.phase = ParseJobPhase(status.String("phase", "Pending")).value_or(JobPhase::kPending);
  out.restart_count = status.Integer("restartCount", 0);
  out.preemption_count = status.Integer("preemptionCount", 0);
  out.runs = status.Integer("runs", 0);
  out.reason = status.String("reason");
  out.message = status.String("message");
  out.start_time = status.String("startTime");
  out.completion_time = status.String("completionTime");
  out.last_checkpoint_time = status.String("lastCheckpointTime");
  out.conditions = DecodeConditions(status);
  if (status.Has("placement")) out.placement = DecodePlacement(status.Object("placement"));
  return out;
}

json EncodeServiceStatus(const ServiceStatus& status) {
  json out = json::object();
  // Kubernetes' workload shape: the totals over the versions (derived, never read back).
  int64_t replicas = 0;
  int64_t ready = 0;
  for (const ServiceVersionStatus& v : status.versions) {
    replicas += v.replicas;
    ready += v.ready_replicas;
  }
  out["replicas"] = replicas;
  out["readyReplicas"] = ready;
  if (!status.versions.empty()) {
    json versions = json::array();
    for (const ServiceVersionStatus& v : status.versions) {
      json item = {{"name", v.name}};
      PutInt(item, "desiredReplicas", v.desired_replicas);
      PutInt(item, "replicas", v.replicas);
      PutInt(item, "readyReplicas", v.ready_replicas);
      PutInt(item, "startingReplicas", v.starting_replicas);
      PutInt(item, "drainingReplicas", v.draining_replicas);
      PutInt(item, "updatedReplicas", v.updated_replicas);
      PutString(item, "reason", v.reason);
      versions.push_back(std::move(item));
    }
    out["versions"] = std::move(versions);
  }
  if (!status.decisions.empty()) {
    json decisions = json::array();
    for (const ScaleDecisionRecord& d : status.decisions) {
      json item = {{"time", d.time}, {"version", d.version}, {"from", d.from}, {"to", d.to}};
      PutString(item, "reason", d.reason);
      decisions.push_back(std::move(item));
    }
    out["decisions"] = std::move(decisions);
  }
  if (status.cold_start_seconds != 0) out["coldStartSeconds"] = status.cold_start_seconds;
  PutInt(out, "coldStartsMeasured", status.cold_starts_measured);
  return out;
}

ServiceStatus DecodeServiceStatus(const FieldView& status) {
  ServiceStatus out;
  for (const FieldView& v : status.ObjectList("versions")) {
    ServiceVersionStatus version;
    version.name = v.String("name");
    version.desired_replicas = v.Integer("desiredReplicas", 0);
    version.replicas = v.Integer("replicas", 0);
    version.ready_replicas = v.Integer("readyReplicas", 0);
    version.starting_replicas = v.Integer("startingReplicas", 0);
    version.draining_replicas = v.Integer("drainingReplicas", 0);
    version.updated_replicas = v.Integer("updatedReplicas", 0);
    version.reason = v.String("reason");
    out.versions.push_back(std::move(version));
  }
  for (const FieldView& d : status.ObjectList("decisions")) {
    out.decisions.push_back({d.String("time"), d.String("version"), d.Integer("from", 0),
                             d.Integer("to", 0), d.String("reason")});
  }
  out.cold_start_seconds = status.Number("coldStartSeconds", 0);
  out.cold_starts_measured = status.Integer("coldStartsMeasured", 0);
  return out;
}

json EncodeQueueStatus(const QueueStatus& status) {
  json out = json::object();
  if (!status.flavors_usage.empty()) {
    json flavors = json::array();
    for (const FlavorUsage& f : status.flavors_usage) {
      json resources = json::array();
      for (const ResourceUsage& r : f.resources) {
        json item = {{"name", r.resource}};
        PutQuantity(item, "nominal", r.nominal);
        PutQuantity(item, "used", r.used);
        PutQuantity(item, "borrowed", r.borrowed);
        resources.push_back(std::move(item));
      }
      json flavor = {{"resources", std::move(resources)}};
      PutString(flavor, "name", f.flavor);
      flavors.push_back(std::move(flavor));
    }
    out["flavorsUsage"] = std::move(flavors);
  }
  PutInt(out, "admittedWorkloads", status.admitted_workloads);
  PutInt(out, "pendingWorkloads", status.pending_workloads);
  return out;
}

QueueStatus DecodeQueueStatus(const FieldView& status) {
  QueueStatus out;
  for (const FieldView& f : status.ObjectList("flavorsUsage")) {
    FlavorUsage flavor;
    flavor.flavor = f.String("name");
    for (const FieldView& r : f.ObjectList("resources")) {
      flavor.resources.push_back({r.String("name"), r.GetQuantity("nominal"), r.GetQuantity("used"),
                                  r.GetQuantity("borrowed")});
    }
    out.flavors_usage.push_back(std::move(flavor));
  }
  out.admitted_workloads = status.Integer("admittedWorkloads", 0);
  out.pending_workloads = status.Integer("pendingWorkloads", 0);
  return out;
}

}  // namespace strata::api
