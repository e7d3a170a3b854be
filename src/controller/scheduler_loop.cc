#include "controller/scheduler_loop.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

#include "api/encode.h"
#include "api/job_roles.h"
#include "common/check.h"
#include "controller/object_writer.h"
#include "controller/training_pod.h"
#include "scheduler/quota_ledger.h"

namespace strata::controller {
namespace {

namespace sched = scheduler;

// The name of the scheduler's flavor `index`; "" for none (-1).
std::string FlavorName(const ClusterView& view, int index) {
  return index >= 0 ? view.snapshot.cluster->flavors[index].name : std::string();
}

std::string Explanation(const sched::Pending& pending) {
  if (pending.message.empty()) return pending.detail;
  if (pending.detail.empty()) return pending.message;
  return pending.message + " " + pending.detail;
}

cluster::EventSubject SubjectOf(const store::Object& raw) {
  return {raw.key.kind, raw.key.namespace_name, raw.key.name, raw.uid};
}

void KeepFirstError(Status& first, const Status& status) {
  if (first.ok() && !status.ok()) first = status;
}

const api::Pod& PodOf(const cluster::ObjectRef& ref) { return *ref->As<api::Pod>(); }

// What of a pod or a job the scheduler reads (workload_conversion.h), as text: what it asks for,
// where it is bound and what it holds, whether it still holds it, and what prices preempting
// it. Two states with the same fingerprint schedule alike.
std::string SchedulingFingerprint(const api::Object& object) {
  nlohmann::json encoded = api::EncodeObject(object);
  nlohmann::json& spec = encoded["spec"];
  spec.erase("template");
  std::string out = spec.dump();
  const std::map<std::string, std::string>& annotations = object.metadata().annotations;
  for (const char* key :
       {api::kFlavorAnnotation, api::kMasterAddrAnnotation, api::kMasterPortAnnotation,
        api::kGangPlacementAnnotation, api::kLastCheckpointAnnotation, api::kGroupSizeAnnotation,
        api::kJobRunAnnotation, api::kReclaimableAnnotation, api::kStopRequestedAnnotation}) {
    auto value = annotations.find(key);
    out += "|";
    if (value != annotations.end()) out += value->second;
  }
  if (const api::Pod* pod = object.As<api::Pod>()) {
    out += api::PodTerminal(*pod) ? "|terminal" : "|live";
    // A job's pod that starts running may let a role that waits for it start (job_roles.h).
    if (pod->spec.owner.kind == "Job" && pod->status.phase == api::PodPhase::kRunning) {
      out += "|running";
    }
  } else if (const api::Job* job = object.As<api::Job>()) {
    const api::JobStatus& status = job->status;
    out += fmt::format("|{}|{}|{}|{}|{}", status.Terminal(), status.preemption_count,
                       status.start_time, status.last_checkpoint_time, status.runs);
    if (status.placement) out += encoded["status"]["placement"].dump();
  }
  return out;
}

}  // namespace

SchedulerLoop::SchedulerLoop(store::Store& store, cluster::Cache& cache, const Clock& clock,
                             SchedulerLoopOptions options)
    : store_(store),
      cache_(cache),
      clock_(clock),
      options_(std::move(options)),
      scheduler_(options_.scheduler),
      reader_(options_.view),
      events_(store, clock, options_.event_repeat_interval) {
  if (options_.registry != nullptr) {
    cycle_seconds_ =
        &options_.registry
             ->AddHistogram(
                 "strata_scheduler_cycle_duration_seconds",
                 "Wall time of one scheduling cycle (snapshot in, decisions "
                 "out), excluding store reads and writes.",
                 {}, {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5})
             .With();
  }
}

Status SchedulerLoop::RunOnce() {
  if (Status synced = cache_.Sync(); !synced.ok()) return synced;
  cluster::Changes changes =
      cache_.ChangesSince(cursor_, {"Node", "Queue", "ResourceFlavor", "Job", "Pod"});
  const TimePoint now = clock_.Now();
  bool relevant = changes.resync || unexplained_ || (waiting_ && now >= next_idle_cycle_);
  if (changes.resync) last_nodes_.clear();
  if (changes.resync) last_seen_.clear();
  for (const cluster::Change& change : changes.changes) {
    if (change.key.kind == "Pod" || change.key.kind == "Job") {
      // What the agents write on a running pod (start times, measured activity; its phase going
      // Running only for a job's pod), the job controller's phase changes and the explanations
      // this loop writes change nothing the scheduler reads.
      if (!change.current || !change.current->object) {
        last_seen_.erase(change.key);
        relevant = true;
        continue;
      }
      std::string seen = SchedulingFingerprint(*change.current->object);
      auto [held, added] = last_seen_.try_emplace(change.key, seen);
      if (added || held->second != seen) {
        held->second = std::move(seen);
        relevant = true;
      }
      continue;
    }
    if (change.key.kind != "Node") {
      relevant = true;
      continue;
    }
    // A heartbeat changes a Node but not what the scheduler sees of it.
    const api::Node* node = change.current ? change.current->As<api::Node>() : nullptr;
    if (node == nullptr) {
      relevant |= last_nodes_.erase(change.key.name) > 0;
      continue;
    }
    sched::Node converted = ConvertNode(*node);
    auto [held, added] = last_nodes_.try_emplace(change.key.name, converted);
    if (added || !(held->second == converted)) {
      held->second = std::move(converted);
      relevant = true;
    }
  }
  if (!relevant) {
    cursor_ = changes.cursor;
    return Status::Ok();
  }

  ClusterView view = reader_.Read(cache_, nominated_, now);
  Status first;
  for (const UnfinishedBind& bind : view.unfinished) KeepFirstError(first, Finish(bind, view));
  if (!view.unfinished.empty()) {
    // What was finished changes what the cycle must see: the next pass reads it.
    if (first.ok()) cursor_ = changes.cursor;
    return first;
  }

  // The cycle's cost is measured on the machine's clock: it is CPU work, not virtual time.
  auto cycle_start = std::chrono::steady_clock::now();
  last_decisions_ = scheduler_.Cycle(view.snapshot, view.pending);
  ++cycles_;
  if (cycle_seconds_ != nullptr) {
    cycle_seconds_->Observe(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - cycle_start).count());
  }

