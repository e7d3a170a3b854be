#include "controller/scheduler_loop.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/check.h"
#include "controller/job_status.h"
#include "controller/training_pod.h"

namespace strata::controller {
namespace {

std::string Explanation(const scheduler::Pending& pending) {
  if (pending.message.empty()) return pending.detail;
  if (pending.detail.empty()) return pending.message;
  return pending.message + " " + pending.detail;
}

EventSubject SubjectOf(const store::Object& raw) {
  return {raw.key.kind, raw.key.namespace_name, raw.key.name, raw.uid};
}

void KeepFirstError(Status& first, const Status& status) {
  if (first.ok() && !status.ok()) first = status;
}

}  // namespace

SchedulerLoop::SchedulerLoop(store::Store& store, const Clock& clock, SchedulerLoopOptions options)
    : store_(store),
      clock_(clock),
      options_(std::move(options)),
      scheduler_(options_.scheduler),
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
  Result<ClusterView> read = ReadClusterView(store_, options_.view, nominated_, clock_.Now());
  if (!read) return read.error();
  ClusterView& view = *read;
  // The cycle's cost is measured on the machine's clock: it is CPU work, not virtual time.
  auto cycle_start = std::chrono::steady_clock::now();
  last_decisions_ = scheduler_.Cycle(view.snapshot, view.pending);
  if (cycle_seconds_ != nullptr) {
    cycle_seconds_->Observe(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - cycle_start).count());
  }

  Status first;
  // A nomination lasts while its preemptor waits for its victims to go.
  std::set<std::string> nominated;
  for (const scheduler::Binding& binding : last_decisions_.bindings) {
    KeepFirstError(first, Bind(view, binding));
  }
  for (const scheduler::Preemption& preemption : last_decisions_.preemptions) {
    KeepFirstError(first, Evict(view, preemption));
    nominated.insert(preemption.preemptor);
  }
  for (const scheduler::Pending& pending : last_decisions_.pending) {
    KeepFirstError(first, Explain(view, pending));
    if (nominated_.count(pending.workload) > 0) nominated.insert(pending.workload);
  }
  for (const scheduler::Pending& held : view.held) KeepFirstError(first, Explain(view, held));
  nominated_ = std::move(nominated);
  return first;
}

Status SchedulerLoop::Bind(ClusterView& view, const scheduler::Binding& binding) {
  auto objects = view.workloads.find(binding.workload);
  STRATA_CHECK(objects != view.workloads.end());
  if (objects->second.job) return BindJob(view, binding, objects->second);
  return BindPods(view, binding, objects->second);
}

