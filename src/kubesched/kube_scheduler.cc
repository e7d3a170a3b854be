#include "kubesched/kube_scheduler.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>

#include "common/json_member.h"
#include "kubesched/node_spec.h"

// KubeScheduler's following of the cluster: its reflectors, and what their deltas change.
// The cycle is in scheduling_cycle.cc, its writes in decision_writes.cc.

namespace strata::kubesched {
namespace {

using nlohmann::json;

// "namespace/name" of an object ("/name" for a cluster-scoped one).
std::string KeyOf(const json& object) {
  const json& metadata = MemberOrNull(object, "metadata");
  return StringMemberOr(metadata, "namespace") + "/" + StringMemberOr(metadata, "name");
}

std::string NameOf(const json& object) {
  return StringMemberOr(MemberOrNull(object, "metadata"), "name");
}

// What of a pod the scheduler reads; a change to anything else (status reports, our own
// condition writes) is no reason for a cycle.
auto SchedulingFields(const PodSpec& pod) {
  const scheduler::PodSet& set = pod.pod_set;
  return std::tie(pod.uid, pod.node_name, pod.phase, pod.deleting, pod.gated, pod.priority,
                  pod.scheduler_name, pod.gang.key, pod.gang.size, pod.queue_name,
                  pod.workload_priority_class, set.cpu_milli, set.memory_bytes, set.gpu.count,
                  set.gpu.milli, set.gpu.memory_mib, pod.claims);
}

// Applies a reflector's delta to `objects`, keyed by `key_of`: `set` converts and stores one
// object (and says whether what a cycle reads changed); a list replaces them all. Returns whether
// a cycle's input changed; `listed` is set when the delta was a list.
template <typename Map, typename KeyOf, typename Set>
bool ApplyDelta(const kube::Delta& delta, Map& objects, KeyOf key_of, Set set, bool* listed) {
  switch (delta.type) {
    case kube::DeltaType::kReplace:
      objects.clear();
      for (const json& item : delta.items) set(item);
      *listed = true;
      return true;
    case kube::DeltaType::kAdded:
    case kube::DeltaType::kModified:
      return set(delta.object);
    case kube::DeltaType::kDeleted:
      return objects.erase(key_of(delta.object)) > 0;
    case kube::DeltaType::kBookmark:
      break;
  }
  return false;
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
  std::vector<std::pair<Source, const kube::GroupVersionResource*>> optional = {
      {Source::kPodGroups, &group_resources::kPodGroups},
      {Source::kVolcanoPodGroups, &group_resources::kVolcanoPodGroups},
      {Source::kResourceSlices, &dra_resources::kResourceSlices},
      {Source::kResourceClaims, &dra_resources::kResourceClaims},
      {Source::kDeviceClasses, &dra_resources::kDeviceClasses},
      {Source::kJobs, &kJobs}};
  if (options_.kueue_quotas) {
    optional.insert(optional.end(), {{Source::kClusterQueues, &kueue_resources::kClusterQueues},
                                     {Source::kLocalQueues, &kueue_resources::kLocalQueues},
                                     {Source::kResourceFlavors, &kueue_resources::kResourceFlavors},
                                     {Source::kWorkloadPriorityClasses,
                                      &kueue_resources::kWorkloadPriorityClasses}});
  }
  for (auto [source, resource] : optional)
    optional_reflectors_.emplace_back(source, std::make_unique<kube::Reflector>(client, *resource));
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
  for (auto& [source, reflector] : optional_reflectors_) reflector->Stop();
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
    case Source::kPodGroups:
      return "podgroups.scheduling.k8s.io";
    case Source::kVolcanoPodGroups:
      return "podgroups.scheduling.volcano.sh";
    case Source::kResourceSlices:
      return "resourceslices.resource.k8s.io";
    case Source::kResourceClaims:
      return "resourceclaims.resource.k8s.io";
    case Source::kDeviceClasses:
      return "deviceclasses.resource.k8s.io";
    case Source::kJobs:
      return "jobs.batch";
  }
  return "";
}

void KubeScheduler::Follow(kube::Reflector* reflector, Source source) {
  bool optional = source != Source::kNodes && source != Source::kPods;
  bool absent = false;
  while (true) {
    Result<kube::Delta> delta = reflector->Next(std::chrono::seconds(1));
    bool served = true;
    if (!delta) {
      StatusCode code = delta.error().code();
      if (code == StatusCode::kCancelled) return;
      if (optional && (code == StatusCode::kNotFound || code == StatusCode::kPermissionDenied)) {
        // Not installed (or not ours to read): read as empty until it is (the reflector
        // retries).
        if (!absent) {
          spdlog::info("strata scheduler: {} are not served ({}): read as none", SourceName(source),
                       delta.error().message());
        }
        absent = true;
        served = false;
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
      queue_.push_back({source, std::move(*delta), served});
    }
    wake_.notify_one();
  }
}

Status KubeScheduler::Run() {
  std::thread node_thread([this] { Follow(node_reflector_.get(), Source::kNodes); });
  std::thread pod_thread([this] { Follow(pod_reflector_.get(), Source::kPods); });
  std::vector<std::thread> optional_threads;
  for (auto& [source, reflector] : optional_reflectors_) {
    optional_threads.emplace_back([this, s = source, r = reflector.get()] { Follow(r, s); });
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
        if (queued.source == Source::kJobs) {
          ApplyJobs(queued.delta);
          continue;
        }
        if (queued.source == Source::kVolcanoPodGroups &&
            queued.delta.type == kube::DeltaType::kReplace) {
          dirty_ |= volcano_served_ != queued.served;
          volcano_served_ = queued.served;
        }
        ApplyOptional(queued.source, queued.delta);
      }
    }
    if (!nodes_synced_ || !pods_synced_) continue;
    if (optional_listed_.size() < optional_reflectors_.size()) continue;
    if (dirty_ || (waiting_ && clock_.Now() >= next_idle_cycle_)) Cycle();
    if (!queue_status_held_.empty()) FlushQueueStatuses();
  }
  node_thread.join();
  pod_thread.join();
  for (std::thread& t : optional_threads) t.join();
  return Status::Ok();
}