  // A nomination lasts while its preemptor waits for its victims to go.
  std::set<std::string> nominated;
  for (const sched::Binding& binding : last_decisions_.bindings) {
    KeepFirstError(first, Bind(view, binding));
  }
  for (const sched::Preemption& preemption : last_decisions_.preemptions) {
    KeepFirstError(first, Evict(view, preemption));
    nominated.insert(preemption.preemptor);
  }
  KeepFirstError(first, StopRestOfPreemptedGangs(view));
  int64_t explanations = options_.max_explanations_per_pass;
  for (const sched::Pending& pending : last_decisions_.pending) {
    KeepFirstError(first, Explain(view, pending, explanations));
    if (nominated_.count(pending.workload) > 0) nominated.insert(pending.workload);
  }
  for (const sched::Pending& held : view.held) {
    KeepFirstError(first, Explain(view, held, explanations));
  }
  unexplained_ = explanations < 0;
  KeepFirstError(first, WriteQueueStatuses(view));
  nominated_ = std::move(nominated);
  waiting_ = !last_decisions_.pending.empty() || !view.held.empty();
  next_idle_cycle_ = now + options_.idle_cycle_interval;
  // A pass whose writes failed is redone from the same cursor.
  if (first.ok()) cursor_ = changes.cursor;
  return first;
}

Status SchedulerLoop::Finish(const UnfinishedBind& bind, const ClusterView& view) {
  if (bind.job != nullptr) {
    std::optional<cluster::Stored<api::Job>> job = cluster::StoredOf<api::Job>(bind.job);
    STRATA_CHECK(job && job->value.status.placement);
    ObjectWriter writer(store_, events_, SubjectOf(job->raw));
    for (const api::JobPodAssignment& assignment : bind.missing) {
      writer.Create(MakeJobPod(job->value, *job->value.status.placement, assignment));
    }
    return writer.status();
  }
  Status first;
  const api::Pod& recorder = PodOf(bind.recorder);
  for (const auto& [ref, member] : bind.unbound) {
    std::optional<cluster::Stored<api::Pod>> stored = cluster::StoredOf<api::Pod>(ref);
    STRATA_CHECK(stored.has_value());
    api::Pod pod = stored->value;
    pod.spec.node_name = member.node_name;
    pod.spec.assigned_gpus = member.gpus;
    // What the whole gang was bound with, as the recording member carries it.
    for (const char* key :
         {api::kFlavorAnnotation, api::kLeaderAddressAnnotation, api::kBoundAtAnnotation}) {
      if (const std::string* value = api::PodAnnotation(recorder, key)) {
        pod.metadata.annotations[key] = *value;
      }
    }
    pod.status.reason.clear();
    pod.status.message.clear();
    ObjectWriter writer(store_, events_, SubjectOf(stored->raw));
    writer.Update(*stored, std::move(pod));
    KeepFirstError(first, writer.status());
  }
  return first;
}

