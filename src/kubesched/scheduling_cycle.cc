#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <utility>

#include "common/json_member.h"
#include "kubesched/kube_scheduler.h"
#include "kubesched/node_spec.h"
#include "kubesched/parallel.h"
#include "scheduler/quota_ledger.h"

// KubeScheduler's cycle: the snapshot of what it follows, the scheduler's decisions, and what
// each decision turns into (binds, evictions, explanations, statuses; decision_writes.cc).

namespace strata::kubesched {
namespace {

using nlohmann::json;

// The gang a pod belongs to, by namespace: gang keys are per namespace.
std::string GangOf(const PodSpec& pod) { return pod.namespace_name + "/" + pod.gang.key; }

// A bound pod's GPUs when strata did not choose them (another scheduler bound it, or strata
// restarted): whole GPUs take the lowest free ones, a share the first GPU it fits on.
std::vector<int> AssignGpus(const scheduler::GpuRequest& request, std::vector<int64_t>& used) {
  std::vector<int> gpus;
  if (request.IsWhole()) {
    for (size_t g = 0; g < used.size() && static_cast<int>(gpus.size()) < request.count; ++g)
      if (used[g] == 0) gpus.push_back(static_cast<int>(g));
    for (int g : gpus) used[static_cast<size_t>(g)] = 1000;
  } else if (request.IsShare()) {
    for (size_t g = 0; g < used.size(); ++g) {
      if (used[g] + request.milli <= 1000) {
        gpus.push_back(static_cast<int>(g));
        used[g] += request.milli;
        break;
      }
    }
  }
  return gpus;
}

}  // namespace

KubeScheduler::Admission KubeScheduler::AdmissionOf(const PodSpec& pod,
                                                    const KueueQuotas& quotas) const {
  Admission out{"", pod.priority, ""};
  if (!options_.kueue_quotas) return out;
  if (!pod.workload_priority_class.empty()) {
    auto it = quotas.priority_classes.find(pod.workload_priority_class);
    if (it == quotas.priority_classes.end()) {
      out.why = fmt::format("WorkloadPriorityClass {} does not exist", pod.workload_priority_class);
    } else {
      out.priority = it->second;
    }
  }
  // A Job's pods go through the queue (and the priority class) the Job names.
  std::string queue_name = pod.queue_name;
  if (queue_name.empty() && !pod.owner_job.empty()) {
    auto job = jobs_.find(pod.namespace_name + "/" + pod.owner_job);
    if (job == jobs_.end()) {
      // The watch of pods may be ahead of the Jobs': until its Job is seen, nobody knows which
      // queue's quota the pod takes, and placed as if it named none it could exceed it.
      out.why = fmt::format("waiting for its Job {}/{} (the Job names its queue)",
                            pod.namespace_name, pod.owner_job);
      out.job_unseen = true;
      return out;
    }
    queue_name = job->second.queue_name;
    if (pod.workload_priority_class.empty() && !job->second.priority_class.empty()) {
      auto it = quotas.priority_classes.find(job->second.priority_class);
      if (it == quotas.priority_classes.end()) {
        out.why =
            fmt::format("WorkloadPriorityClass {} does not exist", job->second.priority_class);
      } else {
        out.priority = it->second;
      }
    }
  }
  if (queue_name.empty()) return out;
  std::string why;
  std::optional<std::string> cluster_queue = quotas.ClusterQueueFor(pod.namespace_name, queue_name);
  if (!cluster_queue) {
    why = fmt::format("LocalQueue {}/{} does not exist", pod.namespace_name, queue_name);
  } else if (auto bad = quotas.invalid.find(*cluster_queue); bad != quotas.invalid.end()) {
    why = fmt::format("ClusterQueue {}: {}", *cluster_queue, bad->second);
  } else if (quotas.Find(*cluster_queue) == nullptr) {
    why = fmt::format("ClusterQueue {} (of LocalQueue {}/{}) does not exist", *cluster_queue,
                      pod.namespace_name, queue_name);
  } else {
    out.queue = *cluster_queue;
  }
  if (out.why.empty()) out.why = std::move(why);
  return out;
}

KubeScheduler::Gang KubeScheduler::GangOfPod(const PodSpec& pod) const {
  Gang gang;
  if (pod.gang.key.empty()) return gang;
  gang.key = GangOf(pod);
  gang.size = pod.gang.size;
  if (pod.gang.source == GroupSource::kLabels) return gang;
  std::string object_key = pod.namespace_name + "/" + pod.gang.group_name;
  if (pod.gang.source == GroupSource::kJob || pod.gang.source == GroupSource::kJobSet) {
    auto job = jobs_.find(object_key);
    if (job == jobs_.end()) {
      // A JobSet's pod waits for its Job (the watch of pods may be ahead of the Jobs'); another
      // Job's pod is placed alone.
      if (pod.gang.source == GroupSource::kJob) return {};
      gang.why = fmt::format("waiting for Job {} of its JobSet", object_key);
      return gang;
    }
    if (pod.gang.source == GroupSource::kJob) {
      // Only a Job Kueue's integration would admit as one workload is a gang.
      if (job->second.queue_name.empty() || job->second.pods <= 1) return {};
      gang.size = job->second.pods;
      return gang;
    }
    gang.size = pod.gang.size * std::max<int64_t>(job->second.pods, 1);
    return gang;
  }
  if (pod.gang.source == GroupSource::kVolcanoPodGroup) {
    auto it = volcano_pod_groups_.find(object_key);
    if (it == volcano_pod_groups_.end()) {
      // Without Volcano's CRD, the members that exist are the gang (size 0).
      if (volcano_served_) {
        gang.why = fmt::format("PodGroup {} (scheduling.volcano.sh) does not exist", object_key);
      }
      return gang;
    }
    Result<GroupPolicy> policy = PolicyOfVolcanoPodGroup(it->second);
    if (!policy) {
      gang.why = policy.error().message();
      return gang;
    }
    gang.size = policy->min_count;
    return gang;
  }
  auto it = pod_groups_.find(object_key);
  if (it == pod_groups_.end()) {
    // kube-scheduler's words for the same wait.
    gang.why = fmt::format("waiting for pods's pod group \"{}\" to appear", pod.gang.group_name);
    return gang;
  }
  Result<GroupPolicy> policy = PolicyOfPodGroup(it->second);
  if (!policy) {
    gang.why = policy.error().message();
    return gang;
  }
  if (!policy->gang) return {};  // the basic policy: each pod alone
  gang.size = policy->min_count;
  gang.required_topology = policy->required_topology;
  return gang;
}

void KubeScheduler::Cycle() {
  using Steady = std::chrono::steady_clock;
  const Steady::time_point began = Steady::now();
  dirty_ = false;
  ++cycles_;
  TimePoint now = clock_.Now();
  auto cluster = std::make_shared<scheduler::Cluster>();
  cluster->topology_levels = options_.topology_levels;
  if (!quotas_) quotas_ = QuotasFromKueue(kueue_);
  const KueueQuotas& quotas = *quotas_;
  cluster->flavors = quotas.flavors;
  cluster->queues = quotas.queues;
  std::map<std::string, QueueFigures> queue_figures;  // by ClusterQueue
  std::set<std::string> admitted_gangs, pending_gangs;
  if (!dra_) dra_.emplace(dra_objects_, options_.dra_gpu_driver);
  const DraCluster& dra = *dra_;
  std::map<std::string, int> node_index;
  std::vector<std::string> node_names;
  for (const auto& [name, node] : nodes_) {
    node_index[name] = static_cast<int>(cluster->nodes.size());
    node_names.push_back(name);
    cluster->nodes.push_back(node);
    // A node whose GPUs a DRA driver publishes (and no device plugin advertises).
    if (const std::vector<DraDevice>* devices = dra.GpusOf(name);
        devices && cluster->nodes.back().gpus.empty()) {
      for (const DraDevice& device : *devices)
        cluster->nodes.back().gpus.push_back(dra.AsGpu(device));
    }
  }
  std::vector<std::vector<int64_t>> used(cluster->nodes.size());
  for (size_t n = 0; n < used.size(); ++n) used[n].assign(cluster->nodes[n].gpus.size(), 0);

  scheduler::Snapshot snapshot{cluster, {}, now};
  // Pending pods of strata's by workload, and members of gangs already bound.
  std::map<std::string, std::vector<std::string>> gang_pending, gang_bound;
  std::map<std::string, int64_t> gang_size;
  std::map<std::string, std::string> gang_topology;  // a required topology its PodGroup sets
  std::map<std::string, std::string> gang_object;    // gang -> its Kubernetes PodGroup's key
  std::vector<std::string> singles;
  std::map<std::string, Gang> gangs;  // by GangOf(pod): each group object read once a cycle
  auto gang_of = [&](const PodSpec& pod) -> const Gang& {
    static const Gang kAlone;
    if (pod.gang.key.empty()) return kAlone;
    auto [it, inserted] = gangs.try_emplace(GangOf(pod));
    if (inserted) {
      it->second = GangOfPod(pod);
      if (pod.gang.source == GroupSource::kPodGroup && !it->second.key.empty())
        gang_object[it->second.key] = pod.namespace_name + "/" + pod.gang.group_name;
    }
    return it->second;
  };

  // Pods whose GPUs strata chose first, so that the others fill around them.
  std::vector<const std::pair<const std::string, PodSpec>*> holders;
  for (const auto& entry : pods_)
    if (entry.second.HoldsCapacity() && node_index.count(entry.second.node_name))
      holders.push_back(&entry);
  std::stable_partition(holders.begin(), holders.end(),
                        [&](const auto* entry) { return gpus_.count(entry->first) > 0; });
  std::set<std::string> counted_devices;  // DRA devices already held by a pod (shared claims)
  // Why no queue's use is known this cycle: a bound pod whose Job is not seen yet is charged to
  // a queue nobody knows, so nothing is admitted through a queue until its Job is seen. Only a
  // new pod's Job can lag behind it in the watches; an older pod whose Job is not there belongs
  // to a Job deleted before its pods, and holds no queue's quota.
  constexpr Duration kJobWatchLag = std::chrono::seconds(30);
  std::string quota_unknown;
  for (const auto* entry : holders) {
    const auto& [key, pod] = *entry;
    int n = node_index[pod.node_name];
    scheduler::RunningWorkload running;
    running.workload.name = kPodWorkloadPrefix + key;
    // A bound pod is charged to its queue, and keeps its priority, however it was bound.
    const Admission admission = AdmissionOf(pod, quotas);
    if (admission.job_unseen && quota_unknown.empty() && now - pod.created < kJobWatchLag) {
      quota_unknown = fmt::format(
          "the queues' use is not known yet: bound pod {} belongs to Job {}/{}, not seen yet", key,
          pod.namespace_name, pod.owner_job);
    }
    running.workload.priority = admission.priority;
    running.workload.submitted = pod.created;
    running.workload.pod_sets = {pod.pod_set};
    // The DRA GPUs its claims hold on its node.
    std::vector<int> dra_gpus;
    if (!pod.claims.empty()) {
      for (const PodClaims::Claim& claim :
           dra.Resolve(pod.namespace_name, pod.uid, pod.claims).claims) {
        for (const std::string& id : claim.allocated) {
          int g = dra.IndexOf(pod.node_name, id);
          if (g >= 0 && counted_devices.insert(id).second) dra_gpus.push_back(g);
        }
      }
      running.workload.pod_sets[0].gpu.count += static_cast<int>(dra_gpus.size());
    }
    running.workload.queue = admission.queue;
    if (!running.workload.queue.empty()) {
      running.flavor = quotas.FlavorOf(running.workload.queue, cluster->nodes[n]);
      QueueFigures& figures = queue_figures[running.workload.queue];
      if (running.flavor >= 0) {
        scheduler::ResourceVector charge = scheduler::QuotaLedger::ChargeFor(
            running.workload, &cluster->flavors[static_cast<size_t>(running.flavor)]);
        scheduler::ResourceVector& used = figures.used_by_flavor[running.flavor];
        for (int r = 0; r < scheduler::kNumResources; ++r) used.amount[r] += charge.amount[r];
      }
      if (pod.gang.key.empty() || admitted_gangs.insert(GangOf(pod)).second) {
        ++figures.admitted_workloads;
      }
    }
    running.started = pod.started;
    running.last_checkpoint = pod.started;
    std::vector<int> gpus;
    if (auto chosen = gpus_.find(key); chosen != gpus_.end()) {
      gpus = chosen->second;
      for (int g : gpus) {
        if (g < 0 || static_cast<size_t>(g) >= used[n].size()) continue;
        used[n][g] += pod.pod_set.gpu.IsWhole() ? 1000 : pod.pod_set.gpu.milli;
      }
    } else {
      gpus = AssignGpus(pod.pod_set.gpu, used[n]);
    }
    for (int g : dra_gpus) {
      if (static_cast<size_t>(g) >= used[n].size()) continue;
      used[n][static_cast<size_t>(g)] = 1000;
      gpus.push_back(g);
    }
    running.pods.push_back({0, 0, n, std::move(gpus)});
    snapshot.running.push_back(std::move(running));
    if (pod.scheduler_name == options_.scheduler_name) {
      if (const Gang& gang = gang_of(pod); !gang.key.empty() && gang.why.empty()) {
        gang_bound[gang.key].push_back(key);
        gang_size[gang.key] = gang.size;
      }
    }
  }

  std::vector<scheduler::Workload> pending;
  std::map<std::string, std::vector<std::string>>
      members;  // workload -> pod keys, in pod-set order

  // Jobs that name a LocalQueue: a suspended one waits for admission as a workload of its
  // template's pods; one strata admitted holds the quota of its pods not yet bound.
  std::map<std::string, int64_t> job_bound;  // its pods that hold capacity, by Job
  for (const auto* entry : holders) {
    const PodSpec& pod = entry->second;
    if (!pod.owner_job.empty()) ++job_bound[pod.namespace_name + "/" + pod.owner_job];
  }
  std::map<std::string, std::string> job_workloads;  // workload -> Job
  for (const auto& [job_key, job] : jobs_) {
    if (job.queue_name.empty() || job.finished || !job.pod || job.pods <= 0) continue;
    if (job.pod->scheduler_name != options_.scheduler_name) continue;
    PodSpec as_pod = *job.pod;
    as_pod.queue_name = job.queue_name;
    as_pod.workload_priority_class = job.priority_class;
    Admission admission = AdmissionOf(as_pod, quotas);
    if (!admission.why.empty() || admission.queue.empty()) continue;
    if (job.suspended) {
      if (!quota_unknown.empty()) continue;
      scheduler::Workload workload;
      workload.name = kJobWorkloadPrefix + job_key;
      workload.queue = admission.queue;
      workload.priority = admission.priority;
      workload.submitted = job.created;
      workload.topology = as_pod.topology;
      scheduler::PodSet set = as_pod.pod_set;
      set.name = job.name;
      set.count = static_cast<int>(job.pods);
      workload.pod_sets.push_back(std::move(set));
      workload.nominated = nominated_.count(workload.name) > 0;
      job_workloads[workload.name] = job_key;
      members[workload.name] = {};
      ++queue_figures[admission.queue].pending_workloads;
      pending.push_back(std::move(workload));
      continue;
    }
    int64_t unbound = job.pods - job_bound[job_key];
    if (job.admitted_flavor.empty() || unbound <= 0) continue;
    scheduler::RunningWorkload reserved;
    reserved.workload.name = kReservationPrefix + job_key;
    reserved.workload.queue = admission.queue;
    reserved.workload.priority = admission.priority;
    reserved.workload.submitted = job.created;
    scheduler::PodSet set = as_pod.pod_set;
    set.count = static_cast<int>(unbound);
    reserved.workload.pod_sets.push_back(std::move(set));
    for (size_t f = 0; f < cluster->flavors.size(); ++f)
      if (cluster->flavors[f].name == job.admitted_flavor) reserved.flavor = static_cast<int>(f);
    if (reserved.flavor < 0) continue;
    reserved.started = now;
    reserved.last_checkpoint = now;
    scheduler::ResourceVector charge = scheduler::QuotaLedger::ChargeFor(
        reserved.workload, &cluster->flavors[static_cast<size_t>(reserved.flavor)]);
    scheduler::ResourceVector& used_quota =
        queue_figures[admission.queue].used_by_flavor[reserved.flavor];
    for (int r = 0; r < scheduler::kNumResources; ++r) used_quota.amount[r] += charge.amount[r];
    snapshot.running.push_back(std::move(reserved));
  }
  std::vector<std::pair<std::vector<std::string>, std::string>> held;  // pods, why
  std::map<std::string, Admission> admissions;  // of the pending pods offered to the cycle
  // Pending pods with DRA claims: their pod set with the claims' GPUs and feasible nodes, and
  // the claims to allocate when placed.
  std::map<std::string, scheduler::PodSet> dra_sets;
  std::map<std::string, PodClaims> dra_claims;
  for (const auto& [key, pod] : pods_) {
    if (pod.scheduler_name != options_.scheduler_name || !pod.Pending()) continue;
    if (auto bad = invalid_.find(key); bad != invalid_.end()) {
      held.push_back({{key}, bad->second});
      continue;
    }
    const Gang& gang = gang_of(pod);
    if (!gang.why.empty()) {
      held.push_back({{key}, gang.why});
      continue;
    }
    if (!pod.claims.empty()) {
      PodClaims claims = dra.Resolve(pod.namespace_name, pod.uid, pod.claims);
      if (!claims.why.empty()) {
        held.push_back({{key}, std::move(claims.why)});
        continue;
      }
      // The nodes its claims can be allocated on now (where allocated ones bind it, else any
      // node with DRA GPUs), as node affinity for the cycle.
      std::vector<std::string> feasible;
      for (const auto& [name, node] : nodes_) {
        if (!claims.node.empty() && name != claims.node) continue;
        std::set<std::string> scratch;
        if (claims.to_allocate == 0 ? !claims.node.empty()
                                    : dra.Allocate(claims, name, {}, &scratch).has_value())
          feasible.push_back(name);
      }
      if (feasible.empty()) {
        // kube-scheduler's words (its DynamicResources filter).
        held.push_back({{key},
                        fmt::format("0/{} nodes are available: {} cannot allocate all "
                                    "claims.",
                                    nodes_.size(), nodes_.size())});
        continue;
      }
      scheduler::PodSet set = pod.pod_set;
      set.gpu.count += claims.to_allocate;
      scheduler::LabelRequirement on{kNodeNameField, scheduler::SelectorOperator::kIn, feasible};
      if (set.affinity.empty()) set.affinity.push_back({});
      for (scheduler::NodeAffinityTerm& term : set.affinity) term.requirements.push_back(on);
      dra_sets.emplace(key, std::move(set));
      dra_claims.emplace(key, std::move(claims));
    }
    Admission admission = AdmissionOf(pod, quotas);
    if (!admission.why.empty()) {
      held.push_back({{key}, std::move(admission.why)});
      continue;
    }
    // The pods of a Job strata admitted have their quota held for them already.
    if (auto job = jobs_.find(pod.namespace_name + "/" + pod.owner_job);
        !pod.owner_job.empty() && job != jobs_.end() && !job->second.admitted_flavor.empty()) {
      admission.queue.clear();
    }
    if (!admission.queue.empty() && !quota_unknown.empty()) {
      held.push_back({{key}, quota_unknown});
      continue;
    }
    if (!admission.queue.empty() && (gang.key.empty() || pending_gangs.insert(gang.key).second)) {
      ++queue_figures[admission.queue].pending_workloads;
    }
    admissions.emplace(key, std::move(admission));
    if (gang.key.empty()) {
      singles.push_back(key);
    } else {
      gang_pending[gang.key].push_back(key);
      gang_size[gang.key] = std::max(gang_size[gang.key], gang.size);
      if (!gang.required_topology.empty()) gang_topology[gang.key] = gang.required_topology;
    }
  }
  auto workload_for = [&](const std::string& name, const std::vector<std::string>& keys) {
    scheduler::Workload workload;
    workload.name = name;
    const PodSpec& first = pods_.at(keys.front());
    workload.queue = admissions.at(keys.front()).queue;
    workload.priority = admissions.at(keys.front()).priority;
    workload.submitted = first.created;
    workload.topology = first.topology;
    if (auto required = gang_topology.find(name.substr(std::string(kGangWorkloadPrefix).size()));
        name.rfind(kGangWorkloadPrefix, 0) == 0 && required != gang_topology.end()) {
      workload.topology = {scheduler::TopologyMode::kRequired, required->second};
    }
    for (const std::string& key : keys) {
      const PodSpec& pod = pods_.at(key);
      workload.priority = std::max(workload.priority, admissions.at(key).priority);
      workload.submitted = std::min(workload.submitted, pod.created);
      auto dra_set = dra_sets.find(key);
      scheduler::PodSet set = dra_set == dra_sets.end() ? pod.pod_set : dra_set->second;
      set.name = pod.name;
      workload.pod_sets.push_back(std::move(set));
    }
    workload.nominated = nominated_.count(name) > 0;
    members[name] = keys;
    pending.push_back(std::move(workload));
  };
  for (const std::string& key : singles) workload_for(kPodWorkloadPrefix + key, {key});
  // How each Kubernetes PodGroup with pods waiting fared: placed, or why not.
  std::map<std::string, std::pair<bool, std::string>> group_outcomes;
  std::optional<TimePoint> quiet_until;  // the first incomplete group to be told why it waits
  std::map<std::string, TimePoint> incomplete_since;
  for (auto& [gang, keys] : gang_pending) {
    size_t bound = gang_bound.count(gang) ? gang_bound[gang].size() : 0;
    int64_t size =
        gang_size[gang] > 0 ? gang_size[gang] : static_cast<int64_t>(keys.size() + bound);
    size_t missing = size > static_cast<int64_t>(bound) ? static_cast<size_t>(size) - bound : 0;
    if (keys.size() < missing) {
      auto since = incomplete_since_.find(gang);
      TimePoint first = since == incomplete_since_.end() ? now : since->second;
      incomplete_since[gang] = first;
      if (now - first < options_.incomplete_group_quiet) {
        TimePoint tell = first + options_.incomplete_group_quiet;
        quiet_until = quiet_until ? std::min(*quiet_until, tell) : tell;
        continue;
      }
      held.push_back({keys, fmt::format("pod group {}: {} of its {} pods exist; it is placed "
                                        "when all of them do",
                                        gang, keys.size() + bound, size)});
      if (auto object = gang_object.find(gang); object != gang_object.end())
        group_outcomes[object->second] = {false, held.back().second};
      continue;
    }
    if (missing == 0) {
      // The gang is whole: pods beyond its size are placed one by one.
      for (const std::string& key : keys) workload_for(kPodWorkloadPrefix + key, {key});
      continue;
    }
    // The rest, beyond the size, follow once the gang is placed.
    keys.resize(missing);
    workload_for(kGangWorkloadPrefix + gang, keys);
  }

  const Steady::time_point read = Steady::now();
  scheduler::Decisions decisions = scheduler_.Cycle(snapshot, pending);
  const Steady::time_point decided = Steady::now();

  std::vector<BindTask> binds;
  std::set<std::string> placed;
  std::map<std::string, std::pair<std::string, std::string>> admitted_jobs;  // flavor, queue
  for (const scheduler::Binding& binding : decisions.bindings) {
    placed.insert(binding.workload);
    nominated_.erase(binding.workload);
    if (auto job = job_workloads.find(binding.workload); job != job_workloads.end()) {
      // Admitted: its pods are made (and placed) once it is unsuspended.
      std::string flavor =
          binding.flavor >= 0 ? cluster->flavors[static_cast<size_t>(binding.flavor)].name : "";
      std::string queue;
      for (const scheduler::Workload& w : pending)
        if (w.name == binding.workload) queue = w.queue;
      admitted_jobs[job->second] = {flavor, queue};
      continue;
    }
    const std::vector<std::string>& keys = members[binding.workload];
    for (const scheduler::PodPlacement& placement : binding.pods) {
      binds.push_back({keys.at(static_cast<size_t>(placement.pod_set)),
                       node_names.at(static_cast<size_t>(placement.node)),
                       placement.gpus,
                       binding.workload,
                       Status::Ok(),
                       false,
                       {}});
    }
  }
  // DRA: each placed pod's claims get devices on its node; a workload any of whose pods cannot
  // get them is not bound this cycle (the next one sees what was taken).
  std::set<std::string> used_devices, dra_failed;
  for (BindTask& task : binds) {
    auto claims = dra_claims.find(task.pod_key);
    if (claims == dra_claims.end() || dra_failed.count(task.workload)) continue;
    Result<std::vector<int>> taken =
        dra.Allocate(claims->second, task.node, task.gpus, &used_devices);
    if (!taken) {
      dra_failed.insert(task.workload);
      held.push_back({members[task.workload], taken.error().message()});
      continue;
    }
    const PodSpec& pod = pods_.at(task.pod_key);
    task.dra = true;
    task.gpus = *taken;
    task.claim_writes = dra.Writes(claims->second, task.node, *taken, pod.name, pod.uid);
  }
  if (!dra_failed.empty()) {
    std::erase_if(binds, [&](const BindTask& task) { return dra_failed.count(task.workload) > 0; });
    for (const std::string& workload : dra_failed) placed.erase(workload);
  }
  BindAll(binds);
  AdmitJobs(admitted_jobs);
  const Steady::time_point bound = Steady::now();
  for (const auto& [gang, object] : gang_object) {
    if (!gang_pending.count(gang)) continue;
    std::string name = kGangWorkloadPrefix + gang;
    bool bound = placed.count(name) > 0 &&
                 std::all_of(binds.begin(), binds.end(), [&](const BindTask& task) {
                   return task.workload != name || task.result.ok();
                 });
    if (bound) group_outcomes[object] = {true, ""};
  }

  // A gang some of whose members are bound and whose rest did not fit now: release it whole.
  for (auto& [gang, bound_keys] : gang_bound) {
    std::string name = kGangWorkloadPrefix + gang;
    if (!gang_pending.count(gang) || placed.count(name)) continue;
    // Whole already (a size of 0: the members that exist, so not whole while some wait).
    if (gang_size[gang] > 0 && static_cast<int64_t>(bound_keys.size()) >= gang_size[gang]) continue;
    spdlog::info("strata scheduler: releasing pod group {}: {} members bound, the rest do not fit",
                 gang, bound_keys.size());
    ++gangs_released_;
    Release(bound_keys);
  }

  for (const scheduler::Preemption& preemption : decisions.preemptions) {
    if (preemption.victim.rfind(kPodWorkloadPrefix, 0) != 0) continue;
    std::string key = preemption.victim.substr(std::string(kPodWorkloadPrefix).size());
    auto victim = pods_.find(key);
    if (victim == pods_.end() || victim->second.deleting) continue;
    nominated_.insert(preemption.preemptor);
    spdlog::info("strata scheduler: preempting pod {} for {} ({})", key, preemption.preemptor,
                 preemption.reason);
    // Through the Eviction API: the victim gets its grace period, and a PodDisruptionBudget
    // that allows no more disruptions refuses it (429), as it would a drain.
    json eviction = {
        {"apiVersion", "policy/v1"},
        {"kind", "Eviction"},
        {"metadata", {{"name", victim->second.name}, {"namespace", victim->second.namespace_name}}},
        {"deleteOptions", {{"preconditions", {{"uid", victim->second.uid}}}}}};
    Result<json> evicted =
        client_->CreateSubresource(kube::resources::kPods, victim->second.namespace_name,
                                   victim->second.name, "eviction", eviction);
    if (evicted) {
      ++preempted_;
    } else if (evicted.error().code() == StatusCode::kResourceExhausted) {
      spdlog::info("strata scheduler: a PodDisruptionBudget keeps {}: {}", key,
                   evicted.error().message());
      ++preemptions_refused_;
    } else if (evicted.error().code() != StatusCode::kNotFound) {
      spdlog::warn("strata scheduler: preempting {}: {}", key, evicted.error().ToString());
    }
  }

  // Explanations, on the pods of every workload still waiting.
  for (const scheduler::Pending& waiting : decisions.pending) {
    std::string message = waiting.message;
    if (message.empty()) message = waiting.detail;
    if (message.empty()) message = std::string(scheduler::PendingTierName(waiting.tier));
    held.push_back({members[waiting.workload], message});
    if (waiting.workload.rfind(kGangWorkloadPrefix, 0) == 0) {
      auto object =
          gang_object.find(waiting.workload.substr(std::string(kGangWorkloadPrefix).size()));
      if (object != gang_object.end()) group_outcomes[object->second] = {false, message};
    }
  }
  std::vector<std::pair<std::string, const std::string*>> explain;
  for (const auto& [keys, message] : held)
    for (const std::string& key : keys) explain.push_back({key, &message});
  Duration refresh = Duration::zero();
  if (explain.size() > options_.paced_explanations) {
    refresh = std::max<Duration>(
        options_.explanation_refresh_interval,
        std::chrono::duration_cast<Duration>(std::chrono::duration<double>(
            static_cast<double>(explain.size()) / options_.explanation_rewrites_per_second)));
  }
  RunParallel(explain.size(), options_.api_workers, [&](size_t i) {
    const PodSpec& pod = pods_.at(explain[i].first);
    Status status = reporter_.Unschedulable(pod, *explain[i].second, refresh);
    if (!status.ok()) {
      spdlog::warn("strata scheduler: explaining {}: {}", explain[i].first, status.ToString());
    }
  });
  incomplete_since_ = std::move(incomplete_since);
  waiting_ = !held.empty() || quiet_until.has_value();
  next_idle_cycle_ = now + options_.idle_cycle_interval;
  if (quiet_until) next_idle_cycle_ = std::min(next_idle_cycle_, *quiet_until);
  WriteQueueStatuses(quotas, std::move(queue_figures));
  WritePodGroupStatuses(group_outcomes, refresh);
  auto ms = [](Steady::duration d) { return std::chrono::duration<double, std::milli>(d).count(); };
  spdlog::debug(
      "strata scheduler: cycle {}: {} pods, {} pending workloads, {} binds, {} waiting pods; "
      "read {:.1f} ms, decide {:.1f} ms, bind {:.1f} ms, explain and statuses {:.1f} ms",
      cycles_.load(), pods_.size(), pending.size(), binds.size(), explain.size(), ms(read - began),
      ms(decided - read), ms(bound - decided), ms(Steady::now() - bound));
  // Nominations of workloads that are gone.
  for (auto it = nominated_.begin(); it != nominated_.end();)
    it = members.count(*it) ? std::next(it) : nominated_.erase(it);
}

}  // namespace strata::kubesched