std::map<std::string, json>& KubeScheduler::ObjectsOf(Source source) {
  switch (source) {
    case Source::kPodGroups:
      return pod_groups_;
    case Source::kVolcanoPodGroups:
      return volcano_pod_groups_;
    case Source::kResourceSlices:
      return dra_objects_.slices;
    case Source::kResourceClaims:
      return dra_objects_.claims;
    case Source::kDeviceClasses:
      return dra_objects_.classes;
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

void KubeScheduler::ApplyOptional(Source source, const kube::Delta& delta) {
  std::map<std::string, json>& objects = ObjectsOf(source);
  bool groups = source == Source::kPodGroups || source == Source::kVolcanoPodGroups;
  bool dra = source == Source::kResourceSlices || source == Source::kResourceClaims ||
             source == Source::kDeviceClasses;
  // LocalQueues, PodGroups and ResourceClaims are namespaced, the others cluster-scoped.
  auto key = [&](const json& object) {
    return source == Source::kLocalQueues || source == Source::kResourceClaims || groups
               ? KeyOf(object)
               : NameOf(object);
  };
  bool changed = false;  // in what the queues or gangs are made of (not a status)
  switch (delta.type) {
    case kube::DeltaType::kReplace: {
      std::map<std::string, json> fresh;
      for (const json& item : delta.items) fresh[key(item)] = item;
      changed = fresh != objects;
      objects = std::move(fresh);
      optional_listed_.insert(source);
      break;
    }
    case kube::DeltaType::kAdded:
    case kube::DeltaType::kModified: {
      json& stored = objects[key(delta.object)];
      // A status change (strata's own writes among them) changes nothing the cycle reads, but
      // a claim's status is its allocation.
      auto read = [&](const json& object) {
        if (source == Source::kResourceClaims) return std::pair{object, std::string()};
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
    // Made again by the next cycle.
    if (dra) {
      dra_.reset();
    } else if (!groups) {
      quotas_.reset();
    }
  }
}

namespace {

// Stores `converted` at `key` in `objects`; whether what a cycle reads of it changed.
template <typename Map, typename T>
bool Store(Map& objects, const std::string& key, T converted) {
  auto [it, inserted] = objects.try_emplace(key, converted);
  if (inserted) return true;
  bool changed;
  if constexpr (std::is_same_v<T, JobSpec>) {
    // A Job is kept as the reply to strata's admission left it until the watch catches up: an
    // older event would make it look suspended and free its quota for a cycle.
    if (!converted.Supersedes(it->second)) return false;
    changed = !it->second.SameFor(converted);
    // The version is kept current even when nothing a cycle reads changed (Supersedes reads it).
    if (!changed) it->second.resource_version = converted.resource_version;
  } else {
    changed = it->second != converted;
  }
  if (changed) it->second = std::move(converted);
  return changed;
}

}  // namespace

void KubeScheduler::ApplyNodes(const kube::Delta& delta) {
  auto set = [&](const json& object) {
    Result<scheduler::Node> node = NodeFromKube(object);
    std::string name = NameOf(object);
    if (!node) {
      spdlog::warn("strata scheduler: ignoring node {}: {}", name, node.error().message());
      return nodes_.erase(name) > 0;
    }
    return Store(nodes_, name, std::move(*node));
  };
  dirty_ |= ApplyDelta(delta, nodes_, NameOf, set, &nodes_synced_);
}

void KubeScheduler::ApplyJobs(const kube::Delta& delta) {
  // Store keeps a Job's newer version; a list, which starts from nothing, too.
  std::map<std::string, JobSpec> before;
  if (delta.type == kube::DeltaType::kReplace) before = jobs_;
  auto set = [&](const json& object) { return Store(jobs_, KeyOf(object), JobFromKube(object)); };
  bool listed = false;
  dirty_ |= ApplyDelta(delta, jobs_, KeyOf, set, &listed);
  for (auto& [key, job] : before) {
    if (auto it = jobs_.find(key); it != jobs_.end() && !it->second.Supersedes(job))
      it->second = std::move(job);
  }
  if (listed) optional_listed_.insert(Source::kJobs);
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

}  // namespace strata::kubesched
