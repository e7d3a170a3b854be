#include "kubesched/pod_spec.h"

#include <algorithm>
#include <string>

#include "common/field_decoder.h"
#include "common/json_member.h"
#include "common/quantity.h"
#include "kubesched/kueue_quotas.h"
#include "kubesched/node_spec.h"
#include "kubesched/owner_jobs.h"

namespace strata::kubesched {
namespace {

using nlohmann::json;

Status Invalid(const std::string& where, const std::string& what) {
  return Status(StatusCode::kInvalidArgument, where + ": " + what);
}

ResourceList Max(const ResourceList& a, const ResourceList& b) {
  return {std::max(a.cpu_milli, b.cpu_milli), std::max(a.memory_bytes, b.memory_bytes),
          std::max(a.gpus, b.gpus), std::max(a.gpu_memory_mib, b.gpu_memory_mib),
          std::max(a.gpu_cores, b.gpu_cores)};
}

void Add(ResourceList& to, const ResourceList& more) {
  to.cpu_milli += more.cpu_milli;
  to.memory_bytes += more.memory_bytes;
  to.gpus += more.gpus;
  to.gpu_memory_mib += more.gpu_memory_mib;
  to.gpu_cores += more.gpu_cores;
}

// A container's requests; a resource it only limits is requested at its limit (the API server
// defaults requests so; older objects may lack it).
Result<ResourceList> ContainerRequests(const json& container, const std::string& where) {
  const json& resources = MemberOrNull(container, "resources");
  json merged = MemberOrNull(resources, "limits").is_object() ? MemberOrNull(resources, "limits")
                                                              : json::object();
  if (const json& requests = MemberOrNull(resources, "requests"); requests.is_object())
    for (const auto& [key, value] : requests.items()) merged[key] = value;
  return ReadResourceList(merged, where + ".resources");
}

Result<ResourceList> PodRequests(const json& spec, const std::string& where) {
  ResourceList sum;
  const json& containers = MemberOrNull(spec, "containers");
  if (containers.is_array()) {
    for (size_t i = 0; i < containers.size(); ++i) {
      ASSIGN_OR_RETURN(
          ResourceList one,
          ContainerRequests(containers[i], where + ".containers[" + std::to_string(i) + "]"));
      Add(sum, one);
    }
  }
  const json& init = MemberOrNull(spec, "initContainers");
  if (init.is_array()) {
    for (size_t i = 0; i < init.size(); ++i) {
      ASSIGN_OR_RETURN(ResourceList one, ContainerRequests(init[i], where + ".initContainers[" +
                                                                        std::to_string(i) + "]"));
      sum = Max(sum, one);
    }
  }
  if (const json& overhead = MemberOrNull(spec, "overhead"); overhead.is_object()) {
    ASSIGN_OR_RETURN(ResourceList extra, ReadResourceList(overhead, where + ".overhead"));
    Add(sum, extra);
  }
  return sum;
}

Result<scheduler::GpuRequest> GpuRequestFrom(const ResourceList& r, const std::string& where) {
  scheduler::GpuRequest gpu;
  bool share = r.gpu_memory_mib > 0 || (r.gpu_cores > 0 && r.gpu_cores < 100);
  if (!share) {
    gpu.count = static_cast<int>(std::min<int64_t>(r.gpus, 1 << 20));
    return gpu;
  }
  if (r.gpus != 1) {
    return tl::unexpected(Invalid(where, "a share (nvidia.com/gpumem or nvidia.com/gpucores) of " +
                                             std::to_string(r.gpus) +
                                             " GPUs; strata shares one GPU per pod"));
  }
  gpu.milli = r.gpu_cores > 0 && r.gpu_cores < 100 ? r.gpu_cores * 10 : 0;
  gpu.memory_mib = r.gpu_memory_mib;
  return gpu;
}

Result<scheduler::SelectorOperator> OperatorFrom(const std::string& op) {
  using scheduler::SelectorOperator;
  if (op == "In") return SelectorOperator::kIn;
  if (op == "NotIn") return SelectorOperator::kNotIn;
  if (op == "Exists") return SelectorOperator::kExists;
  if (op == "DoesNotExist") return SelectorOperator::kDoesNotExist;
  if (op == "Gt") return SelectorOperator::kGt;
  if (op == "Lt") return SelectorOperator::kLt;
  return tl::unexpected(Status(StatusCode::kInvalidArgument, "unknown operator \"" + op + "\""));
}

// One matchExpression (or matchField) {key, operator, values}.
Result<scheduler::LabelRequirement> RequirementFrom(const json& expression,
                                                    const std::string& where) {
  Result<scheduler::SelectorOperator> op = OperatorFrom(StringMemberOr(expression, "operator"));
  if (!op) return tl::unexpected(op.error().WithPrefix(where + ".operator"));
  scheduler::LabelRequirement requirement{StringMemberOr(expression, "key"), *op, {}};
  if (const json& values = MemberOrNull(expression, "values"); values.is_array())
    for (const json& value : values)
      if (value.is_string()) requirement.values.push_back(value.get<std::string>());
  return requirement;
}

Result<std::vector<scheduler::NodeAffinityTerm>> RequiredAffinity(const json& spec,
                                                                  const std::string& where) {
  std::vector<scheduler::NodeAffinityTerm> terms;
  const json& required = MemberOrNull(MemberOrNull(MemberOrNull(spec, "affinity"), "nodeAffinity"),
                                      "requiredDuringSchedulingIgnoredDuringExecution");
  const json& selector_terms = MemberOrNull(required, "nodeSelectorTerms");
  if (!selector_terms.is_array()) return terms;
  for (size_t t = 0; t < selector_terms.size(); ++t) {
    scheduler::NodeAffinityTerm term;
    std::string at = where +
                     ".affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
                     ".nodeSelectorTerms[" +
                     std::to_string(t) + "]";
    // matchFields selects metadata.name only, which NodeFromKube keeps as a label.
    const json& fields = MemberOrNull(selector_terms[t], "matchFields");
    for (size_t e = 0; fields.is_array() && e < fields.size(); ++e) {
      std::string field_at = at + ".matchFields[" + std::to_string(e) + "]";
      if (StringMemberOr(fields[e], "key") != kNodeNameField)
        return tl::unexpected(Invalid(field_at + ".key", "only metadata.name is supported"));
      ASSIGN_OR_RETURN(scheduler::LabelRequirement requirement,
                       RequirementFrom(fields[e], field_at));
      term.requirements.push_back(std::move(requirement));
    }
    const json& expressions = MemberOrNull(selector_terms[t], "matchExpressions");
    for (size_t e = 0; expressions.is_array() && e < expressions.size(); ++e) {
      ASSIGN_OR_RETURN(
          scheduler::LabelRequirement requirement,
          RequirementFrom(expressions[e], at + ".matchExpressions[" + std::to_string(e) + "]"));
      term.requirements.push_back(std::move(requirement));
    }
    terms.push_back(std::move(term));
  }
  return terms;
}

Result<std::vector<scheduler::Toleration>> Tolerations(const json& spec, const std::string& where) {
  std::vector<scheduler::Toleration> tolerations;
  const json& list = MemberOrNull(spec, "tolerations");
  for (size_t i = 0; list.is_array() && i < list.size(); ++i) {
    const json& item = list[i];
    scheduler::Toleration toleration;
    toleration.key = StringMemberOr(item, "key");
    toleration.value = StringMemberOr(item, "value");
    std::string op = StringMemberOr(item, "operator");
    if (op != "" && op != "Equal" && op != "Exists") {
      return tl::unexpected(Invalid(where + ".tolerations[" + std::to_string(i) + "].operator",
                                    "unknown operator \"" + op + "\""));
    }
    toleration.exists = op == "Exists";
    std::string effect = StringMemberOr(item, "effect");
    if (effect == "NoSchedule")
      toleration.effect = scheduler::TaintEffect::kNoSchedule;
    else if (effect == "PreferNoSchedule")
      toleration.effect = scheduler::TaintEffect::kPreferNoSchedule;
    else if (effect == "NoExecute")
      toleration.effect = scheduler::TaintEffect::kNoExecute;
    else if (!effect.empty()) {
      return tl::unexpected(Invalid(where + ".tolerations[" + std::to_string(i) + "].effect",
                                    "unknown effect \"" + effect + "\""));
    }
    tolerations.push_back(std::move(toleration));
  }
  return tolerations;
}

int64_t PositiveOr(const std::string& text, int64_t fallback) {
  try {
    size_t used = 0;
    long long value = std::stoll(text, &used);
    if (used == text.size() && value > 0) return value;
  } catch (const std::exception&) {
  }
  return fallback;
}

// The name of the batch/v1 Job that controls the pod, or "".
std::string OwnerJob(const json& metadata) {
  const json& owners = MemberOrNull(metadata, "ownerReferences");
  for (size_t i = 0; owners.is_array() && i < owners.size(); ++i) {
    const json& owner = owners[i];
    if (StringMemberOr(owner, "kind") == "Job" &&
        StringMemberOr(owner, "apiVersion") == "batch/v1" &&
        MemberOrNull(owner, "controller") == true)
      return StringMemberOr(owner, "name");
  }
  return "";
}

GangKey GangFrom(const json& metadata, const json& spec) {
  const json& labels = MemberOrNull(metadata, "labels");
  const json& annotations = MemberOrNull(metadata, "annotations");
  if (std::string group = StringMemberOr(MemberOrNull(spec, "schedulingGroup"), "podGroupName");
      !group.empty()) {
    return {"podgroup/" + group, 0, GroupSource::kPodGroup, group};
  }
  if (std::string group = StringMemberOr(labels, kKueuePodGroupLabel); !group.empty()) {
    return {"kueue/" + group,
            PositiveOr(StringMemberOr(annotations, kKueuePodGroupTotalAnnotation), 1),
            GroupSource::kLabels, ""};
  }
  if (std::string key = StringMemberOr(labels, kLwsGroupKeyLabel); !key.empty()) {
    return {"lws/" + key, PositiveOr(StringMemberOr(annotations, kLwsSizeAnnotation), 1),
            GroupSource::kLabels, ""};
  }
  for (const char* annotation : {kVolcanoGroupAnnotation, kVolcanoOwnGroupAnnotation}) {
    if (std::string group = StringMemberOr(annotations, annotation); !group.empty())
      return {"volcano/" + group, 0, GroupSource::kVolcanoPodGroup, group};
  }
  std::string job = OwnerJob(metadata);
  if (job.empty()) return {};
  std::string jobset = StringMemberOr(labels, kJobSetNameKey);
  std::string replicated = StringMemberOr(labels, kReplicatedJobNameKey);
  if (!jobset.empty() && !replicated.empty()) {
    std::string replicas = StringMemberOr(labels, kReplicatedJobReplicasKey,
                                          StringMemberOr(annotations, kReplicatedJobReplicasKey));
    return {"jobset/" + jobset + "/" + replicated, PositiveOr(replicas, 1), GroupSource::kJobSet,
            job};
  }
  return {"job/" + job, 0, GroupSource::kJob, job};
}

}  // namespace

Result<ResourceList> ReadResourceList(const json& list, const std::string& where) {
  ResourceList out;
  if (!list.is_object()) return out;
  for (const auto& [key, value] : list.items()) {
    int64_t* target = nullptr;
    bool units = true;
    if (key == "cpu") {
      target = &out.cpu_milli;
      units = false;
    } else if (key == "memory") {
      target = &out.memory_bytes;
    } else if (key == kGpuResource) {
      target = &out.gpus;
    } else if (key == "nvidia.com/gpumem") {
      target = &out.gpu_memory_mib;
    } else if (key == "nvidia.com/gpucores") {
      target = &out.gpu_cores;
    } else {
      continue;
    }
    Result<Quantity> quantity = QuantityFromJson(value);
    if (!quantity) return tl::unexpected(quantity.error().WithPrefix(where + "." + key));
    *target = units ? quantity->Units() : quantity->milli();
  }
  return out;
}

Result<PodSpec> PodFromKube(const json& object) {
  PodSpec pod;
  const json& metadata = MemberOrNull(object, "metadata");
  pod.namespace_name = StringMemberOr(metadata, "namespace");
  pod.name = StringMemberOr(metadata, "name");
  pod.uid = StringMemberOr(metadata, "uid");
  pod.resource_version = StringMemberOr(metadata, "resourceVersion");
  pod.deleting = MemberOrNull(metadata, "deletionTimestamp").is_string();
  pod.created = ParseRfc3339(StringMemberOr(metadata, "creationTimestamp")).value_or(TimePoint{});
  const json& spec = MemberOrNull(object, "spec");
  pod.scheduler_name = StringMemberOr(spec, "schedulerName");
  if (pod.scheduler_name.empty()) pod.scheduler_name = "default-scheduler";
  pod.node_name = StringMemberOr(spec, "nodeName");
  const json& gates = MemberOrNull(spec, "schedulingGates");
  pod.gated = gates.is_array() && !gates.empty();
  if (const json& priority = MemberOrNull(spec, "priority"); priority.is_number_integer())
    pod.priority =
        static_cast<int>(std::clamp<int64_t>(priority.get<int64_t>(), -2000000000, 2000000000));
  const json& status = MemberOrNull(object, "status");
  pod.phase = StringMemberOr(status, "phase");
  pod.started = ParseRfc3339(StringMemberOr(status, "startTime")).value_or(pod.created);
  if (const json& conditions = MemberOrNull(status, "conditions"); conditions.is_array()) {
    for (const json& condition : conditions) {
      if (StringMemberOr(condition, "type") != "PodScheduled") continue;
      pod.scheduled_status = StringMemberOr(condition, "status");
      pod.scheduled_message = StringMemberOr(condition, "message");
    }
  }
  std::string where = "pod " + pod.namespace_name + "/" + pod.name + ": spec";
  ASSIGN_OR_RETURN(ResourceList requests, PodRequests(spec, where));
  scheduler::PodSet& set = pod.pod_set;
  set.name = "pod";
  set.count = 1;
  set.cpu_milli = requests.cpu_milli;
  set.memory_bytes = requests.memory_bytes;
  ASSIGN_OR_RETURN(set.gpu, GpuRequestFrom(requests, where + ".containers[*].resources"));
  if (const json& selector = MemberOrNull(spec, "nodeSelector"); selector.is_object())
    for (const auto& [key, value] : selector.items())
      if (value.is_string()) set.node_selector.emplace(key, value.get<std::string>());
  ASSIGN_OR_RETURN(set.affinity, RequiredAffinity(spec, where));
  ASSIGN_OR_RETURN(set.tolerations, Tolerations(spec, where));
  pod.gang = GangFrom(metadata, spec);
  pod.owner_job = OwnerJob(metadata);
  pod.claims = PodClaimRefs(object);
  pod.queue_name = StringMemberOr(MemberOrNull(metadata, "labels"), kKueueQueueNameLabel);
  pod.workload_priority_class =
      StringMemberOr(MemberOrNull(metadata, "labels"), kKueuePriorityClassLabel);
  const json& annotations = MemberOrNull(metadata, "annotations");
  if (std::string level = StringMemberOr(annotations, kRequiredTopologyAnnotation);
      !level.empty()) {
    pod.topology = {scheduler::TopologyMode::kRequired, level};
  } else if (std::string preferred = StringMemberOr(annotations, kPreferredTopologyAnnotation);
             !preferred.empty()) {
    pod.topology = {scheduler::TopologyMode::kPreferred, preferred};
  }
  return pod;
}

}  // namespace strata::kubesched