Status SchedulerLoop::Bind(ClusterView& view, const sched::Binding& binding) {
  auto objects = view.workloads.find(binding.workload);
  STRATA_CHECK(objects != view.workloads.end());
  if (objects->second.job) return BindJob(view, binding, objects->second);
  return BindPods(view, binding, objects->second);
}

namespace {

// The GPUs of `placement` as the pod records them.
std::vector<api::AssignedGpu> AssignGpus(ClusterView& view, const sched::PodPlacement& placement,
                                         const api::ResourceRequest& request) {
  const api::Node& node = *view.nodes[placement.node]->As<api::Node>();
  std::vector<api::AssignedGpu> out;
  for (int index : placement.gpus) {
    STRATA_CHECK(index >= 0 && index < static_cast<int>(node.status.gpus.size()));
    const api::NodeGpu& gpu = node.status.gpus[index];
    api::AssignedGpu assigned;
    assigned.index = gpu.index;
    assigned.uuid = gpu.uuid;
    if (!request.mig_profile.empty()) {
      for (const api::MigInstance& instance : gpu.mig_instances) {
        if (instance.profile == request.mig_profile &&
            view.mig_instances_in_use.Take(instance.uuid)) {
          assigned.mig_instance = instance.uuid;
          break;
        }
      }
    } else if (request.gpu.milli() % 1000 != 0 || request.gpu.IsZero()) {
      assigned.share = request.gpu;
      if (!request.gpu_memory.IsZero()) assigned.memory = request.gpu_memory;
    }
    out.push_back(std::move(assigned));
  }
  return out;
}

const api::Node& NodeAt(const ClusterView& view, int index) {
  return *view.nodes[index]->As<api::Node>();
}

}  // namespace

Status SchedulerLoop::BindJob(ClusterView& view, const sched::Binding& binding,
                              const WorkloadObjects& objects) {
  std::optional<cluster::Stored<api::Job>> stored = cluster::StoredOf<api::Job>(objects.job);
  STRATA_CHECK(stored.has_value());
  api::Job job = stored->value;
  const TimePoint now = clock_.Now();

  api::JobPlacement placement;
  placement.run = job.status.runs + 1;
  placement.flavor = FlavorName(view, binding.flavor);
  placement.master_port = options_.first_master_port;
  placement.bound_at = FormatRfc3339(now);
  // The scheduler's pod sets are the job's roles in rank order (workload_conversion.cc).
  const std::vector<api::JobRole> roles = api::JobRoles(job.spec);
  auto rank_of = [&](const sched::PodPlacement& pod) {
    return api::FirstRank(roles, static_cast<size_t>(pod.pod_set)) + pod.pod_index;
  };
  for (const sched::PodPlacement& pod : binding.pods) {
    STRATA_CHECK(pod.pod_set >= 0 && static_cast<size_t>(pod.pod_set) < roles.size());
    if (rank_of(pod) == api::RendezvousRank(roles)) {
      placement.master_addr = api::NodeAddress(NodeAt(view, pod.node));
    }
  }
  while (!view.master_ports_in_use.Take(
      {placement.master_addr, static_cast<int>(placement.master_port)})) {
    ++placement.master_port;
  }
  std::vector<std::string> node_names;
  for (const sched::PodPlacement& pod : binding.pods) {
    const std::string& node_name = NodeAt(view, pod.node).metadata.name;
    placement.pods.push_back(
        {rank_of(pod), node_name, AssignGpus(view, pod, roles[pod.pod_set].resources)});
    node_names.push_back(node_name);
  }
  std::sort(placement.pods.begin(), placement.pods.end(),
            [](const auto& a, const auto& b) { return a.rank < b.rank; });
  const std::string placed = fmt::format("{}", fmt::join(node_names, ", "));

  job.status.runs = placement.run;
  job.status.placement = placement;
  job.status.reason.clear();
  job.status.message.clear();
  job.status.SetCondition("Scheduled", "True", "Scheduled",
                          fmt::format("placed {} pod(s) on {}", binding.pods.size(), placed), now);
  ObjectWriter writer(store_, events_, SubjectOf(stored->raw));
  // The commit point: once the placement is stored, a pass finishes the bind whatever happens
  // between the creates below.
  writer.Update(*stored, job);
  // Roles that wait for others get their pods later, when a pass finds what they wait for
  // (workload_conversion.h UnfinishedBind); their capacity is held from now on.
  const std::vector<api::RoleProgress> nothing_yet(roles.size(), api::RoleProgress::kWaiting);
  for (const api::JobPodAssignment& assignment : placement.pods) {
    std::optional<api::RolePosition> position = api::RoleOfRank(roles, assignment.rank);
    if (position && !api::DependenciesMet(roles, position->role, nothing_yet)) continue;
    writer.Create(MakeJobPod(job, placement, assignment));
  }
  writer.Event("Normal", "Scheduled",
               fmt::format("Successfully assigned {} pod(s) of {}/{} to {}", binding.pods.size(),
                           stored->raw.key.namespace_name, stored->raw.key.name, placed));
  return writer.status();
}

