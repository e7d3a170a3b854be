#include <spdlog/spdlog.h>

#include <optional>
#include <utility>

#include "common/json_member.h"
#include "kubesched/kube_scheduler.h"
#include "kubesched/parallel.h"

// What KubeScheduler's decisions write: binds (with the pods' DRA claims before them), the
// release of a half-bound gang, and the statuses of ClusterQueues and PodGroups.

namespace strata::kubesched {

using nlohmann::json;

namespace {

// The status of an Active condition in a ClusterQueue status ("" when it has none).
std::string ActiveStatus(const json& status) {
  const json& conditions = MemberOrNull(status, "conditions");
  if (!conditions.is_array() || conditions.empty()) return "";
  return StringMemberOr(conditions[0], "status", "");
}

}  // namespace

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
    if (same) {
      queue_status_held_.erase(name);
      continue;
    }
    auto written = queue_status_written_.find(name);
    bool due = written == queue_status_written_.end() ||
               now - written->second >= options_.queue_status_interval ||
               ActiveStatus(previous) != ActiveStatus(desired);
    if (due) {
      queue_status_held_.erase(name);
      WriteQueueStatus(name, object, std::move(desired));
    } else {
      queue_status_held_[name] = std::move(desired);
    }
  }
  for (auto it = queue_status_written_.begin(); it != queue_status_written_.end();)
    it = kueue_.cluster_queues.count(it->first) ? std::next(it) : queue_status_written_.erase(it);
}

void KubeScheduler::FlushQueueStatuses() {
  TimePoint now = clock_.Now();
  for (auto it = queue_status_held_.begin(); it != queue_status_held_.end();) {
    auto object = kueue_.cluster_queues.find(it->first);
    if (object == kueue_.cluster_queues.end()) {
      it = queue_status_held_.erase(it);
      continue;
    }
    auto written = queue_status_written_.find(it->first);
    if (written != queue_status_written_.end() &&
        now - written->second < options_.queue_status_interval) {
      ++it;
      continue;
    }
    json status = std::move(it->second);
    it = queue_status_held_.erase(it);
    WriteQueueStatus(object->first, object->second, std::move(status));
  }
}

void KubeScheduler::WriteQueueStatus(const std::string& name, json& object, json status) {
  queue_status_written_[name] = clock_.Now();
  kube::PatchOptions options;
  options.subresource = "status";
  Result<json> written = client_->Patch(kueue_resources::kClusterQueues, "", name,
                                        kube::PatchType::kMerge, {{"status", status}}, options);
  if (written) {
    object = std::move(*written);
  } else if (written.error().code() != StatusCode::kNotFound) {
    spdlog::warn("strata scheduler: status of ClusterQueue {}: {}", name,
                 written.error().ToString());
  }
}

void KubeScheduler::WritePodGroupStatuses(
    const std::map<std::string, std::pair<bool, std::string>>& outcomes, Duration refresh) {
  std::vector<std::pair<std::string, json>> patches;
  TimePoint now = clock_.Now();
  for (auto it = groups_told_.begin(); it != groups_told_.end();)
    it = pod_groups_.count(it->first) ? std::next(it) : groups_told_.erase(it);
  for (const auto& [key, outcome] : outcomes) {
    auto it = pod_groups_.find(key);
    if (it == pod_groups_.end()) continue;
    const auto& [scheduled, message] = outcome;
    if (auto told = groups_told_.find(key);
        !scheduled && told != groups_told_.end() && now - told->second < refresh)
      continue;
    std::optional<json> patch = PodGroupStatusPatch(it->second, scheduled, message, now);
    if (!patch) continue;
    patches.emplace_back(key, std::move(*patch));
    if (!scheduled) groups_told_[key] = now;
  }
  std::vector<std::optional<json>> written(patches.size());
  RunParallel(patches.size(), options_.api_workers, [&](size_t i) {
    const std::string& key = patches[i].first;
    size_t slash = key.find('/');
    kube::PatchOptions options;
    options.subresource = "status";
    Result<json> result =
        client_->Patch(group_resources::kPodGroups, key.substr(0, slash), key.substr(slash + 1),
                       kube::PatchType::kMerge, patches[i].second, options);
    if (result) {
      written[i] = std::move(*result);
    } else if (result.error().code() != StatusCode::kNotFound) {
      spdlog::warn("strata scheduler: status of PodGroup {}: {}", key, result.error().ToString());
    }
  });
  // Kept at once, so that the next cycle does not write the same again before the watch says.
  for (size_t i = 0; i < patches.size(); ++i)
    if (written[i]) pod_groups_[patches[i].first] = std::move(*written[i]);
}