namespace {

// The GPUs of `placement` as the pod records them.
std::vector<api::AssignedGpu> AssignGpus(ClusterView& view,
                                         const scheduler::PodPlacement& placement,
                                         const api::ResourceRequest& request) {
  const api::Node& node = view.nodes[placement.node].value;
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
            view.mig_instances_in_use.insert(instance.uuid).second) {
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

}  // namespace

Status SchedulerLoop::BindJob(ClusterView& view, const scheduler::Binding& binding,
                              const WorkloadObjects& objects) {
  const Stored<api::Job>& job = *objects.job;
  const TimePoint now = clock_.Now();
  JobStatus status = ReadJobStatus(job.raw.body);
  std::string flavor = binding.flavor >= 0 ? view.flavors[binding.flavor] : std::string();

  JobRun run;
  run.run_id = job.raw.uid;
  run.restart_count = status.restart_count;
  run.master_port = options_.first_master_port;
  for (const scheduler::PodPlacement& placement : binding.pods) {
    if (placement.pod_index == 0) {
      run.master_addr = NodeAddress(view.nodes[placement.node].value);
    }
  }
  while (view.master_ports_in_use.count({run.master_addr, run.master_port}) > 0) {
    ++run.master_port;
  }
  view.master_ports_in_use.insert({run.master_addr, run.master_port});

  std::vector<store::Write> writes;
  std::vector<std::string> node_names;
  for (const scheduler::PodPlacement& placement : binding.pods) {
    JobPodPlacement pod_placement;
    pod_placement.rank = placement.pod_index;
    pod_placement.node_name = view.nodes[placement.node].value.metadata.name;
    pod_placement.gpus = AssignGpus(view, placement, job.value.spec.resources);
    pod_placement.flavor = flavor;
    node_names.push_back(pod_placement.node_name);
    api::Pod pod = MakeJobPod(job.value, run, pod_placement);
    writes.push_back({store::WriteOp::kCreate, EncodeForStore(api::Object(std::move(pod)))});
  }
  std::string placed = fmt::format("{}", fmt::join(node_names, ", "));
  status.reason.clear();
  status.message.clear();
  status.SetCondition("Scheduled", "True", "Scheduled",
                      fmt::format("placed {} pod(s) on {}", binding.pods.size(), placed), now);
  store::Object updated = job.raw;
  WriteJobStatus(status, updated.body);
  writes.push_back({store::WriteOp::kUpdate, std::move(updated)});
  Result<std::optional<store::Write>> event = events_.Record(
      SubjectOf(job.raw), "Normal", "Scheduled",
      fmt::format("Successfully assigned {} pod(s) of {}/{} to {}", binding.pods.size(),
                  job.raw.key.namespace_name, job.raw.key.name, placed));
  if (!event) return event.error();
  if (*event) writes.push_back(std::move(**event));
  return Commit(std::move(writes));
}

Status SchedulerLoop::BindPods(ClusterView& view, const scheduler::Binding& binding,
                               const WorkloadObjects& objects) {
  std::string flavor = binding.flavor >= 0 ? view.flavors[binding.flavor] : std::string();
  // A service replica's pods learn where its leader (rank 0) runs: LeaderWorkerSet's
  // LWS_LEADER_ADDRESS.
  std::string leader_address;
  for (const scheduler::PodPlacement& placement : binding.pods) {
    const api::PodOwner& owner = objects.pods[placement.pod_set].value.spec.owner;
    if (owner.kind == "Service" && owner.rank == 0) {
      leader_address = NodeAddress(view.nodes[placement.node].value);
    }
  }
  std::vector<store::Write> writes;
  for (const scheduler::PodPlacement& placement : binding.pods) {
    STRATA_CHECK(placement.pod_set >= 0 &&
                 placement.pod_set < static_cast<int>(objects.pods.size()));
    const Stored<api::Pod>& stored = objects.pods[placement.pod_set];
    api::Pod pod = stored.value;
    pod.spec.node_name = view.nodes[placement.node].value.metadata.name;
    if (!leader_address.empty()) {
      pod.metadata.annotations[node::kLeaderAddressAnnotation] = leader_address;
    }
    pod.spec.assigned_gpus = AssignGpus(view, placement, pod.spec.resources);
    if (!flavor.empty()) pod.metadata.annotations[kFlavorAnnotation] = flavor;
    pod.status.reason.clear();
    pod.status.message.clear();
    Result<std::optional<store::Write>> event =
        events_.Record(SubjectOf(stored.raw), "Normal", "Scheduled",
                       fmt::format("Successfully assigned {}/{} to {}", pod.metadata.namespace_name,
                                   pod.metadata.name, pod.spec.node_name));
    if (!event) return event.error();
    writes.push_back(
        {store::WriteOp::kUpdate, EncodeForStore(api::Object(std::move(pod)), stored.raw)});
    if (*event) writes.push_back(std::move(**event));
  }
  return Commit(std::move(writes));
}

Status SchedulerLoop::Evict(const ClusterView& view, const scheduler::Preemption& preemption) {
  auto objects = view.workloads.find(preemption.victim);
  STRATA_CHECK(objects != view.workloads.end());
  std::string message =
      fmt::format("preempted by {} ({})", preemption.preemptor, preemption.reason);
  std::vector<store::Write> writes;
  for (const Stored<api::Pod>& stored : objects->second.pods) {
    api::Pod pod = stored.value;
    if (!RequestStop(pod, kStopPreempted, message)) continue;
    writes.push_back(
        {store::WriteOp::kUpdate, EncodeForStore(api::Object(std::move(pod)), stored.raw)});
  }
  if (writes.empty()) return Status::Ok();
  const store::Object& subject =
      objects->second.job ? objects->second.job->raw : objects->second.pods.front().raw;
  Result<std::optional<store::Write>> event =
      events_.Record(SubjectOf(subject), "Warning", "Preempted", message);
  if (!event) return event.error();
  if (*event) writes.push_back(std::move(**event));
  return Commit(std::move(writes));
}

Status SchedulerLoop::Explain(const ClusterView& view, const scheduler::Pending& pending) {
  auto objects = view.workloads.find(pending.workload);
  STRATA_CHECK(objects != view.workloads.end());
  const std::string tier(scheduler::PendingTierName(pending.tier));
  const std::string text = Explanation(pending);
  std::vector<store::Write> writes;
  auto record = [&](const store::Object& subject) -> Status {
    Result<std::optional<store::Write>> event =
        events_.Record(SubjectOf(subject), "Warning", "FailedScheduling", text);
    if (!event) return event.error();
    if (*event) writes.push_back(std::move(**event));
    return Status::Ok();
  };
  if (objects->second.job) {
    const Stored<api::Job>& job = *objects->second.job;
    JobStatus status = ReadJobStatus(job.raw.body);
    bool changed = status.reason != tier || status.message != text;
    status.reason = tier;
    status.message = text;
    changed |= status.SetCondition("Scheduled", "False", tier, text, clock_.Now());
    if (changed) {
      store::Object updated = job.raw;
      WriteJobStatus(status, updated.body);
      writes.push_back({store::WriteOp::kUpdate, std::move(updated)});
    }
    if (Status recorded = record(job.raw); !recorded.ok()) return recorded;
  } else {
    for (const Stored<api::Pod>& stored : objects->second.pods) {
      if (stored.value.status.reason != tier || stored.value.status.message != text) {
        api::Pod pod = stored.value;
        pod.status.reason = tier;
        pod.status.message = text;
        writes.push_back(
            {store::WriteOp::kUpdate, EncodeForStore(api::Object(std::move(pod)), stored.raw)});
      }
      if (Status recorded = record(stored.raw); !recorded.ok()) return recorded;
    }
  }
  if (writes.empty()) return Status::Ok();
  return Commit(std::move(writes));
}

Status SchedulerLoop::Commit(std::vector<store::Write> writes) {
  Result<std::vector<store::Object>> applied = store_.Apply(std::move(writes));
  return applied ? Status::Ok() : applied.error();
}

}  // namespace strata::controller
