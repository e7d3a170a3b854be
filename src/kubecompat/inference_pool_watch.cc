#include "kubecompat/inference_pool_watch.h"

#include <spdlog/spdlog.h>

#include <iterator>

#include "common/json_member.h"

namespace strata::kubecompat {
namespace {

using json = nlohmann::json;

// Deltas applied from one reflector in one pass at most, so a flood of pod changes still lets
// the routes be rebuilt.
constexpr int kMaxDeltasPerPass = 1000;

std::pair<std::string, std::string> KeyOf(const json& object) {
  const json& metadata = MemberOrNull(object, "metadata");
  return {StringMemberOr(metadata, "namespace"), StringMemberOr(metadata, "name")};
}

}  // namespace

InferencePoolWatch::InferencePoolWatch(kube::Client& client, InferencePoolWatchOptions options)
    : client_(client), options_(std::move(options)) {
  pools_reflector_ =
      std::make_unique<kube::Reflector>(&client_, kInferencePools, options_.reflector);
  objectives_reflector_ =
      std::make_unique<kube::Reflector>(&client_, kInferenceObjectives, options_.reflector);
}

InferencePoolWatch::~InferencePoolWatch() = default;

Result<bool> InferencePoolWatch::Drain(kube::Reflector& reflector, Duration wait,
                                       Objects& objects) {
  bool applied = false;
  for (int i = 0; i < kMaxDeltasPerPass; ++i) {
    Result<kube::Delta> delta = reflector.Next(wait);
    wait = Duration::zero();
    if (!delta) {
      if (delta.error().code() == StatusCode::kDeadlineExceeded) return applied;
      return Err(delta.error());
    }
    applied = true;
    switch (delta->type) {
      case kube::DeltaType::kReplace:
        objects.clear();
        for (json& item : delta->items) {
          Key key = KeyOf(item);
          objects[std::move(key)] = std::move(item);
        }
        break;
      case kube::DeltaType::kAdded:
      case kube::DeltaType::kModified: {
        Key key = KeyOf(delta->object);
        objects[std::move(key)] = std::move(delta->object);
        break;
      }
      case kube::DeltaType::kDeleted:
        objects.erase(KeyOf(delta->object));
        break;
      case kube::DeltaType::kBookmark:
        break;
    }
  }
  return applied;
}

Status InferencePoolWatch::Follow(kube::Reflector& reflector, Duration wait, Objects& objects,
                                  bool& missing, std::string_view kind, bool& changed) {
  Result<bool> applied = Drain(reflector, wait, objects);
  if (applied) {
    if (*applied) missing = false;
    changed = changed || *applied;
    return Status::Ok();
  }
  if (applied.error().code() != StatusCode::kNotFound) return applied.error();
  // The CRD is not installed (or was deleted): none of the kind.
  changed = changed || !objects.empty();
  objects.clear();
  if (!missing) {
    spdlog::info("gateway: no {} on this cluster ({}); looking again later", kind,
                 applied.error().message());
    missing = true;
  }
  return Status::Ok();
}

void InferencePoolWatch::SyncPools() {
  for (auto it = pools_.begin(); it != pools_.end();) {
    if (pool_objects_.contains(it->first)) {
      ++it;
    } else {
      it->second.pods_reflector->Stop();
      it = pools_.erase(it);
    }
  }
  for (auto it = invalid_.begin(); it != invalid_.end();) {
    it = pool_objects_.contains(it->first) ? std::next(it) : invalid_.erase(it);
  }
  for (const auto& [key, object] : pool_objects_) {
    Result<InferencePool> read = ReadInferencePool(object);
    auto found = pools_.find(key);
    if (!read) {
      if (found != pools_.end()) {
        found->second.pods_reflector->Stop();
        pools_.erase(found);
      }
      std::string& said = invalid_[key];
      if (said != read.error().message()) {
        said = read.error().message();
        spdlog::warn("gateway: {}; its pods are not routed", said);
      }
      continue;
    }
    invalid_.erase(key);
    if (found != pools_.end() && found->second.pool == *read) continue;
    if (found != pools_.end()) found->second.pods_reflector->Stop();
    Pool pool;
    pool.pool = *read;
    kube::ReflectorOptions pods_options = options_.reflector;
    pods_options.namespace_name = read->namespace_name;
    pods_options.label_selector = read->LabelSelector();
    pool.pods_reflector =
        std::make_unique<kube::Reflector>(&client_, kube::resources::kPods, pods_options);
    pools_[key] = std::move(pool);
  }
}

Status InferencePoolWatch::RunOnce() {
  bool changed = false;
  Status first = Follow(*pools_reflector_, options_.watch_wait, pool_objects_, pools_missing_,
                        "InferencePools", changed);
  Status objectives = Follow(*objectives_reflector_, Duration::zero(), objective_objects_,
                             objectives_missing_, "InferenceObjectives", changed);
  if (first.ok()) first = objectives;
  SyncPools();
  for (auto& [key, pool] : pools_) {
    Result<bool> pods = Drain(*pool.pods_reflector, Duration::zero(), pool.pods);
    if (!pods && first.ok()) first = pods.error();
    changed = changed || (pods && *pods);
  }
  // The table is rebuilt only when something was read: a quiet pass copies no pod.
  if (!changed) return first;

  std::vector<PoolMembers> members;
  for (auto& [key, pool] : pools_) {
    PoolMembers entry{pool.pool, {}};
    for (const auto& [pod_key, pod] : pool.pods) entry.pods.push_back(pod);
    members.push_back(std::move(entry));
  }
  std::vector<InferenceObjective> read_objectives;
  for (const auto& [key, object] : objective_objects_) {
    Result<InferenceObjective> objective = ReadInferenceObjective(object);
    if (objective) read_objectives.push_back(std::move(*objective));
  }
  std::vector<std::string> conflicts;
  std::vector<gateway::ModelConfig> routes = RoutesFromPools(members, read_objectives, &conflicts);
  if (conflicts != last_conflicts_) {
    for (const std::string& name : conflicts) {
      spdlog::warn(
          "gateway: model {} is served by more than one InferencePool; the first by "
          "namespace and name routes it",
          name);
    }
    last_conflicts_ = std::move(conflicts);
  }
  std::lock_guard lock(mutex_);
  routes_ = std::move(routes);
  return first;
}

std::vector<gateway::ModelConfig> InferencePoolWatch::Routes() const {
  std::lock_guard lock(mutex_);
  return routes_;
}

}  // namespace strata::kubecompat