Status KubeScheduler::WriteClaims(const BindTask& task,
                                  std::vector<std::pair<std::string, json>>* stored) {
  for (const ClaimWrite& write : task.claim_writes) {
    json claim = write.claim;
    if (write.add_finalizer) {
      // As kube-scheduler: the finalizer first, so that the claim is not deleted while it holds
      // devices; kube-controller-manager removes it once the claim is deallocated.
      json object = write.claim;
      object.erase("status");
      object["metadata"]["finalizers"].push_back(kClaimFinalizer);
      Result<json> updated =
          client_->Update(dra_resources::kResourceClaims, write.namespace_name, object);
      if (!updated) return updated.error().WithPrefix("ResourceClaim " + write.name);
      claim["metadata"] = (*updated)["metadata"];
    }
    kube::WriteOptions status;
    status.subresource = "status";
    Result<json> updated =
        client_->Update(dra_resources::kResourceClaims, write.namespace_name, claim, status);
    if (!updated) return updated.error().WithPrefix("ResourceClaim " + write.name + " status");
    stored->emplace_back(write.namespace_name + "/" + write.name, std::move(*updated));
  }
  return Status::Ok();
}

void KubeScheduler::BindAll(std::vector<BindTask>& tasks) {
  std::vector<std::vector<std::pair<std::string, json>>> claims(tasks.size());
  RunParallel(tasks.size(), options_.api_workers, [&](size_t i) {
    BindTask& task = tasks[i];
    const PodSpec& pod = pods_.at(task.pod_key);
    // A pod's claims are allocated and reserved for it before it is bound (kube-scheduler's
    // PreBind), so that its node's kubelet finds them ready.
    task.result = WriteClaims(task, &claims[i]);
    if (!task.result.ok()) return;
    task.result = client_->Bind(pod.namespace_name, pod.name, task.node, pod.uid);
    if (task.result.ok()) reporter_.Scheduled(pod, task.node);
  });
  // What the claims now say, kept at once (the watch may say it after the next cycle), so that
  // their devices are not given twice: kube-scheduler's assume cache.
  for (auto& written : claims) {
    for (auto& [key, claim] : written) dra_objects_.claims[key] = std::move(claim);
    if (!written.empty()) dra_.reset();
  }
  std::set<std::string> failed_gangs;
  for (BindTask& task : tasks) {
    if (task.result.ok()) {
      ++bound_;
      pods_.at(task.pod_key).node_name = task.node;
      // DRA GPUs are held through the claims, not chosen here.
      if (!task.dra) gpus_[task.pod_key] = task.gpus;
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

void KubeScheduler::AdmitJobs(
    const std::map<std::string, std::pair<std::string, std::string>>& admitted) {
  std::vector<std::string> keys;
  for (const auto& [key, flavor_queue] : admitted) keys.push_back(key);
  std::vector<std::optional<json>> written(keys.size());
  RunParallel(keys.size(), options_.api_workers, [&](size_t i) {
    const JobSpec& job = jobs_.at(keys[i]);
    const auto& [flavor, queue] = admitted.at(keys[i]);
    // As Kueue's controller: the Job runs once admitted. The flavor is kept on it, so that a
    // restarted scheduler still holds its quota until its pods are bound.
    json patch = {
        {"metadata", {{"annotations", {{kAdmissionAnnotation, flavor}}}, {"uid", job.uid}}},
        {"spec", {{"suspend", false}}}};
    Result<json> patched =
        client_->Patch(kJobs, job.namespace_name, job.name, kube::PatchType::kMerge, patch);
    if (!patched) {
      if (patched.error().code() != StatusCode::kNotFound)
        spdlog::warn("strata scheduler: admitting Job {}: {}", keys[i], patched.error().ToString());
      return;
    }
    written[i] = std::move(*patched);
    reporter_.JobAdmitted(job.namespace_name, job.name, job.uid, queue);
  });
  // Kept at once, as a bind is: the next cycle holds its quota before the watch says it.
  for (size_t i = 0; i < keys.size(); ++i) {
    if (!written[i]) continue;
    jobs_[keys[i]] = JobFromKube(*written[i]);
    dirty_ = true;
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
