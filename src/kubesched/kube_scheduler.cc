#include "kubesched/kube_scheduler.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <optional>
#include <tuple>
#include <utility>

#include "common/json_member.h"
#include "kubesched/node_spec.h"
#include "kubesched/parallel.h"
#include "scheduler/quota_ledger.h"

namespace strata::kubesched {
namespace {

using nlohmann::json;

constexpr const char* kPodWorkloadPrefix = "Pod/";
constexpr const char* kGangWorkloadPrefix = "PodGroup/";

// "namespace/name" of an object ("/name" for a cluster-scoped one).
std::string KeyOf(const json& object) {
  const json& metadata = MemberOrNull(object, "metadata");
  return StringMemberOr(metadata, "namespace") + "/" + StringMemberOr(metadata, "name");
}

std::string NameOf(const json& object) {
  return StringMemberOr(MemberOrNull(object, "metadata"), "name");
}

// The gang a pod belongs to, by namespace: gang keys are per namespace.
std::string GangOf(const PodSpec& pod) { return pod.namespace_name + "/" + pod.gang.key; }

// What of a pod the scheduler reads; a change to anything else (status reports, our own
// condition writes) is no reason for a cycle.
auto SchedulingFields(const PodSpec& pod) {
  const scheduler::PodSet& set = pod.pod_set;
  return std::tie(pod.uid, pod.node_name, pod.phase, pod.deleting, pod.gated, pod.priority,
                  pod.scheduler_name, pod.gang.key, pod.gang.size, pod.queue_name,
                  pod.workload_priority_class, set.cpu_milli, set.memory_bytes, set.gpu.count,
                  set.gpu.milli, set.gpu.memory_mib);
}

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

KubeScheduler::KubeScheduler(kube::Client* client, const Clock& clock, KubeSchedulerOptions options)
    : client_(client),
      clock_(clock),
      options_(std::move(options)),
      scheduler_(options_.scheduler),
      reporter_(client, clock, options_.scheduler_name, options_.event_repeat_interval) {
  node_reflector_ = std::make_unique<kube::Reflector>(client, kube::resources::kNodes);
  kube::ReflectorOptions pods;
  // As kube-scheduler's informer: terminal pods hold nothing.
  pods.field_selector = "status.phase!=Succeeded,status.phase!=Failed";
  pod_reflector_ = std::make_unique<kube::Reflector>(client, kube::resources::kPods, pods);
  if (options_.kueue_quotas) {
    for (auto [source, resource] :
         {std::pair{Source::kClusterQueues, &kueue_resources::kClusterQueues},
          std::pair{Source::kLocalQueues, &kueue_resources::kLocalQueues},
          std::pair{Source::kResourceFlavors, &kueue_resources::kResourceFlavors},
          std::pair{Source::kWorkloadPriorityClasses,
                    &kueue_resources::kWorkloadPriorityClasses}}) {
      kueue_reflectors_.emplace_back(source, std::make_unique<kube::Reflector>(client, *resource));
    }
  }
}

KubeScheduler::~KubeScheduler() { Stop(); }

void KubeScheduler::Stop() {
  {
    std::lock_guard lock(mutex_);
    stopped_ = true;
  }
  wake_.notify_all();
  node_reflector_->Stop();
  pod_reflector_->Stop();
  for (auto& [source, reflector] : kueue_reflectors_) reflector->Stop();
}

KubeScheduler::Stats KubeScheduler::stats() const {
  return {cycles_.load(),         bound_.load(),     bind_failures_.load(),
          gangs_released_.load(), preempted_.load(), preemptions_refused_.load()};
}

std::string_view KubeScheduler::SourceName(Source source) {
  switch (source) {
    case Source::kNodes:
      return "nodes";
    case Source::kPods:
      return "pods";
    case Source::kClusterQueues:
      return "clusterqueues.kueue.x-k8s.io";
    case Source::kLocalQueues:
      return "localqueues.kueue.x-k8s.io";
    case Source::kResourceFlavors:
      return "resourceflavors.kueue.x-k8s.io";
    case Source::kWorkloadPriorityClasses:
      return "workloadpriorityclasses.kueue.x-k8s.io";
  }
  return "";
}

void KubeScheduler::Follow(kube::Reflector* reflector, Source source) {
  bool kueue = source != Source::kNodes && source != Source::kPods;
  bool absent = false;
  while (true) {
    Result<kube::Delta> delta = reflector->Next(std::chrono::seconds(1));
    if (!delta) {
      StatusCode code = delta.error().code();
      if (code == StatusCode::kCancelled) return;
      if (kueue && code == StatusCode::kNotFound) {
        // Kueue's CRDs are not installed: no quotas, until they are (the reflector retries).
        if (!absent) {
          spdlog::info("strata scheduler: {} are not served ({}): no Kueue quotas",
                       SourceName(source), delta.error().message());
        }
        absent = true;
        delta = kube::Delta{kube::DeltaType::kReplace, {}, nullptr, ""};
      } else {
        if (code != StatusCode::kDeadlineExceeded) {
          spdlog::warn("strata scheduler: following {}: {}", SourceName(source),
                       delta.error().ToString());
        }
        continue;
      }
    } else if (delta->type == kube::DeltaType::kReplace) {
      absent = false;
    }
    {
      std::lock_guard lock(mutex_);
      queue_.push_back({source, std::move(*delta)});
    }
    wake_.notify_one();
  }
}

Status KubeScheduler::Run() {
  std::thread node_thread([this] { Follow(node_reflector_.get(), Source::kNodes); });
  std::thread pod_thread([this] { Follow(pod_reflector_.get(), Source::kPods); });
  std::vector<std::thread> kueue_threads;
  for (auto& [source, reflector] : kueue_reflectors_) {
    kueue_threads.emplace_back([this, s = source, r = reflector.get()] { Follow(r, s); });
  }
  while (true) {
    std::deque<Queued> batch;
    {
      std::unique_lock lock(mutex_);
      wake_.wait_for(lock, std::chrono::milliseconds(500),
                     [&] { return stopped_ || !queue_.empty(); });
      if (stopped_) break;
      batch.swap(queue_);
    }
    for (Queued& queued : batch) {
      if (queued.source == Source::kNodes) {
        ApplyNodes(queued.delta);
      } else if (queued.source == Source::kPods) {
        ApplyPods(queued.delta);
      } else {
        ApplyKueue(queued.source, queued.delta);
      }
    }
    if (!nodes_synced_ || !pods_synced_) continue;
    if (kueue_listed_.size() < kueue_reflectors_.size()) continue;
    if (dirty_ || (waiting_ && clock_.Now() >= next_idle_cycle_)) Cycle();
  }
  node_thread.join();
  pod_thread.join();
  for (std::thread& t : kueue_threads) t.join();
  return Status::Ok();
}

std::map<std::string, json>& KubeScheduler::KueueObjectsOf(Source source) {
  switch (source) {
    case Source::kClusterQueues:
      return kueue_.cluster_queues;
    case Source::kLocalQueues:
      return kueue_.local_queues;
    case Source::kResourceFlavors:
      return kueue_.resource_flavors;
    default:
      return kueue_.priority_classes;
  }
}

void KubeScheduler::ApplyKueue(Source source, const kube::Delta& delta) {
  std::map<std::string, json>& objects = KueueObjectsOf(source);
  // LocalQueues are namespaced, the others cluster-scoped.
  auto key = [&](const json& object) {
    return source == Source::kLocalQueues ? KeyOf(object) : NameOf(object);
  };
  bool changed = false;  // in what the queues are made of (not a status)
  switch (delta.type) {
    case kube::DeltaType::kReplace: {
      std::map<std::string, json> fresh;
      for (const json& item : delta.items) fresh[key(item)] = item;
      changed = fresh != objects;
      objects = std::move(fresh);
      kueue_listed_.insert(source);
      break;
    }
    case kube::DeltaType::kAdded:
    case kube::DeltaType::kModified: {
      json& stored = objects[key(delta.object)];
      // A status change (strata's own writes among them) changes nothing the cycle reads.
      auto read = [](const json& object) {
        // A WorkloadPriorityClass has no spec: its value is what a cycle reads.
        const json& spec = MemberOrNull(object, "spec");
        return std::pair{spec.is_null() ? MemberOrNull(object, "value") : spec,
                         StringMemberOr(MemberOrNull(object, "metadata"), "uid")};
      };
      changed = read(stored) != read(delta.object);
      stored = delta.object;
      break;
    }
    case kube::DeltaType::kDeleted:
      changed = objects.erase(key(delta.object)) > 0;
      break;
    case kube::DeltaType::kBookmark:
      break;
  }
  if (changed) {
    dirty_ = true;
    quotas_.reset();  // made again by the next cycle
  }
}

void KubeScheduler::WriteQueueStatuses(const KueueQuotas& quotas,
                                       std::map<std::string, QueueFigures> figures) {
  TimePoint now = clock_.Now();
  for (auto& [name, object] : kueue_.cluster_queues) {
    const scheduler::Queue* queue = quotas.Find(name);
    auto unusable = quotas.invalid.find(name);
    const json& previous = object.value("status", json::object());
    json desired = WithTransitionTime(
        ClusterQueueStatus(queue, unusable == quotas.invalid.end() ? "" : unusable->second,
                           quotas.flavors, figures[name]),
        previous, now);
    bool same = true;
    for (const auto& [field, value] : desired.items())
      same = same && previous.contains(field) && previous[field] == value;
    if (same) continue;
    kube::PatchOptions options;
    options.subresource = "status";
    Result<json> written = client_->Patch(kueue_resources::kClusterQueues, "", name,
                                          kube::PatchType::kMerge, {{"status", desired}}, options);
    if (written) {
      object = std::move(*written);
    } else if (written.error().code() != StatusCode::kNotFound) {
      spdlog::warn("strata scheduler: status of ClusterQueue {}: {}", name,
                   written.error().ToString());
    }
  }
}

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
  if (pod.queue_name.empty()) return out;
  std::string why;
  std::optional<std::string> cluster_queue =
      quotas.ClusterQueueFor(pod.namespace_name, pod.queue_name);
  if (!cluster_queue) {
    why = fmt::format("LocalQueue {}/{} does not exist", pod.namespace_name, pod.queue_name);
  } else if (auto bad = quotas.invalid.find(*cluster_queue); bad != quotas.invalid.end()) {
    why = fmt::format("ClusterQueue {}: {}", *cluster_queue, bad->second);
  } else if (quotas.Find(*cluster_queue) == nullptr) {
    why = fmt::format("ClusterQueue {} (of LocalQueue {}/{}) does not exist", *cluster_queue,
                      pod.namespace_name, pod.queue_name);
  } else {
    out.queue = *cluster_queue;
  }
  if (out.why.empty()) out.why = std::move(why);
  return out;
}

void KubeScheduler::ApplyNodes(const kube::Delta& delta) {
  auto set = [&](const json& object) {
    Result<scheduler::Node> node = NodeFromKube(object);
    std::string name = NameOf(object);
    if (!node) {
      spdlog::warn("strata scheduler: ignoring node {}: {}", name, node.error().message());
      dirty_ |= nodes_.erase(name) > 0;
      return;
    }
    auto [it, inserted] = nodes_.try_emplace(name, *node);
    if (!inserted && it->second != *node) {
      it->second = std::move(*node);
      dirty_ = true;
    }
    dirty_ |= inserted;
  };
  switch (delta.type) {
    case kube::DeltaType::kReplace:
      nodes_.clear();
      for (const json& item : delta.items) set(item);
      nodes_synced_ = true;
      dirty_ = true;
      break;
    case kube::DeltaType::kAdded:
    case kube::DeltaType::kModified:
      set(delta.object);
      break;
    case kube::DeltaType::kDeleted:
      dirty_ |= nodes_.erase(NameOf(delta.object)) > 0;
      break;
    case kube::DeltaType::kBookmark:
      break;
  }
}

void KubeScheduler::SetPod(const std::string& key, const json& object) {
  Result<PodSpec> pod = PodFromKube(object);
  if (!pod) {
    // Kept as a pending pod that cannot convert, so that its owner is told why.
    invalid_[key] = pod.error().message();
    PodSpec shell;
    const json& metadata = MemberOrNull(object, "metadata");
    shell.namespace_name = StringMemberOr(metadata, "namespace");
    shell.name = StringMemberOr(metadata, "name");
    shell.uid = StringMemberOr(metadata, "uid");
    shell.scheduler_name = StringMemberOr(MemberOrNull(object, "spec"), "schedulerName");
    shell.node_name = StringMemberOr(MemberOrNull(object, "spec"), "nodeName");
    pods_[key] = std::move(shell);
    dirty_ = true;
    return;
  }
  invalid_.erase(key);
  auto it = pods_.find(key);
  if (it == pods_.end()) {
    dirty_ = true;
    pods_.emplace(key, std::move(*pod));
    return;
  }
  if (it->second.uid != pod->uid) gpus_.erase(key);
  // A pod this scheduler bound is already bound here; an older event may still say pending.
  if (pod->node_name.empty() && !it->second.node_name.empty() && it->second.uid == pod->uid &&
      !pod->deleting) {
    pod->node_name = it->second.node_name;
  }
  if (SchedulingFields(it->second) != SchedulingFields(*pod)) dirty_ = true;
  it->second = std::move(*pod);
}

void KubeScheduler::ErasePod(const std::string& key) {
  auto it = pods_.find(key);
  if (it == pods_.end()) return;
  std::optional<json> again;
  {
    std::lock_guard lock(recreate_mutex_);
    if (auto copy = recreate_.find(key); copy != recreate_.end()) {
      again = std::move(copy->second);
      recreate_.erase(copy);
    }
  }
  if (again) {
    Result<json> created =
        client_->Create(kube::resources::kPods, it->second.namespace_name, *again);
    if (!created)
      spdlog::warn("strata scheduler: making {} again: {}", key, created.error().ToString());
  }
  reporter_.Forget(it->second.uid);
  pods_.erase(it);
  invalid_.erase(key);
  gpus_.erase(key);
  dirty_ = true;
}

void KubeScheduler::ApplyPods(const kube::Delta& delta) {
  switch (delta.type) {
    case kube::DeltaType::kReplace: {
      std::set<std::string> present;
      for (const json& item : delta.items) {
        std::string key = KeyOf(item);
        present.insert(key);
        SetPod(key, item);
      }
      for (auto it = pods_.begin(); it != pods_.end();) {
        std::string key = it->first;
        ++it;
        if (!present.count(key)) ErasePod(key);
      }
      pods_synced_ = true;
      dirty_ = true;
      break;
    }
    case kube::DeltaType::kAdded:
    case kube::DeltaType::kModified:
      SetPod(KeyOf(delta.object), delta.object);
      break;
    case kube::DeltaType::kDeleted:
      ErasePod(KeyOf(delta.object));
      break;
    case kube::DeltaType::kBookmark:
      break;
  }
}

void KubeScheduler::Cycle() {
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
  std::map<std::string, int> node_index;
  std::vector<std::string> node_names;
  for (const auto& [name, node] : nodes_) {
    node_index[name] = static_cast<int>(cluster->nodes.size());
    node_names.push_back(name);
    cluster->nodes.push_back(node);
  }
  std::vector<std::vector<int64_t>> used(cluster->nodes.size());
  for (size_t n = 0; n < used.size(); ++n) used[n].assign(cluster->nodes[n].gpus.size(), 0);

  scheduler::Snapshot snapshot{cluster, {}, now};
  // Pending pods of strata's by workload, and members of gangs already bound.
  std::map<std::string, std::vector<std::string>> gang_pending, gang_bound;
  std::map<std::string, int64_t> gang_size;
  std::vector<std::string> singles;

  // Pods whose GPUs strata chose first, so that the others fill around them.
  std::vector<const std::pair<const std::string, PodSpec>*> holders;
  for (const auto& entry : pods_)
    if (entry.second.HoldsCapacity() && node_index.count(entry.second.node_name))
      holders.push_back(&entry);
  std::stable_partition(holders.begin(), holders.end(),
                        [&](const auto* entry) { return gpus_.count(entry->first) > 0; });
  for (const auto* entry : holders) {
    const auto& [key, pod] = *entry;
    int n = node_index[pod.node_name];
    scheduler::RunningWorkload running;
    running.workload.name = kPodWorkloadPrefix + key;
    // A bound pod is charged to its queue, and keeps its priority, however it was bound.
    const Admission admission = AdmissionOf(pod, quotas);
    running.workload.priority = admission.priority;
    running.workload.submitted = pod.created;
    running.workload.pod_sets = {pod.pod_set};
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
    running.pods.push_back({0, 0, n, std::move(gpus)});
    snapshot.running.push_back(std::move(running));
    if (pod.scheduler_name == options_.scheduler_name && !pod.gang.key.empty()) {
      gang_bound[GangOf(pod)].push_back(key);
      gang_size[GangOf(pod)] = pod.gang.size;
    }
  }

  std::vector<scheduler::Workload> pending;
  std::map<std::string, std::vector<std::string>>
      members;  // workload -> pod keys, in pod-set order
  std::vector<std::pair<std::vector<std::string>, std::string>> held;  // pods, why
  std::map<std::string, Admission> admissions;  // of the pending pods offered to the cycle
  for (const auto& [key, pod] : pods_) {
    if (pod.scheduler_name != options_.scheduler_name || !pod.Pending()) continue;
    if (auto bad = invalid_.find(key); bad != invalid_.end()) {
      held.push_back({{key}, bad->second});
      continue;
    }
    Admission admission = AdmissionOf(pod, quotas);
    if (!admission.why.empty()) {
      held.push_back({{key}, std::move(admission.why)});
      continue;
    }
    if (!admission.queue.empty() &&
        (pod.gang.key.empty() || pending_gangs.insert(GangOf(pod)).second)) {
      ++queue_figures[admission.queue].pending_workloads;
    }
    admissions.emplace(key, std::move(admission));
    if (pod.gang.key.empty()) {
      singles.push_back(key);
    } else {
      std::string gang = GangOf(pod);
      gang_pending[gang].push_back(key);
      gang_size[gang] = std::max(gang_size[gang], pod.gang.size);
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
    for (const std::string& key : keys) {
      const PodSpec& pod = pods_.at(key);
      workload.priority = std::max(workload.priority, admissions.at(key).priority);
      workload.submitted = std::min(workload.submitted, pod.created);
      scheduler::PodSet set = pod.pod_set;
      set.name = pod.name;
      workload.pod_sets.push_back(std::move(set));
    }
    workload.nominated = nominated_.count(name) > 0;
    members[name] = keys;
    pending.push_back(std::move(workload));
  };
  for (const std::string& key : singles) workload_for(kPodWorkloadPrefix + key, {key});
  std::vector<std::string> stale_partial;  // bound members of gangs that cannot be completed
  for (auto& [gang, keys] : gang_pending) {
    size_t bound = gang_bound.count(gang) ? gang_bound[gang].size() : 0;
    int64_t size =
        gang_size[gang] > 0 ? gang_size[gang] : static_cast<int64_t>(keys.size() + bound);
    size_t missing = size > static_cast<int64_t>(bound) ? static_cast<size_t>(size) - bound : 0;
    if (keys.size() < missing) {
      held.push_back({keys, fmt::format("pod group {}: {} of its {} pods exist; it is placed "
                                        "when all of them do",
                                        gang, keys.size() + bound, size)});
      continue;
    }
    keys.resize(std::max<size_t>(missing, 1));
    workload_for(kGangWorkloadPrefix + gang, keys);
  }

  scheduler::Decisions decisions = scheduler_.Cycle(snapshot, pending);

  std::vector<BindTask> binds;
  std::set<std::string> placed;
  for (const scheduler::Binding& binding : decisions.bindings) {
    placed.insert(binding.workload);
    nominated_.erase(binding.workload);
    const std::vector<std::string>& keys = members[binding.workload];
    for (const scheduler::PodPlacement& placement : binding.pods) {
      binds.push_back({keys.at(static_cast<size_t>(placement.pod_set)),
                       node_names.at(static_cast<size_t>(placement.node)), placement.gpus,
                       binding.workload, Status::Ok()});
    }
  }
  BindAll(binds);

  // A gang some of whose members are bound and whose rest did not fit now: release it whole.
  for (auto& [gang, bound_keys] : gang_bound) {
    std::string name = kGangWorkloadPrefix + gang;
    if (!gang_pending.count(gang) || placed.count(name)) continue;
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
  }
  std::vector<std::pair<std::string, const std::string*>> explain;
  for (const auto& [keys, message] : held)
    for (const std::string& key : keys) explain.push_back({key, &message});
  RunParallel(explain.size(), options_.api_workers, [&](size_t i) {
    const PodSpec& pod = pods_.at(explain[i].first);
    Status status = reporter_.Unschedulable(pod, *explain[i].second);
    if (!status.ok()) {
      spdlog::warn("strata scheduler: explaining {}: {}", explain[i].first, status.ToString());
    }
  });
  waiting_ = !held.empty();
  next_idle_cycle_ = now + options_.idle_cycle_interval;
  WriteQueueStatuses(quotas, std::move(queue_figures));
  // Nominations of workloads that are gone.
  for (auto it = nominated_.begin(); it != nominated_.end();)
    it = members.count(*it) ? std::next(it) : nominated_.erase(it);
}

void KubeScheduler::BindAll(std::vector<BindTask>& tasks) {
  RunParallel(tasks.size(), options_.api_workers, [&](size_t i) {
    BindTask& task = tasks[i];
    const PodSpec& pod = pods_.at(task.pod_key);
    task.result = client_->Bind(pod.namespace_name, pod.name, task.node, pod.uid);
    if (task.result.ok()) {
      Status reported = reporter_.Scheduled(pod, task.node);
      if (!reported.ok()) {
        spdlog::warn("strata scheduler: Scheduled event of {}: {}", task.pod_key,
                     reported.ToString());
      }
    }
  });
  std::set<std::string> failed_gangs;
  for (BindTask& task : tasks) {
    if (task.result.ok()) {
      ++bound_;
      pods_.at(task.pod_key).node_name = task.node;
      gpus_[task.pod_key] = task.gpus;
      continue;
    }
    ++bind_failures_;
    spdlog::warn("strata scheduler: binding {} to {}: {}", task.pod_key, task.node,
                 task.result.ToString());
    if (task.workload.rfind(kGangWorkloadPrefix, 0) == 0) failed_gangs.insert(task.workload);
  }
  dirty_ |= !failed_gangs.empty();
  for (const std::string& gang : failed_gangs) {
    std::vector<std::string> bound;
    for (const BindTask& task : tasks)
      if (task.workload == gang && task.result.ok()) bound.push_back(task.pod_key);
    spdlog::info("strata scheduler: a bind of {} failed; releasing its {} bound members", gang,
                 bound.size());
    ++gangs_released_;
    Release(bound);
  }
}

void KubeScheduler::Release(const std::vector<std::string>& pod_keys) {
  RunParallel(pod_keys.size(), options_.api_workers, [&](size_t i) {
    const PodSpec& pod = pods_.at(pod_keys[i]);
    Result<json> current = client_->Get(kube::resources::kPods, pod.namespace_name, pod.name);
    if (!current) return;
    kube::DeleteOptions options;
    options.precondition_uid = pod.uid;
    options.grace_period_seconds = 0;
    Result<json> deleted =
        client_->Delete(kube::resources::kPods, pod.namespace_name, pod.name, options);
    if (!deleted) {
      spdlog::warn("strata scheduler: releasing {}: {}", pod_keys[i], deleted.error().ToString());
      return;
    }
    const json& metadata = (*current)["metadata"];
    if (metadata.contains("ownerReferences")) return;  // its owner makes a new one
    // Nothing owns it: the same pod again, unbound.
    json copy = {{"apiVersion", "v1"}, {"kind", "Pod"}, {"spec", (*current)["spec"]}};
    copy["spec"].erase("nodeName");
    json& meta = copy["metadata"];
    for (const char* field : {"name", "namespace", "labels", "annotations"})
      if (metadata.contains(field)) meta[field] = metadata[field];
    // Made again once the watch says the old one is gone (ErasePod).
    std::lock_guard lock(recreate_mutex_);
    recreate_[pod_keys[i]] = std::move(copy);
  });
  dirty_ = true;
}

}  // namespace strata::kubesched
