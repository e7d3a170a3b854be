#include "kubecompat/pytorchjob_status.h"

#include <string>

#include "api/annotations.h"

namespace strata::kubecompat {
namespace {

using json = nlohmann::json;

std::string JobName(const json& pytorchjob) {
  const json& metadata = pytorchjob.value("metadata", json::object());
  return metadata.value("namespace", "") + "/" + metadata.value("name", "");
}

// The conditions as Kubeflow keeps them: a list whose order is the order of the changes.
class Conditions {
 public:
  explicit Conditions(const json& pytorchjob) {
    const json& status = pytorchjob.value("status", json::object());
    const json& conditions =
        status.is_object() ? status.value("conditions", json::array()) : json();
    if (conditions.is_array()) list_ = conditions;
  }

  // Sets one condition; a change moves it last.
  void Set(std::string_view type, std::string_view status, std::string_view reason,
           std::string_view message, const std::string& now) {
    std::string transition = now;
    for (auto it = list_.begin(); it != list_.end(); ++it) {
      if (!it->is_object() || it->value("type", "") != type) continue;
      if (it->value("status", "") == status && it->value("reason", "") == reason &&
          it->value("message", "") == message) {
        return;
      }
      if (it->value("status", "") == status) transition = it->value("lastTransitionTime", now);
      list_.erase(it);
      break;
    }
    list_.push_back({{"type", type},
                     {"status", status},
                     {"reason", reason},
                     {"message", message},
                     {"lastUpdateTime", now},
                     {"lastTransitionTime", transition}});
  }

  // Sets `type` False if it is there and True.
  void Clear(std::string_view type, std::string_view reason, std::string_view message,
             const std::string& now) {
    for (const json& condition : list_) {
      if (condition.is_object() && condition.value("type", "") == type &&
          condition.value("status", "") == "True") {
        Set(type, "False", reason, message, now);
        return;
      }
    }
  }

  // Adds a condition that tells the past, not the state: before the newest condition (the state
  // `kubectl get` shows), which stays last; after Created when that is all there is.
  void AddPast(std::string_view type, std::string_view status, std::string_view reason,
               std::string_view message, const std::string& now) {
    json condition = {{"type", type},       {"status", status},      {"reason", reason},
                      {"message", message}, {"lastUpdateTime", now}, {"lastTransitionTime", now}};
    list_.insert(list_.size() < 2 ? list_.end() : list_.end() - 1, std::move(condition));
  }

  bool Has(std::string_view type) const {
    for (const json& condition : list_) {
      if (condition.is_object() && condition.value("type", "") == type) return true;
    }
    return false;
  }

  json Take() { return std::move(list_); }