Status SchedulerLoop::BindPods(ClusterView& view, const sched::Binding& binding,
                               const WorkloadObjects& objects) {
  const std::string flavor = FlavorName(view, binding.flavor);
  const std::string bound_at = FormatRfc3339(clock_.Now());
  // A service replica's pods learn where its leader (rank 0) runs: LeaderWorkerSet's
  // LWS_LEADER_ADDRESS.
  std::string leader_address;
  for (const sched::PodPlacement& placement : binding.pods) {
    const api::PodOwner& owner = PodOf(objects.pods[placement.pod_set]).spec.owner;
    if (owner.kind == "Service" && owner.rank == 0) {
      leader_address = api::NodeAddress(NodeAt(view, placement.node));
    }
  }
  std::vector<api::Pod> bound;
  std::vector<api::GangMember> members;
  for (const sched::PodPlacement& placement : binding.pods) {
    STRATA_CHECK(placement.pod_set >= 0 &&
                 placement.pod_set < static_cast<int>(objects.pods.size()));
    api::Pod pod = PodOf(objects.pods[placement.pod_set]);
    pod.spec.node_name = NodeAt(view, placement.node).metadata.name;
    if (!leader_address.empty()) {
      pod.metadata.annotations[api::kLeaderAddressAnnotation] = leader_address;
    }
    pod.spec.assigned_gpus = AssignGpus(view, placement, pod.spec.resources);
    if (!flavor.empty()) pod.metadata.annotations[api::kFlavorAnnotation] = flavor;
    pod.metadata.annotations[api::kBoundAtAnnotation] = bound_at;
    pod.status.reason.clear();
    pod.status.message.clear();
    members.push_back({pod.metadata.name, pod.spec.node_name, pod.spec.assigned_gpus});
    bound.push_back(std::move(pod));
  }
  // The commit point of a gang: its first member carries the whole gang's placement.
  if (bound.size() > 1) {
    bound.front().metadata.annotations[api::kGangPlacementAnnotation] =
        api::EncodeGangPlacement(members);
  }
  Status first;
  for (size_t i = 0; i < bound.size() && first.ok(); ++i) {
    const sched::PodPlacement& placement = binding.pods[i];
    std::optional<cluster::Stored<api::Pod>> stored =
        cluster::StoredOf<api::Pod>(objects.pods[placement.pod_set]);
    ObjectWriter writer(store_, events_, SubjectOf(stored->raw));
    const std::string message =
        fmt::format("Successfully assigned {}/{} to {}", bound[i].metadata.namespace_name,
                    bound[i].metadata.name, bound[i].spec.node_name);
    writer.Update(*stored, std::move(bound[i]));
    writer.Event("Normal", "Scheduled", message);
    first = writer.status();
  }
  return first;
}

