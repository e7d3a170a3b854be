#include "controller/job_controller.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "controller/training_pod.h"
#include "controller/write_batch.h"

namespace strata::controller {

namespace {

bool AllTerminal(const std::vector<Stored<api::Pod>>& pods) {
  return std::all_of(pods.begin(), pods.end(),
                     [](const auto& pod) { return PodTerminal(pod.value); });
}

bool AnyStopped(const std::vector<Stored<api::Pod>>& pods, std::string_view reason) {
  return std::any_of(pods.begin(), pods.end(),
                     [&](const auto& pod) { return StopRequested(pod.value) == reason; });
}

// A pod that failed on its own, not because a controller stopped it.
const Stored<api::Pod>* FirstFailure(const std::vector<Stored<api::Pod>>& pods) {
  for (const auto& pod : pods) {
    if (pod.value.status.phase == "Failed" && StopRequested(pod.value).empty()) return &pod;
  }
  return nullptr;
}

std::string DescribeFailure(const api::Pod& pod) {
  std::string out = fmt::format("pod {} failed", pod.metadata.name);
  if (pod.status.exit_code) out += fmt::format(" with exit code {}", *pod.status.exit_code);
  if (!pod.status.reason.empty()) out += fmt::format(" ({})", pod.status.reason);
  return out;
}

}  // namespace

JobController::JobController(store::Store& store, const Clock& clock, JobControllerOptions options)
    : store_(store), clock_(clock), events_(store, clock, options.event_repeat_interval) {}

Status JobController::RunOnce() {
  Result<std::vector<Stored<api::Job>>> jobs = ListStored<api::Job>(store_, "Job");
  if (!jobs) return jobs.error();
  Result<std::vector<Stored<api::Pod>>> pods = ListStored<api::Pod>(store_, "Pod");
  if (!pods) return pods.error();
  std::map<std::pair<std::string, std::string>, std::vector<Stored<api::Pod>>> pods_by_job;
  for (Stored<api::Pod>& pod : *pods) {
    if (pod.value.spec.owner.kind != "Job") continue;
    pods_by_job[{pod.value.metadata.namespace_name, pod.value.spec.owner.name}].push_back(
        std::move(pod));
  }
  Status first;
  for (const Stored<api::Job>& job : *jobs) {
    auto key = std::make_pair(job.value.metadata.namespace_name, job.value.metadata.name);
    auto it = pods_by_job.find(key);
    static const std::vector<Stored<api::Pod>> kNone;
    Status status = Reconcile(job, it == pods_by_job.end() ? kNone : it->second);
    if (first.ok()) first = status;
    if (it != pods_by_job.end()) pods_by_job.erase(it);
  }
  for (const auto& [key, orphans] : pods_by_job) {
    Status status = RemoveOrphans(orphans);
    if (first.ok()) first = status;
  }
  return first;
}

Status JobController::Reconcile(const Stored<api::Job>& job,
                                const std::vector<Stored<api::Pod>>& pods) {
  const api::JobSpec& spec = job.value.spec;
  const TimePoint now = clock_.Now();
  const std::string stamp = FormatRfc3339(now);
  const JobStatus before = ReadJobStatus(job.raw.body);
  JobStatus status = before;
  WriteBatch pass{
      events_, {"Job", job.raw.key.namespace_name, job.raw.key.name, job.raw.uid}, {}, {}};

  for (const auto& pod : pods) {
    std::optional<TimePoint> checkpoint = PodLastCheckpoint(pod.value);
    std::optional<TimePoint> known = ParseRfc3339(status.last_checkpoint_time);
    if (checkpoint && (!known || *checkpoint > *known)) {
      status.last_checkpoint_time = FormatRfc3339(*checkpoint);
    }
  }

  const bool all_terminal = AllTerminal(pods);
  const Stored<api::Pod>* failure = FirstFailure(pods);
  const bool all_succeeded = !pods.empty() && static_cast<int64_t>(pods.size()) == spec.replicas &&
                             std::all_of(pods.begin(), pods.end(), [](const auto& pod) {
                               return pod.value.status.phase == "Succeeded";
                             });
  const bool all_running =
      !pods.empty() && static_cast<int64_t>(pods.size()) == spec.replicas &&
      std::all_of(pods.begin(), pods.end(), [](const auto& pod) {
        return pod.value.status.phase == "Running" && StopRequested(pod.value).empty();
      });

  if (!status.Terminal() && all_succeeded) {
    status.phase = kJobSucceeded;
    status.completion_time = stamp;
    status.reason = "Succeeded";
    status.message = fmt::format("all {} pod(s) succeeded", pods.size());
    status.SetCondition("Running", "False", "Succeeded", status.message, now);
    status.SetCondition("Succeeded", "True", "Succeeded", status.message, now);
    pass.Event("Normal", "Succeeded", status.message);
  } else if (!status.Terminal() && AnyStopped(pods, kStopPreempted)) {
    for (const auto& pod : pods) pass.StopPod(pod, kStopPreempted, "the job was preempted");
    if (all_terminal) {
      for (const auto& pod : pods) pass.DeletePod(pod);
      status.preemption_count += 1;
      status.phase = kJobPending;
      status.reason = "Preempted";
      status.message = "every pod stopped after preemption; waiting to be scheduled again";
      status.SetCondition("Running", "False", "Preempted", status.message, now);
      pass.Event("Normal", "Requeued", status.message);
    }
  } else if (!status.Terminal() && (failure != nullptr || AnyStopped(pods, kStopGroupRestart))) {
    const bool restarting = AnyStopped(pods, kStopGroupRestart);
    if (!restarting && status.restart_count >= spec.max_restarts) {
      status.phase = kJobFailed;
      status.completion_time = stamp;
      status.reason = "MaxRestartsExceeded";
      status.message =
          fmt::format("{} after {} restart(s); maxRestarts is {}", DescribeFailure(failure->value),
                      status.restart_count, spec.max_restarts);
      status.SetCondition("Running", "False", "Failed", status.message, now);
      status.SetCondition("Failed", "True", "MaxRestartsExceeded", status.message, now);
      pass.Event("Warning", "Failed", status.message);
    } else {
      if (!restarting) {
        status.phase = kJobRestarting;
        status.reason = "PodFailed";
        status.message = fmt::format("{}; restarting every pod (restart {} of {})",
                                     DescribeFailure(failure->value), status.restart_count + 1,
                                     spec.max_restarts);
        status.SetCondition("Running", "False", "Restarting", status.message, now);
        status.SetCondition("Restarting", "True", "PodFailed", status.message, now);
        pass.Event("Warning", "Restarting", status.message);
      }
      for (const auto& pod : pods) {
        pass.StopPod(pod, kStopGroupRestart, "another pod of the job failed; restarting the group");
      }
      if (all_terminal) {
        for (const auto& pod : pods) pass.DeletePod(pod);
        status.restart_count += 1;
      }
    }
  } else if (!status.Terminal() && all_running && status.phase != kJobRunning) {
    status.phase = kJobRunning;
    if (status.start_time.empty()) status.start_time = stamp;
    status.reason.clear();
    status.message = fmt::format("all {} pod(s) running", pods.size());
    status.SetCondition("Running", "True", "Running", status.message, now);
    if (status.FindCondition("Restarting") != nullptr) {
      status.SetCondition("Restarting", "False", "Running", status.message, now);
    }
    pass.Event("Normal", "Running",
               fmt::format("{} (restart count {})", status.message, status.restart_count));
  }

  if (status.Terminal()) {
    const bool succeeded = status.phase == kJobSucceeded;
    const std::string_view stop_reason = succeeded ? kStopJobFinished : kStopJobFailed;
    for (const auto& pod : pods) {
      if (PodTerminal(pod.value)) {
        const std::string stopped = StopRequested(pod.value);
        const bool stopped_at_end = stopped == kStopJobFinished || stopped == kStopJobFailed;
        if (spec.clean_pod_policy == "All" ||
            (spec.clean_pod_policy == "Running" && stopped_at_end)) {
          pass.DeletePod(pod);
        }
      } else {
        pass.StopPod(pod, stop_reason, "the job " + status.phase);
      }
    }
  }

  const bool status_missing = !job.raw.body.is_object() || !job.raw.body.contains("status");
  if (status != before || status_missing) {
    store::Object updated = job.raw;
    WriteJobStatus(status, updated.body);
    pass.writes.push_back({store::WriteOp::kUpdate, std::move(updated)});
  }
  return pass.Commit(store_);
}

Status JobController::RemoveOrphans(const std::vector<Stored<api::Pod>>& pods) {
  WriteBatch pass{events_, {}, {}, {}};
  for (const auto& pod : pods) {
    if (PodTerminal(pod.value)) {
      pass.DeletePod(pod);
    } else {
      pass.StopPod(pod, kStopJobDeleted, "its job was deleted");
    }
  }
  return pass.Commit(store_);
}

}  // namespace strata::controller