 private:
  json list_ = json::array();
};

void SetCreated(Conditions& conditions, const std::string& name, const std::string& now) {
  conditions.Set("Created", "True", "PyTorchJobCreated", "PyTorchJob " + name + " is created.",
                 now);
}

json ReplicaStatuses(const json& pytorchjob, const api::Job& job,
                     const std::vector<api::Pod>& pods) {
  const json& spec = pytorchjob.value("spec", json::object());
  const json& types = spec.is_object() ? spec.value("pytorchReplicaSpecs", json::object()) : json();
  const bool has_master = types.is_object() && types.contains("Master");
  const std::string run = std::to_string(job.status.runs);
  json out = json::object();
  if (!types.is_object()) return out;
  for (const auto& [type, ignored] : types.items()) {
    out[type] = {{"active", 0},
                 {"succeeded", 0},
                 {"failed", 0},
                 {"selector", std::string(api::kJobNameLabel) + "=" + job.metadata.name}};
  }
  for (const api::Pod& pod : pods) {
    auto found = pod.metadata.annotations.find(api::kJobRunAnnotation);
    if (found == pod.metadata.annotations.end() || found->second != run) continue;
    const std::string type = has_master && pod.spec.owner.replica == 0 ? "Master" : "Worker";
    if (!out.contains(type)) continue;
    const char* counter = pod.status.phase == api::PodPhase::kRunning     ? "active"
                          : pod.status.phase == api::PodPhase::kSucceeded ? "succeeded"
                          : pod.status.phase == api::PodPhase::kFailed    ? "failed"
                                                                          : nullptr;
    if (counter != nullptr) out[type][counter] = out[type][counter].get<int64_t>() + 1;
  }
  return out;
}

}  // namespace

json PyTorchJobStatus(const json& pytorchjob, const api::Job& job,
                      const std::vector<api::Pod>& pods, TimePoint now) {
  const std::string at = FormatRfc3339(now);
  const std::string name = JobName(pytorchjob);
  const api::JobStatus& s = job.status;
  Conditions conditions(pytorchjob);
  SetCreated(conditions, name, at);
  // A group restart that began and ended between two reads of the Job still shows, as Kubeflow's
  // operator would have left it after one: Restarting, no longer True.
  if (s.restart_count > 0 && s.phase != api::JobPhase::kRestarting &&
      !conditions.Has("Restarting")) {
    conditions.AddPast("Restarting", "False", "PyTorchJobRestarting",
                       "PyTorchJob " + name + " restarted " + std::to_string(s.restart_count) +
                           (s.restart_count == 1 ? " time." : " times."),
                       at);
  }
  switch (s.phase) {
    case api::JobPhase::kPending:
      conditions.Clear("Running", s.reason.empty() ? "PyTorchJobPending" : s.reason, s.message, at);
      break;
    case api::JobPhase::kRunning:
      conditions.Clear("Restarting", "PyTorchJobRunning", "PyTorchJob " + name + " is running.",
                       at);
      conditions.Set("Running", "True", "PyTorchJobRunning", "PyTorchJob " + name + " is running.",
                     at);
      break;
    case api::JobPhase::kRestarting: {
      const std::string message =
          s.message.empty() ? "PyTorchJob " + name + " is restarting." : s.message;
      conditions.Clear("Running", "PyTorchJobRestarting", message, at);
      conditions.Set("Restarting", "True", "PyTorchJobRestarting", message, at);
      break;
    }
    case api::JobPhase::kSucceeded: {
      const std::string message = "PyTorchJob " + name + " successfully completed.";
      conditions.Clear("Running", "PyTorchJobSucceeded", message, at);
      conditions.Clear("Restarting", "PyTorchJobSucceeded", message, at);
      conditions.Set("Succeeded", "True", "PyTorchJobSucceeded", message, at);
      break;
    }
    case api::JobPhase::kFailed: {
      const std::string message =
          s.message.empty() ? "PyTorchJob " + name + " has failed." : s.message;
      conditions.Clear("Running", "PyTorchJobFailed", message, at);
      conditions.Clear("Restarting", "PyTorchJobFailed", message, at);
      conditions.Set("Failed", "True", "PyTorchJobFailed", message, at);
      break;
    }
  }
  json status = {{"conditions", conditions.Take()},
                 {"replicaStatuses", ReplicaStatuses(pytorchjob, job, pods)},
                 {"lastReconcileTime", at}};
  if (!s.start_time.empty()) status["startTime"] = s.start_time;
  if (!s.completion_time.empty()) status["completionTime"] = s.completion_time;
  return status;
}

json RefusedStatus(const json& pytorchjob, std::string_view message, TimePoint now) {
  const std::string at = FormatRfc3339(now);
  Conditions conditions(pytorchjob);
  SetCreated(conditions, JobName(pytorchjob), at);
  conditions.Set("Failed", "True", "PyTorchJobFailedValidation", message, at);
  return {{"conditions", conditions.Take()},
          {"replicaStatuses", json::object()},
          {"lastReconcileTime", at}};
}

bool StatusChanged(const json& pytorchjob, const json& desired) {
  auto stripped = [](json status) {
    if (!status.is_object()) return json::object();
    status.erase("lastReconcileTime");
    if (status.contains("conditions") && status["conditions"].is_array()) {
      for (json& condition : status["conditions"]) {
        if (condition.is_object()) condition.erase("lastUpdateTime");
      }
    }
    return status;
  };
  return stripped(pytorchjob.value("status", json::object())) != stripped(desired);
}

}  // namespace strata::kubecompat
