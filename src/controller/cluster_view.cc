#include "controller/cluster_view.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "api/queue.h"
#include "api/queue_names.h"
#include "controller/job_status.h"
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

sched::Node ConvertNode(const api::Node& node) {
  sched::Node out;
  out.name = node.metadata.name;
  out.labels = sched::Labels(node.metadata.labels.begin(), node.metadata.labels.end());
  for (const api::Taint& taint : node.spec.taints) {
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

// Queues and flavors, with what in them does not convert, by queue name.
struct QuotaModel {
  api::QueueNames names;
  std::vector<std::string> flavors;
  std::map<std::string, std::string> queue_errors;
};

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

QuotaModel ConvertQuota(const std::vector<Stored<api::Queue>>& queues,
                        const std::vector<Stored<api::ResourceFlavor>>& flavors,
                        sched::Cluster& cluster) {
  QuotaModel model;
  std::map<std::string, int> flavor_index;
  for (const auto& flavor : flavors) {
    flavor_index[flavor.value.metadata.name] = static_cast<int>(cluster.flavors.size());
    cluster.flavors.push_back(
        {flavor.value.metadata.name,
         sched::Labels(flavor.value.spec.node_labels.begin(), flavor.value.spec.node_labels.end()),
         std::nullopt});
    model.flavors.push_back(flavor.value.metadata.name);
  }
  for (const auto& stored : queues) {
    const api::Queue& queue = stored.value;
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
    cluster.queues.push_back(std::move(out));
  }
  return model;
}

// The queue a workload of `namespace_name` names with `queue` (api::QueueNames); a name that
// resolves to none is passed on for the scheduler to call unknown.
std::string ResolveQueue(const QuotaModel& quota, const std::string& namespace_name,
                         const std::string& queue) {
  return quota.names.Resolve(namespace_name, queue).value_or(queue);
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

std::string PodWorkloadName(const api::Pod& pod) {
  if (pod.spec.owner.kind == "Job") {
    return fmt::format("Job/{}/{}", pod.metadata.namespace_name, pod.spec.owner.name);
  }
  return PodGroupName(pod);
}

TimePoint Timestamp(const std::string& text, TimePoint fallback) {
  std::optional<TimePoint> parsed = ParseRfc3339(text);
  return parsed ? *parsed : fallback;
}

}  // namespace

std::string JobWorkloadName(const api::Job& job) {
  return fmt::format("Job/{}/{}", job.metadata.namespace_name, job.metadata.name);
}

Result<ClusterView> ReadClusterView(const store::Store& store, const ClusterViewOptions& options,
                                    const std::set<std::string>& nominated, TimePoint now) {
  ASSIGN_OR_RETURN(std::vector<Stored<api::Node>> nodes, ListStored<api::Node>(store, "Node"));
  ASSIGN_OR_RETURN(auto queues, ListStored<api::Queue>(store, "Queue"));
  ASSIGN_OR_RETURN(auto flavors, ListStored<api::ResourceFlavor>(store, "ResourceFlavor"));
  ASSIGN_OR_RETURN(std::vector<Stored<api::Job>> jobs, ListStored<api::Job>(store, "Job"));
  ASSIGN_OR_RETURN(std::vector<Stored<api::Pod>> pods, ListStored<api::Pod>(store, "Pod"));

  ClusterView view;
  auto cluster = std::make_shared<sched::Cluster>();
  cluster->topology_levels = options.topology_levels;
  std::map<std::string, int> node_index;
  for (auto& node : nodes) {
    node_index[node.value.metadata.name] = static_cast<int>(cluster->nodes.size());
    cluster->nodes.push_back(ConvertNode(node.value));
  }
  view.nodes = std::move(nodes);
  QuotaModel quota = ConvertQuota(queues, flavors, *cluster);
  view.flavors = quota.flavors;
  std::map<std::string, int> flavor_index;
  for (size_t i = 0; i < quota.flavors.size(); ++i) flavor_index[quota.flavors[i]] = i;
  view.snapshot.now = now;

  auto hold = [&](const std::string& name, sched::PendingTier tier, std::string message) {
    view.held.push_back({name, tier, std::move(message), ""});
  };
  auto queue_error = [&](const std::string& queue) -> const std::string* {
    auto it = quota.queue_errors.find(queue);
    return it == quota.queue_errors.end() ? nullptr : &it->second;
  };

  // Pods: live bound ones hold capacity; unbound ones wait.
  std::set<std::string> jobs_with_pods;
  std::map<std::string, std::vector<Stored<api::Pod>>> live, waiting;
  for (auto& pod : pods) {
    const api::Pod& p = pod.value;
    if (p.spec.owner.kind == "Job") {
      jobs_with_pods.insert(PodWorkloadName(p));
    }
    if (PodTerminal(p)) continue;
    if (!p.spec.node_name.empty()) {
      for (const api::AssignedGpu& gpu : p.spec.assigned_gpus) {
        if (!gpu.mig_instance.empty()) view.mig_instances_in_use.insert(gpu.mig_instance);
      }
      auto addr = p.metadata.annotations.find(kMasterAddrAnnotation);
      auto port = p.metadata.annotations.find(kMasterPortAnnotation);
      if (addr != p.metadata.annotations.end() && port != p.metadata.annotations.end()) {
        view.master_ports_in_use.insert({addr->second, std::atoi(port->second.c_str())});
      }
      live[PodWorkloadName(p)].push_back(std::move(pod));
    } else if (p.spec.owner.kind != "Job" && StopRequested(p).empty()) {
      waiting[PodGroupName(p)].push_back(std::move(pod));
    }
  }

  std::map<std::string, Stored<api::Job>> job_by_name;
  for (auto& job : jobs) job_by_name.emplace(JobWorkloadName(job.value), std::move(job));

  // Running workloads, one per group of live pods.
  for (auto& [name, group] : live) {
    sched::RunningWorkload running;
    running.workload.name = name;
    const api::Pod& first = group.front().value;
    running.workload.queue = ResolveQueue(quota, first.metadata.namespace_name, first.spec.queue);
    running.workload.priority = static_cast<int>(first.spec.priority);
    TimePoint started = group.front().raw.creation_timestamp;
    std::optional<TimePoint> checkpoint;
    for (const auto& pod : group) {
      const api::Pod& p = pod.value;
      started = std::min(started, pod.raw.creation_timestamp);
      std::optional<TimePoint> pod_checkpoint = PodLastCheckpoint(p);
      if (pod_checkpoint && (!checkpoint || *pod_checkpoint > *checkpoint)) {
        checkpoint = pod_checkpoint;
      }
      auto node = node_index.find(p.spec.node_name);
      if (node == node_index.end()) continue;  // its node is gone, and with it the capacity
      Result<sched::PodSet> pod_set =
          ConvertPodSet(p.metadata.name, 1, p.spec.resources, p.spec.gpu_selector,
                        p.spec.tolerations, "spec.resources");
      if (!pod_set) continue;  // what it holds is described by its assignment alone
      sched::PodPlacement placement;
      placement.pod_set = static_cast<int>(running.workload.pod_sets.size());
      placement.node = node->second;
      for (const api::AssignedGpu& gpu : p.spec.assigned_gpus) {
        placement.gpus.push_back(static_cast<int>(gpu.index));
      }
      running.workload.pod_sets.push_back(std::move(*pod_set));
      running.pods.push_back(std::move(placement));
      auto flavor = p.metadata.annotations.find(kFlavorAnnotation);
      if (flavor != p.metadata.annotations.end() && flavor_index.count(flavor->second) > 0) {
        running.flavor = flavor_index[flavor->second];
      }
    }
    WorkloadObjects objects;
    auto job = job_by_name.find(name);
    if (job != job_by_name.end()) {
      JobStatus status = ReadJobStatus(job->second.raw.body);
      started = Timestamp(status.start_time, started);
      if (std::optional<TimePoint> t = ParseRfc3339(status.last_checkpoint_time)) checkpoint = t;
      running.times_preempted = static_cast<int>(status.preemption_count);
      auto reclaimable = job->second.value.metadata.annotations.find(kReclaimableAnnotation);
      running.reclaimable = reclaimable != job->second.value.metadata.annotations.end() &&
                            reclaimable->second == "true";
      objects.job = job->second;
    }
    running.workload.submitted = started;
    running.started = started;
    running.last_checkpoint = checkpoint && *checkpoint > started ? *checkpoint : started;
    objects.pods = std::move(group);
    view.workloads[name] = std::move(objects);
    view.snapshot.running.push_back(std::move(running));
  }

  // Pending jobs: not finished, and no pods (a restarting job's old pods are gone first).
  for (auto& [name, job] : job_by_name) {
    const api::Job& j = job.value;
    if (ReadJobStatus(job.raw.body).Terminal() || jobs_with_pods.count(name) > 0) continue;
    sched::Workload workload;
    workload.name = name;
    workload.queue = ResolveQueue(quota, j.metadata.namespace_name, j.spec.queue);
    workload.priority = static_cast<int>(j.spec.priority);
    workload.submitted = job.raw.creation_timestamp;
    workload.topology = ConvertTopology(j.spec.topology);
    if (j.spec.runtime_limit > Duration::zero()) workload.runtime_limit = j.spec.runtime_limit;
    workload.nominated = nominated.count(name) > 0;
    view.workloads[name] = WorkloadObjects{job, {}};
    if (const std::string* error = queue_error(workload.queue)) {
      hold(name, sched::PendingTier::kInvalid, *error);
      continue;
    }
    if (j.spec.replicas > std::numeric_limits<int>::max()) {
      hold(name, sched::PendingTier::kInvalid, "spec.replicas: too many replicas");
      continue;
    }
    Result<sched::PodSet> pod_set =
        ConvertPodSet("worker", static_cast<int>(j.spec.replicas), j.spec.resources,
                      j.spec.gpu_selector, j.spec.tolerations, "spec.resources");
    if (!pod_set) {
      hold(name, sched::PendingTier::kInvalid, pod_set.error().message());
      continue;
    }
    workload.pod_sets.push_back(std::move(*pod_set));
    view.pending.push_back(std::move(workload));
  }

  // Pending pods, grouped into their gangs.
  for (auto& [name, group] : waiting) {
    const api::Pod& first = group.front().value;
    sched::Workload workload;
    workload.name = name;
    workload.queue = ResolveQueue(quota, first.metadata.namespace_name, first.spec.queue);
    workload.priority = static_cast<int>(first.spec.priority);
    workload.submitted = group.front().raw.creation_timestamp;
    workload.nominated = nominated.count(name) > 0;
    std::string error;
    for (const auto& pod : group) {
      const api::Pod& p = pod.value;
      workload.submitted = std::min(workload.submitted, pod.raw.creation_timestamp);
      Result<sched::PodSet> pod_set =
          ConvertPodSet(p.metadata.name, 1, p.spec.resources, p.spec.gpu_selector,
                        p.spec.tolerations, "Pod " + p.metadata.name + ": spec.resources");
      if (!pod_set) {
        error = pod_set.error().message();
        break;
      }
      workload.pod_sets.push_back(std::move(*pod_set));
    }
    const int64_t min_member = first.spec.gang.min_member;
    const size_t count = group.size();
    view.workloads[name] = WorkloadObjects{std::nullopt, std::move(group)};
    if (const std::string* queue_problem = queue_error(workload.queue)) error = *queue_problem;
    if (!error.empty()) {
      hold(name, sched::PendingTier::kInvalid, error);
    } else if (static_cast<int64_t>(count) < min_member) {
      hold(name, sched::PendingTier::kGangIncomplete,
           fmt::format("{} of minMember {} pods exist", count, min_member));
    } else {
      view.pending.push_back(std::move(workload));
    }
  }
  view.snapshot.cluster = std::move(cluster);
  return view;
}

}  // namespace strata::controller