Status SchedulerLoop::Evict(const ClusterView& view, const sched::Preemption& preemption) {
  auto objects = view.workloads.find(preemption.victim);
  STRATA_CHECK(objects != view.workloads.end());
  const std::string message =
      fmt::format("preempted by {} ({})", preemption.preemptor, preemption.reason);
  const cluster::ObjectRef& subject =
      objects->second.job ? objects->second.job : objects->second.pods.front();
  ObjectWriter writer(store_, events_, SubjectOf(subject->raw));
  bool marked = false;
  for (const cluster::ObjectRef& ref : objects->second.pods) {
    std::optional<cluster::Stored<api::Pod>> stored = cluster::StoredOf<api::Pod>(ref);
    if (!api::StopRequested(stored->value).empty()) continue;
    writer.StopPod(*stored, api::kStopPreempted, message);
    marked = true;
  }
  if (marked) writer.Event("Warning", "Preempted", message);
  return writer.status();
}

Status SchedulerLoop::StopRestOfPreemptedGangs(const ClusterView& view) {
  Status first;
  for (const std::string& name : view.preempted_groups) {
    const WorkloadObjects& objects = view.workloads.at(name);
    const cluster::ObjectRef* preempted = nullptr;
    for (const cluster::ObjectRef& ref : objects.pods) {
      if (api::StopRequested(PodOf(ref)) == api::kStopPreempted) preempted = &ref;
    }
    if (preempted == nullptr) continue;
    const std::string* message = api::PodAnnotation(PodOf(*preempted), api::kStopMessageAnnotation);
    for (const cluster::ObjectRef& ref : objects.pods) {
      std::optional<cluster::Stored<api::Pod>> stored = cluster::StoredOf<api::Pod>(ref);
      if (!api::StopRequested(stored->value).empty()) continue;
      ObjectWriter writer(store_, events_, SubjectOf(stored->raw));
      writer.StopPod(*stored, api::kStopPreempted, message != nullptr ? *message : "preempted");
      KeepFirstError(first, writer.status());
    }
  }
  return first;
}

Status SchedulerLoop::Explain(const ClusterView& view, const sched::Pending& pending,
                              int64_t& budget) {
  auto objects = view.workloads.find(pending.workload);
  STRATA_CHECK(objects != view.workloads.end());
  const std::string tier(sched::PendingTierName(pending.tier));
  const std::string text = Explanation(pending);
  // Each workload whose explanation changes spends one; once none is left (budget below 0), the
  // next pass comes for the rest.
  auto spend = [&budget] { return budget-- > 0; };
  if (objects->second.job) {
    std::optional<cluster::Stored<api::Job>> job = cluster::StoredOf<api::Job>(objects->second.job);
    api::Job updated = job->value;
    api::JobStatus& status = updated.status;
    bool changed = status.reason != tier || status.message != text;
    status.reason = tier;
    status.message = text;
    changed |= status.SetCondition("Scheduled", "False", tier, text, clock_.Now());
    if (changed && !spend()) return Status::Ok();
    ObjectWriter writer(store_, events_, SubjectOf(job->raw));
    if (changed) writer.Update(*job, std::move(updated));
    writer.Event("Warning", "FailedScheduling", text);
    return writer.status();
  }
  Status first;
  const bool changed = std::any_of(objects->second.pods.begin(), objects->second.pods.end(),
                                   [&](const cluster::ObjectRef& ref) {
                                     const api::Pod& pod = PodOf(ref);
                                     return pod.status.reason != tier || pod.status.message != text;
                                   });
  if (changed && !spend()) return Status::Ok();
  for (const cluster::ObjectRef& ref : objects->second.pods) {
    std::optional<cluster::Stored<api::Pod>> stored = cluster::StoredOf<api::Pod>(ref);
    ObjectWriter writer(store_, events_, SubjectOf(stored->raw));
    if (stored->value.status.reason != tier || stored->value.status.message != text) {
      api::Pod pod = stored->value;
      pod.status.reason = tier;
      pod.status.message = text;
      writer.Update(*stored, std::move(pod));
    }
    writer.Event("Warning", "FailedScheduling", text);
    KeepFirstError(first, writer.status());
  }
  return first;
}

