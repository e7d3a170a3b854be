#include "controller/job_controller.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <tuple>

#include "api/job_roles.h"
#include "cluster/indexes.h"
#include "controller/training_pod.h"

namespace strata::controller {

namespace {

using PodList = std::vector<cluster::Stored<api::Pod>>;

bool AllTerminal(const PodList& pods) {
  return std::all_of(pods.begin(), pods.end(),
                     [](const auto& pod) { return api::PodTerminal(pod.value); });
}

bool AnyStopped(const PodList& pods, std::string_view reason) {
  return std::any_of(pods.begin(), pods.end(),
                     [&](const auto& pod) { return api::StopRequested(pod.value) == reason; });
}

// The pod that failed first on its own (not because a controller stopped it): the one whose
// failure was written first, so that a knock-on exit (a rank that lost its peer) is not blamed.
// The pod that failed first: by when it finished (node agents record when its failing process
// ended), then by when it was written; so a pod whose workers failed only because another
// pod's did is not the one named.
const cluster::Stored<api::Pod>* FirstFailure(const PodList& pods) {
  const cluster::Stored<api::Pod>* first = nullptr;
  auto key = [](const cluster::Stored<api::Pod>& pod) {
    const std::string* finished = api::PodAnnotation(pod.value, api::kFinishedAtAnnotation);
    std::optional<TimePoint> at = finished != nullptr ? ParseRfc3339(*finished) : std::nullopt;
    return std::tuple(!at.has_value(), at.value_or(TimePoint()), pod.raw.resource_version);
  };
  for (const auto& pod : pods) {
    if (pod.value.status.phase != api::PodPhase::kFailed || !api::StopRequested(pod.value).empty())
      continue;
    if (first == nullptr || key(pod) < key(*first)) first = &pod;
  }
  return first;
}

std::string DescribeFailure(const api::Pod& pod) {
  std::string out = fmt::format("pod {} failed", pod.metadata.name);
  if (pod.status.exit_code) out += fmt::format(" with exit code {}", *pod.status.exit_code);
  if (!pod.status.reason.empty()) out += fmt::format(" ({})", pod.status.reason);
  return out;
}

// What made the job succeed, in a sentence.
std::string SuccessMessage(const api::JobSpec& spec, const std::vector<api::JobRole>& roles,
                           const std::vector<api::RoleProgress>& progress) {
  if (spec.roles.empty()) return fmt::format("all {} pod(s) succeeded", spec.replicas);
  std::vector<std::string> done;
  for (size_t r = 0; r < roles.size(); ++r) {
    if (progress[r] == api::RoleProgress::kComplete) done.push_back(roles[r].name);
  }
  return fmt::format("every pod of role(s) {} succeeded", fmt::join(done, ", "));
}

store::ObjectKey JobKey(const std::string& namespace_name, const std::string& name) {
  return {"Job", namespace_name, name};
}

}  // namespace

JobController::JobController(store::Store& store, cluster::Cache& cache, const Clock& clock,
                             JobControllerOptions options)
    : store_(store),
      cache_(cache),
      clock_(clock),
      options_(options),
      events_(store, clock, options.event_repeat_interval) {}

Status JobController::RunOnce() {
  if (Status synced = cache_.Sync(); !synced.ok()) return synced;
  cluster::Changes changes = cache_.ChangesSince(cursor_, {"Job", "Pod"});
  cursor_ = changes.cursor;
  const TimePoint now = clock_.Now();
  std::set<store::ObjectKey> jobs = std::move(retry_);
  retry_.clear();
  if (changes.resync || now >= next_resync_) {
    next_resync_ = now + options_.resync_interval;
    for (const cluster::ObjectRef& job : cache_.List("Job")) jobs.insert(job->raw.key);
    for (const cluster::ObjectRef& pod : cache_.List("Pod")) {
      const api::Pod* value = pod->As<api::Pod>();
      if (value != nullptr && value->spec.owner.kind == "Job") {
        jobs.insert(JobKey(value->metadata.namespace_name, value->spec.owner.name));
      }
    }
  } else {
    for (const cluster::Change& change : changes.changes) {
      if (change.key.kind == "Job") {
        jobs.insert(change.key);
        continue;
      }
      const cluster::ObjectRef& state = change.current ? change.current : change.last;
      const api::Pod* pod = state ? state->As<api::Pod>() : nullptr;
      if (pod != nullptr && pod->spec.owner.kind == "Job") {
        jobs.insert(JobKey(pod->metadata.namespace_name, pod->spec.owner.name));
      }
    }
  }
  Status first;
  for (const store::ObjectKey& key : jobs) {
    Status status = Reconcile(key);
    if (!status.ok()) {
      retry_.insert(key);
      if (first.ok()) first = status;
    }
  }
  return first;
}

Status JobController::Reconcile(const store::ObjectKey& job_key) {
  PodList pods = cluster::StoredOf<api::Pod>(
      cache_.Indexed(cluster::kPodsByOwner,
                     cluster::OwnerIndexValue("Job", job_key.namespace_name, job_key.name)));
  cluster::ObjectRef job = cache_.Get(job_key);
  if (job == nullptr) return RemoveOrphans(pods);
  std::optional<cluster::Stored<api::Job>> stored = cluster::StoredOf<api::Job>(job);
  if (!stored)
    return job->error.ok() ? InternalError(job_key.Describe() + ": not a Job") : job->error;
  return ReconcileJob(*stored, pods);
}

Status JobController::ReconcileJob(const cluster::Stored<api::Job>& job, const PodList& all_pods) {
  const api::JobSpec& spec = job.value.spec;
  const TimePoint now = clock_.Now();
  const std::string stamp = FormatRfc3339(now);
  const api::JobStatus& before = job.value.status;
  api::JobStatus status = before;
  ObjectWriter writer(store_, events_,
                      {"Job", job.raw.key.namespace_name, job.raw.key.name, job.raw.uid});

  // The current run's pods, and those of runs given up.
  const int64_t run = status.placement ? status.placement->run : -1;
  PodList pods, stale;
  for (const auto& pod : all_pods) (PodJobRun(pod.value) == run ? pods : stale).push_back(pod);

  for (const auto& pod : all_pods) {
    std::optional<TimePoint> checkpoint = PodLastCheckpoint(pod.value);
    std::optional<TimePoint> known = ParseRfc3339(status.last_checkpoint_time);
    if (checkpoint && (!known || *checkpoint > *known)) {
      status.last_checkpoint_time = FormatRfc3339(*checkpoint);
    }
  }

  const bool all_terminal = AllTerminal(pods);
  const cluster::Stored<api::Pod>* failure = FirstFailure(pods);
  // How far each role has come; pods of ranks the spec no longer has count for nothing.
  const std::vector<api::JobRole> roles = api::JobRoles(spec);
  std::vector<const api::Pod*> run_pods;
  for (const auto& pod : pods) run_pods.push_back(&pod.value);
  const std::vector<api::RoleProgress> progress = api::RolesProgress(roles, run_pods);
  // Running: every pod of the run has started; those of a role that completed (an initializer)
  // have succeeded.
  const bool all_running =
      !pods.empty() && std::none_of(progress.begin(), progress.end(), [](api::RoleProgress p) {
        return p == api::RoleProgress::kWaiting;
      });
  const bool succeeded = !pods.empty() && api::SuccessReached(spec, roles, progress);
  // What to do to the current run's pods once the status is written.
  std::string_view stop_reason;
  std::string stop_message;
  bool drop_run = false;  // the run is given up: its pods become stale

  if (status.Terminal() || !status.placement) {
    // Nothing runs for the job now (or it is over): its pods, if any, are cleaned up below.
  } else if (succeeded) {
    status.phase = api::JobPhase::kSucceeded;
    status.completion_time = stamp;
    status.reason = "Succeeded";
    status.message = SuccessMessage(spec, roles, progress);
    status.SetCondition("Running", "False", "Succeeded", status.message, now);
    status.SetCondition("Succeeded", "True", "Succeeded", status.message, now);
    writer.Event("Normal", "Succeeded", status.message);
  } else if (AnyStopped(pods, api::kStopPreempted)) {
    stop_reason = api::kStopPreempted;
    stop_message = "the job was preempted";
    if (all_terminal) {
      drop_run = true;
      status.preemption_count += 1;
      status.phase = api::JobPhase::kPending;
      status.reason = "Preempted";
      status.message = "every pod stopped after preemption; waiting to be scheduled again";
      status.SetCondition("Running", "False", "Preempted", status.message, now);
      writer.Event("Normal", "Requeued", status.message);
    }
  } else if (AnyStopped(pods, api::kStopEvicted)) {
    // A drained node's pods: the job runs again elsewhere, as after a preemption, and neither a
    // restart nor a preemption is counted.
    stop_reason = api::kStopEvicted;
    stop_message = "a pod of the job was evicted from its node";
    if (all_terminal) {
      drop_run = true;
      status.phase = api::JobPhase::kPending;
      status.reason = "Evicted";
      status.message = "every pod stopped after an eviction; waiting to be scheduled again";
      status.SetCondition("Running", "False", "Evicted", status.message, now);
      writer.Event("Normal", "Requeued", status.message);
    }
  } else if (failure != nullptr || AnyStopped(pods, api::kStopGroupRestart)) {
    const bool restarting = AnyStopped(pods, api::kStopGroupRestart);
    if (!restarting && status.restart_count >= spec.max_restarts) {
      status.phase = api::JobPhase::kFailed;
      status.completion_time = stamp;
      status.reason = "MaxRestartsExceeded";
      status.message =
          fmt::format("{} after {} restart(s); maxRestarts is {}", DescribeFailure(failure->value),
                      status.restart_count, spec.max_restarts);
      status.SetCondition("Running", "False", "Failed", status.message, now);
      status.SetCondition("Failed", "True", "MaxRestartsExceeded", status.message, now);
      writer.Event("Warning", "Failed", status.message);
    } else {
      if (!restarting && failure != nullptr) {
        status.phase = api::JobPhase::kRestarting;
        status.reason = "PodFailed";
        status.message = fmt::format("{}; restarting every pod (restart {} of {})",
                                     DescribeFailure(failure->value), status.restart_count + 1,
                                     spec.max_restarts);
        status.SetCondition("Running", "False", "Restarting", status.message, now);
        status.SetCondition("Restarting", "True", "PodFailed", status.message, now);
        writer.Event("Warning", "Restarting", status.message);
      }
      stop_reason = api::kStopGroupRestart;
      stop_message = "another pod of the job failed; restarting the group";
      if (all_terminal) {
        drop_run = true;
        status.restart_count += 1;
      }
    }
  } else if (all_running && status.phase != api::JobPhase::kRunning) {
    status.phase = api::JobPhase::kRunning;
    if (status.start_time.empty()) status.start_time = stamp;
    status.reason.clear();
    status.message = fmt::format("all {} pod(s) running", pods.size());
    status.SetCondition("Running", "True", "Running", status.message, now);
    if (status.FindCondition("Restarting") != nullptr) {
      status.SetCondition("Restarting", "False", "Running", status.message, now);
    }
    writer.Event("Normal", "Running",
                 fmt::format("{} (restart count {})", status.message, status.restart_count));
  }
  if (drop_run) {
    status.placement.reset();
    stale.insert(stale.end(), pods.begin(), pods.end());
    pods.clear();
  }

  // The commit point: everything below follows from the status as written here.
  if (status != before) writer.Update(job, api::Job{job.value.metadata, job.value.spec, status});

  if (status.Terminal()) {
    const std::string_view end_reason =
        status.phase == api::JobPhase::kSucceeded ? api::kStopJobFinished : api::kStopJobFailed;
    for (const auto& pod : all_pods) {
      if (api::PodTerminal(pod.value)) {
        const std::string stopped = api::StopRequested(pod.value);
        const bool stopped_at_end =
            stopped == api::kStopJobFinished || stopped == api::kStopJobFailed;
        if (spec.clean_pod_policy == "All" ||
            (spec.clean_pod_policy == "Running" && stopped_at_end) || PodJobRun(pod.value) != run) {
          writer.Delete(pod);
        }
      } else {
        writer.StopPod(pod, end_reason, "the job " + std::string(api::JobPhaseName(status.phase)));
      }
    }
    return writer.status();
  }
  if (!stop_reason.empty()) {
    for (const auto& pod : pods) writer.StopPod(pod, stop_reason, stop_message);
  }
  // Pods of a run given up: stopped, then deleted once terminal. Their stop reason is the one
  // the run was given up for.
  const std::string_view stale_reason = status.reason == "Preempted" ? api::kStopPreempted
                                        : status.reason == "Evicted" ? api::kStopEvicted
                                                                     : api::kStopGroupRestart;
  for (const auto& pod : stale) {
    if (api::PodTerminal(pod.value)) {
      writer.Delete(pod);
    } else {
      writer.StopPod(pod, stale_reason, "its run of the job was given up");
    }
  }
  return writer.status();
}

Status JobController::RemoveOrphans(const PodList& pods) {
  ObjectWriter writer(store_, events_, {});
  for (const auto& pod : pods) {
    if (api::PodTerminal(pod.value)) {
      writer.Delete(pod);
    } else {
      writer.StopPod(pod, api::kStopJobDeleted, "its job was deleted");
    }
  }
  return writer.status();
}

}  // namespace strata::controller
