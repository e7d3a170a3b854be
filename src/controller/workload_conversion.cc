#include "controller/workload_conversion.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <set>

#include "api/annotations.h"
#include "api/job_roles.h"
#include "api/queue.h"
#include "controller/training_pod.h"

namespace strata::controller {
namespace {

namespace sched = scheduler;

constexpr int64_t kMiB = 1024 * 1024;
constexpr char kNotReadyTaint[] = "node.kubernetes.io/not-ready";

int64_t Bytes(const Quantity& q) { return q.milli() / 1000; }
int64_t Mebibytes(const Quantity& q) { return Bytes(q) / kMiB; }

sched::TaintEffect Effect(const std::string& effect) {
  if (effect == "PreferNoSchedule") return sched::TaintEffect::kPreferNoSchedule;
  if (effect == "NoExecute") return sched::TaintEffect::kNoExecute;
  return sched::TaintEffect::kNoSchedule;
}

std::vector<sched::Toleration> Tolerations(const std::vector<api::Toleration>& tolerations) {
  std::vector<sched::Toleration> out;
  for (const api::Toleration& t : tolerations) {
    sched::Toleration converted{t.key, t.op == "Exists", t.value, std::nullopt};
    if (!t.effect.empty()) converted.effect = Effect(t.effect);
    out.push_back(std::move(converted));
  }
  return out;
}

bool NodeReady(const api::Node& node) {
  for (const api::NodeCondition& condition : node.status.conditions) {
    if (condition.type == "Ready") return condition.status == "True";
  }
  return false;
}

// The GPU part of a pod's request. `path` names the resources field in errors.
Result<sched::GpuRequest> ConvertGpuRequest(const api::ResourceRequest& resources,
                                            const api::GpuSelector& selector,
                                            const std::string& path) {
  sched::GpuRequest out;
  out.models = selector.models;
  out.min_memory_mib = Mebibytes(selector.min_memory);
  out.mig_profile = resources.mig_profile;
  const int64_t milli = resources.gpu.milli();
  if (!resources.mig_profile.empty()) return out;
  if (milli % 1000 == 0) {
    if (milli / 1000 > std::numeric_limits<int>::max()) {
      return Err(InvalidArgumentError(path + ".gpu: too many GPUs"));
    }
    out.count = static_cast<int>(milli / 1000);
    if (out.count > 0) {
      out.min_memory_mib = std::max(out.min_memory_mib, Mebibytes(resources.gpu_memory));
    } else {
      out.memory_mib = Mebibytes(resources.gpu_memory);
    }
    return out;
  }
  if (milli > 1000) {
    return Err(InvalidArgumentError(fmt::format(
        "{}.gpu: {} is more than one GPU but not whole GPUs", path, resources.gpu.ToString())));
  }
  out.milli = milli;
  out.memory_mib = Mebibytes(resources.gpu_memory);
  return out;
}

Result<sched::PodSet> ConvertPodSet(std::string name, int count,
                                    const api::ResourceRequest& resources,
                                    const api::GpuSelector& selector,
                                    const std::vector<api::Toleration>& tolerations,
                                    const std::string& path) {
  sched::PodSet out;
  out.name = std::move(name);
  out.count = count;
  out.cpu_milli = resources.cpu.milli();
  out.memory_bytes = Bytes(resources.memory);
  ASSIGN_OR_RETURN(out.gpu, ConvertGpuRequest(resources, selector, path));
  out.tolerations = Tolerations(tolerations);
  return out;
}

std::optional<sched::Resource> QuotaResource(const std::string& name) {
  if (name == "gpu") return sched::Resource::kGpu;
  if (name == "gpuMemory") return sched::Resource::kGpuMemory;
  if (name == "cpu") return sched::Resource::kCpu;
  if (name == "memory") return sched::Resource::kMemory;
  return std::nullopt;
}

int64_t QuotaAmount(sched::Resource resource, const Quantity& q) {
  switch (resource) {
    case sched::Resource::kGpu:
    case sched::Resource::kCpu:
      return q.milli();
    case sched::Resource::kGpuMemory:
      return Mebibytes(q);
    case sched::Resource::kMemory:
      return Bytes(q);
  }
  return 0;
}

sched::TopologyRequest ConvertTopology(const api::TopologyConstraint& topology) {
  if (topology.level.empty()) return {};
  sched::TopologyRequest out;
  out.mode = topology.mode == "Preferred" ? sched::TopologyMode::kPreferred
                                          : sched::TopologyMode::kRequired;
  out.level = topology.level == "nvlink" ? std::string(sched::kHostLevel) : topology.level;
  return out;
}

// The workload a pod that is not a Job's belongs to.
std::string PodGroupName(const api::Pod& pod) {
  const std::string& ns = pod.metadata.namespace_name;
  if (!pod.spec.gang.name.empty()) return fmt::format("PodGroup/{}/{}", ns, pod.spec.gang.name);
  if (pod.spec.owner.kind == "Service") {
    return fmt::format("ServiceReplica/{}/{}/{}", ns, pod.spec.owner.name, pod.spec.owner.replica);
  }
  return fmt::format("Pod/{}/{}", ns, pod.metadata.name);
}

// How many pods a gang of standalone pods needs before it may be placed: a Volcano PodGroup's
// minMember, a service replica's group size.
int64_t GangSize(const api::Pod& pod) {
  if (!pod.spec.gang.name.empty()) return pod.spec.gang.min_member;
  if (pod.spec.owner.kind == "Service") {
    const std::string* size = api::PodAnnotation(pod, api::kGroupSizeAnnotation);
    return size == nullptr ? 1 : std::max<int64_t>(1, std::atoll(size->c_str()));
  }
  return 1;
}

TimePoint Timestamp(const std::string& text, TimePoint fallback) {
  std::optional<TimePoint> parsed = ParseRfc3339(text);
  return parsed ? *parsed : fallback;
}

}  // namespace

sched::Node ConvertNode(const api::Node& node) {
  sched::Node out;
  out.name = node.metadata.name;
  out.labels = sched::Labels(node.metadata.labels.begin(), node.metadata.labels.end());
  for (const api::Taint& taint : node.spec.taints) {
    // Every pod this scheduler places is strata's, which the tainted node's agent runs.
    if (taint.key == api::kStrataPodsOnlyTaint) continue;
    out.taints.push_back({taint.key, taint.value, Effect(taint.effect)});
  }
  if (!NodeReady(node)) {
    out.taints.push_back({kNotReadyTaint, "", sched::TaintEffect::kNoSchedule});
  }
  out.unschedulable = node.spec.unschedulable;
  out.cpu_milli = node.status.cpu.milli();
  out.memory_bytes = Bytes(node.status.memory);
  for (const api::NodeGpu& gpu : node.status.gpus) {
    out.gpus.push_back(
        {gpu.model, Mebibytes(gpu.memory), static_cast<int>(gpu.nvlink_island), gpu.mig_enabled});
  }
  return out;
}

std::string JobWorkloadName(const api::Job& job) {
  return fmt::format("Job/{}/{}", job.metadata.namespace_name, job.metadata.name);
}

std::string PodWorkloadName(const api::Pod& pod) {
  if (pod.spec.owner.kind == "Job") {
    return fmt::format("Job/{}/{}", pod.metadata.namespace_name, pod.spec.owner.name);
  }
  return PodGroupName(pod);
}

QuotaModel ConvertQuota(const std::vector<cluster::ObjectRef>& queues,
                        const std::vector<cluster::ObjectRef>& flavors) {
  QuotaModel model;
  std::map<std::string, int>& flavor_index = model.flavor_index;
  for (const cluster::ObjectRef& ref : flavors) {
    const api::ResourceFlavor* flavor = ref->As<api::ResourceFlavor>();
    if (flavor == nullptr) continue;
    flavor_index[flavor->metadata.name] = static_cast<int>(model.scheduler_flavors.size());
    model.scheduler_flavors.push_back(
        {flavor->metadata.name,
         sched::Labels(flavor->spec.node_labels.begin(), flavor->spec.node_labels.end()),
         std::nullopt});
  }
  for (const cluster::ObjectRef& ref : queues) {
    const api::Queue* decoded = ref->As<api::Queue>();
    if (decoded == nullptr) continue;
    const api::Queue& queue = *decoded;
    sched::Queue out;
    out.name = queue.metadata.name;
    model.names.AddQueue(queue.metadata.name);
    out.cohort = queue.spec.cohort;
    out.weight = static_cast<double>(queue.spec.weight.milli()) / 1000.0;
    out.strategy = queue.spec.queueing_strategy == "StrictFIFO"
                       ? sched::QueueingStrategy::kStrictFifo
                       : sched::QueueingStrategy::kBestEffortFifo;
    out.preempt_lower_priority = queue.spec.preemption.within_queue == "LowerPriority";
    out.reclaim_within_cohort = queue.spec.preemption.reclaim_within_cohort != "Never";
    out.admits_workloads = !queue.spec.lend_only;
    std::string error;
    for (size_t f = 0; f < queue.spec.flavors.size() && error.empty(); ++f) {
      const api::FlavorQuota& flavor = queue.spec.flavors[f];
      auto index = flavor_index.find(flavor.flavor);
      if (index == flavor_index.end()) {
        error = fmt::format("Queue {}: spec.flavors[{}].name: no ResourceFlavor \"{}\"",
                            queue.metadata.name, f, flavor.flavor);
        break;
      }
      sched::FlavorQuota quota;
      quota.flavor = index->second;
      for (size_t r = 0; r < flavor.resources.size(); ++r) {
        const api::ResourceQuota& given = flavor.resources[r];
        std::optional<sched::Resource> resource = QuotaResource(given.resource);
        if (!resource) {
          error =
              fmt::format("Queue {}: spec.flavors[{}].resources[{}].name: unknown resource \"{}\"",
                          queue.metadata.name, f, r, given.resource);
          break;
        }
        sched::ResourceQuota converted{QuotaAmount(*resource, given.nominal), std::nullopt,
                                       std::nullopt};
        if (given.borrowing_limit) {
          converted.borrowing_limit = QuotaAmount(*resource, *given.borrowing_limit);
        }
        if (given.lending_limit) {
          converted.lending_limit = QuotaAmount(*resource, *given.lending_limit);
        }
        quota.resources[static_cast<int>(*resource)] = converted;
      }
      out.flavors.push_back(std::move(quota));
    }
    for (const api::LocalQueueRef& local : queue.spec.local_queues) {
      model.names.AddLocalQueue(local.namespace_name, local.name, queue.metadata.name);
    }
    if (!error.empty()) {
      model.queue_errors[queue.metadata.name] = error;
      continue;
    }
    model.scheduler_queues.push_back(std::move(out));
    model.converted.push_back(ref);
  }
  return model;
}

namespace {

// The queue a workload of `namespace_name` names with `queue` (api::QueueNames); a name that
// resolves to none is passed on for the scheduler to call unknown.
std::string ResolveQueue(const QuotaModel& quota, const std::string& namespace_name,
                         const std::string& queue) {
  return quota.names.Resolve(namespace_name, queue).value_or(queue);
}

// Adds to `running` one pod of `shape` placed on `node_name` with `gpus`: what it holds.
void AddPlacement(sched::RunningWorkload& running, const api::Pod& shape,
                  const std::string& node_name, const std::vector<api::AssignedGpu>& gpus,
                  const std::string& pod_name, const WorkloadContext& context) {
  auto node = context.node_index.find(node_name);
  if (node == context.node_index.end()) return;  // its node is gone, and with it the capacity
  Result<sched::PodSet> pod_set =
      ConvertPodSet(pod_name, 1, shape.spec.resources, shape.spec.gpu_selector,
                    shape.spec.tolerations, "spec.resources");
  if (!pod_set) return;  // what it holds is described by its assignment alone
  sched::PodPlacement placement;
  placement.pod_set = static_cast<int>(running.workload.pod_sets.size());
  placement.node = node->second;
  for (const api::AssignedGpu& gpu : gpus) placement.gpus.push_back(static_cast<int>(gpu.index));
  running.workload.pod_sets.push_back(std::move(*pod_set));
  running.pods.push_back(std::move(placement));
}

const api::Pod& PodOf(const cluster::ObjectRef& ref) { return *ref->As<api::Pod>(); }

// A gang whose first member was bound with the gang's record but whose other members are not
// bound yet: the members of `waiting` that the record of a pod of `live` names.
UnfinishedBind RecordedMembers(const std::vector<cluster::ObjectRef>& live,
                               const std::vector<cluster::ObjectRef>& waiting) {
  std::vector<api::GangMember> members;
  UnfinishedBind unfinished;
  for (const cluster::ObjectRef& ref : live) {
    const std::string* record = api::PodAnnotation(PodOf(ref), api::kGangPlacementAnnotation);
    if (record == nullptr) continue;
    if (Result<std::vector<api::GangMember>> decoded = api::DecodeGangPlacement(*record)) {
      members = std::move(*decoded);
      unfinished.recorder = ref;
    }
  }
  std::map<std::string, const api::GangMember*> by_pod;
  for (const api::GangMember& member : members) by_pod[member.pod] = &member;
  for (const cluster::ObjectRef& ref : waiting) {
    auto member = by_pod.find(PodOf(ref).metadata.name);
    if (member != by_pod.end()) unfinished.unbound.emplace_back(ref, *member->second);
  }
  return unfinished;
}

// The ranks of `job`'s placement whose pods of the placed run do not exist: those whose role may
// start (`create`) and those whose role waits for the roles it depends on (`deferred`). Both
// hold their capacity.
struct MissingRanks {
  std::vector<api::JobPodAssignment> create;
  std::vector<api::JobPodAssignment> deferred;
};
MissingRanks FindMissingRanks(const api::Job& job, const std::vector<cluster::ObjectRef>& pods) {
  std::set<int64_t> present;
  std::vector<const api::Pod*> run;
  for (const cluster::ObjectRef& ref : pods) {
    const api::Pod& pod = PodOf(ref);
    if (pod.spec.owner.kind == "Job" && PodJobRun(pod) == job.status.placement->run) {
      present.insert(pod.spec.owner.rank);
      run.push_back(&pod);
    }
  }
  const std::vector<api::JobRole> roles = api::JobRoles(job.spec);
  const std::vector<api::RoleProgress> progress = api::RolesProgress(roles, run);
  MissingRanks missing;
  for (const api::JobPodAssignment& assignment : job.status.placement->pods) {
    if (present.count(assignment.rank) != 0) continue;
    std::optional<api::RolePosition> position = api::RoleOfRank(roles, assignment.rank);
    const bool waits = position && !api::DependenciesMet(roles, position->role, progress);
    (waits ? missing.deferred : missing.create).push_back(assignment);
  }
  return missing;
}

// What a workload of live pods `group` (and of `job`, with the ranks `missing`, and the gang
// members `recorded`) holds.
sched::RunningWorkload RunningOf(
    const std::string& name, const cluster::ObjectRef& job_ref,
    const std::vector<cluster::ObjectRef>& group, const std::vector<api::JobPodAssignment>& missing,
    const std::vector<std::pair<cluster::ObjectRef, api::GangMember>>& recorded,
    const WorkloadContext& context) {
  const std::map<std::string, int>& flavor_index = context.quota.flavor_index;
  const api::Job* job = job_ref != nullptr ? job_ref->As<api::Job>() : nullptr;
  sched::RunningWorkload running;
  running.workload.name = name;
  const std::string& ns =
      group.empty() ? job->metadata.namespace_name : PodOf(group.front()).metadata.namespace_name;
  const std::string& queue_name = group.empty() ? job->spec.queue : PodOf(group.front()).spec.queue;
  running.workload.queue = ResolveQueue(context.quota, ns, queue_name);
  running.workload.priority =
      static_cast<int>(group.empty() ? job->spec.priority : PodOf(group.front()).spec.priority);
  TimePoint started =
      group.empty() ? job_ref->raw.creation_timestamp : group.front()->raw.creation_timestamp;
  std::optional<TimePoint> checkpoint;
  for (const cluster::ObjectRef& ref : group) {
    const api::Pod& p = PodOf(ref);
    started = std::min(started, ref->raw.creation_timestamp);
    std::optional<TimePoint> pod_checkpoint = PodLastCheckpoint(p);
    if (pod_checkpoint && (!checkpoint || *pod_checkpoint > *checkpoint)) {
      checkpoint = pod_checkpoint;
    }
    AddPlacement(running, p, p.spec.node_name, p.spec.assigned_gpus, p.metadata.name, context);
    auto flavor = p.metadata.annotations.find(api::kFlavorAnnotation);
    if (flavor != p.metadata.annotations.end()) {
      if (auto index = flavor_index.find(flavor->second); index != flavor_index.end()) {
        running.flavor = index->second;
      }
    }
  }
  for (const auto& [ref, member] : recorded) {
    AddPlacement(running, PodOf(ref), member.node_name, member.gpus, member.pod, context);
  }
  if (job != nullptr) {
    const api::JobStatus& status = job->status;
    if (!missing.empty()) {
      const std::vector<api::JobRole> roles = api::JobRoles(job->spec);
      api::Pod shape;
      shape.spec.gpu_selector = job->spec.gpu_selector;
      shape.spec.tolerations = job->spec.tolerations;
      for (const api::JobPodAssignment& assignment : missing) {
        std::optional<api::RolePosition> position = api::RoleOfRank(roles, assignment.rank);
        shape.spec.resources = roles[position ? position->role : roles.size() - 1].resources;
        AddPlacement(running, shape, assignment.node_name, assignment.gpus,
                     JobPodName(job->metadata.name, assignment.rank), context);
      }
      if (auto index = flavor_index.find(status.placement->flavor); index != flavor_index.end()) {
        running.flavor = index->second;
      }
    }
    started = Timestamp(status.start_time, started);
    if (std::optional<TimePoint> t = ParseRfc3339(status.last_checkpoint_time)) checkpoint = t;
    running.times_preempted = static_cast<int>(status.preemption_count);
    auto reclaimable = job->metadata.annotations.find(api::kReclaimableAnnotation);
    running.reclaimable =
        reclaimable != job->metadata.annotations.end() && reclaimable->second == "true";
  }
  running.workload.submitted = started;
  running.started = started;
  running.last_checkpoint = checkpoint && *checkpoint > started ? *checkpoint : started;
  return running;
}

sched::Pending Held(const std::string& name, sched::PendingTier tier, std::string message) {
  return {name, tier, std::move(message), ""};
}

const std::string* QueueError(const QuotaModel& quota, const std::string& queue) {
  auto it = quota.queue_errors.find(queue);
  return it == quota.queue_errors.end() ? nullptr : &it->second;
}

// A job that waits: its workload, or why it cannot go to the scheduler.
void ReadPendingJob(const std::string& name, const cluster::ObjectRef& ref,
                    const WorkloadContext& context, WorkloadRead& out) {
  const api::Job& j = *ref->As<api::Job>();
  sched::Workload workload;
  workload.name = name;
  workload.queue = ResolveQueue(context.quota, j.metadata.namespace_name, j.spec.queue);
  workload.priority = static_cast<int>(j.spec.priority);
  workload.submitted = ref->raw.creation_timestamp;
  workload.topology = ConvertTopology(j.spec.topology);
  if (j.spec.runtime_limit > Duration::zero()) workload.runtime_limit = j.spec.runtime_limit;
  out.objects = WorkloadObjects{ref, {}};
  if (const std::string* error = QueueError(context.quota, workload.queue)) {
    out.held = Held(name, sched::PendingTier::kInvalid, *error);
    return;
  }
  // One pod set per role, in rank order: the binding's (pod set, index) is the rank.
  const std::vector<api::JobRole> roles = api::JobRoles(j.spec);
  for (size_t r = 0; r < roles.size(); ++r) {
    const api::JobRole& role = roles[r];
    const std::string path =
        j.spec.roles.empty() ? std::string("spec") : fmt::format("spec.roles[{}]", r);
    if (role.replicas > std::numeric_limits<int>::max()) {
      out.held = Held(name, sched::PendingTier::kInvalid, path + ".replicas: too many replicas");
      return;
    }
    Result<sched::PodSet> pod_set =
        ConvertPodSet(role.name, static_cast<int>(role.replicas), role.resources,
                      j.spec.gpu_selector, j.spec.tolerations, path + ".resources");
    if (!pod_set) {
      out.held = Held(name, sched::PendingTier::kInvalid, pod_set.error().message());
      return;
    }
    pod_set->node_selector = sched::Labels(role.node_selector.begin(), role.node_selector.end());
    workload.pod_sets.push_back(std::move(*pod_set));
  }
  out.pending = std::move(workload);
}

// Pods that wait, as one gang: its workload, or why it cannot go to the scheduler.
void ReadPendingGroup(const std::string& name, std::vector<cluster::ObjectRef> group,
                      const WorkloadContext& context, WorkloadRead& out) {
  const api::Pod& first = PodOf(group.front());
  sched::Workload workload;
  workload.name = name;
  workload.queue = ResolveQueue(context.quota, first.metadata.namespace_name, first.spec.queue);
  workload.priority = static_cast<int>(first.spec.priority);
  workload.submitted = group.front()->raw.creation_timestamp;
  if (const std::string* level = api::PodAnnotation(first, api::kTopologyLevelAnnotation)) {
    const std::string* mode = api::PodAnnotation(first, api::kTopologyModeAnnotation);
    workload.topology = ConvertTopology({*level, mode != nullptr ? *mode : "Required"});
  }
  std::string error;
  for (const cluster::ObjectRef& ref : group) {
    const api::Pod& p = PodOf(ref);
    workload.submitted = std::min(workload.submitted, ref->raw.creation_timestamp);
    Result<sched::PodSet> pod_set =
        ConvertPodSet(p.metadata.name, 1, p.spec.resources, p.spec.gpu_selector, p.spec.tolerations,
                      "Pod " + p.metadata.name + ": spec.resources");
    if (!pod_set) {
      error = pod_set.error().message();
      break;
    }
    pod_set->node_selector =
        sched::Labels(p.spec.node_selector.begin(), p.spec.node_selector.end());
    workload.pod_sets.push_back(std::move(*pod_set));
  }
  const int64_t min_member = GangSize(first);
  const size_t count = group.size();
  out.objects = WorkloadObjects{nullptr, std::move(group)};
  if (const std::string* queue_problem = QueueError(context.quota, workload.queue)) {
    error = *queue_problem;
  }
  if (!error.empty()) {
    out.held = Held(name, sched::PendingTier::kInvalid, error);
  } else if (static_cast<int64_t>(count) < min_member) {
    out.held = Held(name, sched::PendingTier::kGangIncomplete,
                    fmt::format("{} of minMember {} pods exist", count, min_member));
  } else {
    out.pending = std::move(workload);
  }
}

}  // namespace

WorkloadRead ReadWorkload(const std::string& name, const cluster::ObjectRef& job_ref,
                          const std::vector<cluster::ObjectRef>& pods,
                          const WorkloadContext& context) {
  WorkloadRead out;
  // Live bound pods hold capacity; unbound ones wait.
  bool has_job_pods = false;
  std::vector<cluster::ObjectRef> live, waiting;
  for (const cluster::ObjectRef& ref : pods) {
    const api::Pod& p = PodOf(ref);
    if (p.spec.owner.kind == "Job") has_job_pods = true;
    if (api::PodTerminal(p)) continue;
    if (!p.spec.node_name.empty()) {
      for (const api::AssignedGpu& gpu : p.spec.assigned_gpus) {
        if (!gpu.mig_instance.empty()) out.mig_instances.push_back(gpu.mig_instance);
      }
      auto addr = p.metadata.annotations.find(api::kMasterAddrAnnotation);
      auto port = p.metadata.annotations.find(api::kMasterPortAnnotation);
      if (addr != p.metadata.annotations.end() && port != p.metadata.annotations.end()) {
        out.master_ports.emplace_back(addr->second, std::atoi(port->second.c_str()));
      }
      live.push_back(ref);
    } else if (p.spec.owner.kind != "Job" && api::StopRequested(p).empty()) {
      waiting.push_back(ref);
    }
  }
  bool holds = !live.empty();

  std::vector<std::pair<cluster::ObjectRef, api::GangMember>> recorded;
  if (!live.empty() && !waiting.empty()) {
    UnfinishedBind unfinished = RecordedMembers(live, waiting);
    if (!unfinished.unbound.empty()) {
      recorded = unfinished.unbound;
      out.unfinished.push_back(std::move(unfinished));
      waiting.clear();
    }
  }

  const api::Job* job = job_ref != nullptr ? job_ref->As<api::Job>() : nullptr;
  std::vector<api::JobPodAssignment> missing;
  if (job != nullptr && !job->status.Terminal() && job->status.placement) {
    MissingRanks ranks = FindMissingRanks(*job, pods);
    if (!ranks.create.empty()) {
      UnfinishedBind unfinished;
      unfinished.job = job_ref;
      unfinished.missing = ranks.create;
      out.unfinished.push_back(std::move(unfinished));
    }
    missing = std::move(ranks.create);
    missing.insert(missing.end(), ranks.deferred.begin(), ranks.deferred.end());
    holds = holds || !missing.empty();
  }

  if (holds) {
    out.running =
        RunningOf(name, job != nullptr ? job_ref : nullptr, live, missing, recorded, context);
    out.objects = WorkloadObjects{job != nullptr ? job_ref : nullptr, live};
  }
  if (job != nullptr && !job->status.Terminal() && !job->status.placement && !has_job_pods) {
    ReadPendingJob(name, job_ref, context, out);
  }
  if (!waiting.empty()) ReadPendingGroup(name, std::move(waiting), context, out);
  return out;
}

}  // namespace strata::controller