namespace {

// A quota resource's name as queues spell it, and its amount as a quantity.
struct QuotaResourceName {
  sched::Resource resource;
  const char* name;
};
constexpr QuotaResourceName kQuotaResources[] = {{sched::Resource::kGpu, "gpu"},
                                                 {sched::Resource::kGpuMemory, "gpuMemory"},
                                                 {sched::Resource::kCpu, "cpu"},
                                                 {sched::Resource::kMemory, "memory"}};

Quantity ToQuantity(sched::Resource resource, int64_t amount) {
  switch (resource) {
    case sched::Resource::kGpu:
    case sched::Resource::kCpu:
      return Quantity::FromMilli(amount);
    case sched::Resource::kGpuMemory:
      return Quantity::FromUnits(amount * 1024 * 1024);
    case sched::Resource::kMemory:
      return Quantity::FromUnits(amount);
  }
  return Quantity();
}

}  // namespace

Status SchedulerLoop::WriteQueueStatuses(const ClusterView& view) {
  const sched::Cluster& cluster = *view.snapshot.cluster;
  auto flavor_of = [&](int flavor) -> const sched::Flavor* {
    return flavor >= 0 ? &cluster.flavors[flavor] : nullptr;
  };
  // What each queue's admitted workloads are charged, per flavor: what ran at the start of the
  // cycle and what it bound.
  std::map<std::pair<std::string, int>, sched::ResourceVector> charged = view.charges.charged;
  std::map<std::string, int64_t> admitted = view.charges.admitted;
  std::map<std::string, int64_t> pending;
  std::map<std::string, const sched::Workload*> pending_by_name;
  for (const sched::Workload& workload : view.pending) pending_by_name[workload.name] = &workload;
  for (const sched::Binding& binding : last_decisions_.bindings) {
    auto workload = pending_by_name.find(binding.workload);
    if (workload == pending_by_name.end()) continue;
    charged[{workload->second->queue, binding.flavor}] +=
        sched::QuotaLedger::ChargeFor(*workload->second, flavor_of(binding.flavor));
    ++admitted[workload->second->queue];
  }
  for (const sched::Pending& waiting : last_decisions_.pending) {
    if (auto workload = pending_by_name.find(waiting.workload); workload != pending_by_name.end()) {
      ++pending[workload->second->queue];
    }
  }
  std::map<std::string, int> flavor_index;
  for (size_t i = 0; i < cluster.flavors.size(); ++i) flavor_index[cluster.flavors[i].name] = i;

  Status first;
  for (const cluster::ObjectRef& ref : view.queues) {
    std::optional<cluster::Stored<api::Queue>> stored = cluster::StoredOf<api::Queue>(ref);
    const api::Queue& queue = stored->value;
    api::QueueStatus status;
    const std::string& name = queue.metadata.name;
    status.admitted_workloads = admitted[name];
    status.pending_workloads = pending[name];
    auto usage_of = [&](int flavor, const std::vector<api::ResourceQuota>& quotas) {
      api::FlavorUsage usage;
      usage.flavor = flavor >= 0 ? cluster.flavors[flavor].name : std::string();
      auto it = charged.find({name, flavor});
      const sched::ResourceVector used = it == charged.end() ? sched::ResourceVector{} : it->second;
      for (const QuotaResourceName& resource : kQuotaResources) {
        const api::ResourceQuota* quota = nullptr;
        for (const api::ResourceQuota& q : quotas) {
          if (q.resource == resource.name) quota = &q;
        }
        if (quota == nullptr && used[resource.resource] == 0) continue;
        api::ResourceUsage entry;
        entry.resource = resource.name;
        entry.nominal = quota != nullptr ? quota->nominal : Quantity();
        entry.used = ToQuantity(resource.resource, used[resource.resource]);
        entry.borrowed = entry.used > entry.nominal ? entry.used - entry.nominal : Quantity();
        usage.resources.push_back(std::move(entry));
      }
      return usage;
    };
    if (queue.spec.flavors.empty()) {
      api::FlavorUsage usage = usage_of(-1, {});
      if (!usage.resources.empty()) status.flavors_usage.push_back(std::move(usage));
    }
    for (const api::FlavorQuota& flavor : queue.spec.flavors) {
      auto index = flavor_index.find(flavor.flavor);
      if (index == flavor_index.end()) continue;
      status.flavors_usage.push_back(usage_of(index->second, flavor.resources));
    }
    if (status == queue.status) continue;
    api::Queue updated = queue;
    updated.status = std::move(status);
    ObjectWriter writer(store_, events_, SubjectOf(stored->raw));
    writer.Update(*stored, std::move(updated));
    KeepFirstError(first, writer.status());
  }
  return first;
}

}  // namespace strata::controller
