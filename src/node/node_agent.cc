#include "node/node_agent.h"

#include <fmt/format.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <string.h>

#include <cstdlib>
#include <thread>

#include "api/encode.h"
#include "api/manifest.h"
#include "node/pod_contract.h"
#include "node/torchrun_env.h"

namespace strata::node {
namespace {

std::string SignalName(int signal) {
  const char* abbrev = sigabbrev_np(signal);
  return abbrev == nullptr ? std::to_string(signal) : std::string("SIG") + abbrev;
}

// A sentence about how `process` ended; empty when it succeeded or still runs.
std::string DescribeFailure(const ProcessStatus& process) {
  if (process.state == ProcessState::kLost) {
    return process.name + " was gone when the agent restarted";
  }
  if (process.state != ProcessState::kExited || process.Succeeded()) return "";
  if (process.exit_code)
    return fmt::format("{} exited with code {}", process.name, *process.exit_code);
  if (process.signal) {
    return fmt::format("{} was killed by signal {} ({})", process.name, *process.signal,
                       SignalName(*process.signal));
  }
  return process.name + " ended while the agent was away; its exit status is unknown";
}

// The first process that ended without success, or nullptr.
const ProcessStatus* FirstFailure(const PodStatus& status) {
  for (const ProcessStatus& process : status.processes) {
    if (!DescribeFailure(process).empty()) return &process;
  }
  return nullptr;
}

// Shell's convention: the exit code, or 128 + the signal.
int64_t ExitCode(const ProcessStatus& process) {
  if (process.exit_code) return *process.exit_code;
  if (process.signal) return 128 + *process.signal;
  return 255;
}

void MarkFailed(api::Pod& pod, std::string reason, std::string message,
                std::optional<int64_t> exit_code, const std::string& now) {
  pod.status.phase = "Failed";
  pod.status.reason = std::move(reason);
  pod.status.message = std::move(message);
  pod.status.exit_code = exit_code;
  pod.metadata.annotations.emplace(kFinishedAtAnnotation, now);
}

}  // namespace

// What one pass found: the pods bound here, and why the agent stops some of them.
struct NodeAgent::Pass {
  std::vector<std::pair<store::Object, api::Pod>> pods;
  // Pods whose processes the pass stops because one of them failed: uid -> that process.
  std::map<std::string, ProcessStatus> failed_first;
  std::set<std::string> checkpoint_dirs_in_use;
  Status first_error;

  void Note(Status status) {
    if (first_error.ok() && !status.ok()) first_error = std::move(status);
  }
};

NodeAgent::NodeAgent(store::Store& store, NodeRuntime& runtime, const Clock& clock,
                     NodeAgentOptions options)
    : store_(store),
      runtime_(runtime),
      clock_(clock),
      options_(std::move(options)),
      node_names_(options_.node_names.begin(), options_.node_names.end()) {}

NodeAgent::~NodeAgent() = default;

Environment DefaultBaseEnvironment() {
  Environment env;
  for (const char* name : {"PATH", "HOME", "LANG", "USER", "TMPDIR", "PYTHONPATH"}) {
    if (const char* value = std::getenv(name)) env[name] = value;
  }
  if (env.find("PATH") == env.end()) env["PATH"] = "/usr/local/bin:/usr/bin:/bin";
  return env;
}

std::string NodeAgent::CheckpointDir(const std::string& namespace_name, const std::string& job_name,
                                     const std::string& job_dir) const {
  if (!job_dir.empty() && job_dir.front() == '/') return job_dir;
  std::string dir = fmt::format("{}/checkpoints/{}/{}", options_.data_dir,
                                namespace_name.empty() ? "default" : namespace_name, job_name);
  return job_dir.empty() ? dir : dir + "/" + job_dir;
}

Status NodeAgent::RunOnce() {
  if (!adopted_) {
    for (const PodStatus& status : runtime_.Adopt()) known_.insert(status.uid);
    adopted_ = true;
  }
  store::Selection pods;
  pods.kind = "Pod";
  Result<store::ListResult> listed = store_.List(pods);
  if (!listed) return listed.error();
  Pass pass;
  std::set<std::string> stored_uids;
  for (store::Object& raw : listed->items) {
    stored_uids.insert(raw.uid);
    Result<api::Object> decoded = api::DecodeObject(raw.body);
    if (!decoded) {
      pass.Note(decoded.error().WithPrefix(raw.key.Describe()));
      continue;
    }
    api::Pod* pod = decoded->As<api::Pod>();
    if (pod == nullptr || node_names_.count(pod->spec.node_name) == 0) continue;
    pass.pods.emplace_back(std::move(raw), std::move(*pod));
  }

  // Everything that must stop stops at once, so a group's grace periods overlap.
  std::vector<std::string> stopping;
  for (const std::string& uid : known_) {
    if (stored_uids.count(uid) == 0) stopping.push_back(uid);
  }
  for (const auto& [raw, pod] : pass.pods) {
    if (known_.count(raw.uid) == 0) continue;
    Result<PodStatus> status = runtime_.GetStatus(raw.uid);
    if (!status || !status->Running()) continue;
    if (PodTerminal(pod) || !StopRequested(pod).empty()) {
      stopping.push_back(raw.uid);
    } else if (const ProcessStatus* failed = FirstFailure(*status)) {
      // torchrun's rule: one worker failing stops the pod's others.
      pass.failed_first[raw.uid] = *failed;
      stopping.push_back(raw.uid);
    }
  }
  StopAll(stopping);
  for (const std::string& uid : known_) {
    if (stored_uids.count(uid) == 0 && runtime_.Forget(uid).ok()) {
      spdlog::info("node agent: stopped the processes of deleted pod {}", uid);
    }
  }
  std::erase_if(known_, [&](const std::string& uid) { return stored_uids.count(uid) == 0; });

  for (auto& [raw, pod] : pass.pods) pass.Note(Reconcile(pass, raw, pod));

  std::erase_if(watchers_, [&](const auto& entry) {
    return pass.checkpoint_dirs_in_use.count(entry.first) == 0;
  });
  return pass.first_error;
}

void NodeAgent::StopAll(const std::vector<std::string>& uids) {
  std::vector<std::thread> stoppers;
  stoppers.reserve(uids.size());
  for (const std::string& uid : uids) {
    stoppers.emplace_back([this, uid] {
      Status stopped = runtime_.Stop(uid, options_.stop_grace);
      if (!stopped.ok()) spdlog::warn("node agent: stopping pod {}: {}", uid, stopped.ToString());
    });
  }
  for (std::thread& stopper : stoppers) stopper.join();
}

Status NodeAgent::Reconcile(Pass& pass, const store::Object& raw, const api::Pod& pod) {
  const std::string now = FormatRfc3339(clock_.Now());
  const std::string stop = StopRequested(pod);
  api::Pod after = pod;
  Result<PodStatus> status = known_.count(raw.uid) > 0
                                 ? runtime_.GetStatus(raw.uid)
                                 : Result<PodStatus>(Err(NotFoundError("not started here")));
  if (PodTerminal(pod)) {
    if (status && runtime_.Forget(raw.uid).ok()) known_.erase(raw.uid);
    return Status::Ok();
  }
  if (!status) {
    if (!stop.empty()) {
      const std::string* why = PodAnnotation(pod, kStopMessageAnnotation);
      MarkFailed(after, stop, why != nullptr ? *why : "stopped before its processes started",
                 std::nullopt, now);
    } else if (pod.status.phase == "Running") {
      MarkFailed(after, "ProcessesLost",
                 "the pod's processes were gone when the node agent restarted", std::nullopt, now);
    } else {
      Result<PodSpec> spec = BuildPodSpec(raw, pod);
      Status started = spec ? runtime_.Start(*spec) : spec.error();
      if (!started.ok()) {
        MarkFailed(after, "StartError", started.message(), std::nullopt, now);
      } else {
        known_.insert(raw.uid);
        after.status.phase = "Running";
        after.status.reason.clear();
        after.status.message.clear();
        after.metadata.annotations[kStartedAtAnnotation] = now;
      }
    }
  } else if (status->Running()) {
    after.status.phase = "Running";
    after.metadata.annotations.emplace(kStartedAtAnnotation, now);
  } else if (status->Succeeded()) {
    after.status.phase = "Succeeded";
    after.status.exit_code = 0;
    after.status.reason = "Completed";
    after.status.message = "every process exited with code 0";
    after.metadata.annotations.emplace(kFinishedAtAnnotation, now);
  } else {
    // The process that failed first, when the pass stopped the others because of it.
    auto first = pass.failed_first.find(raw.uid);
    const ProcessStatus* failed =
        first != pass.failed_first.end() ? &first->second : FirstFailure(*status);
    std::string detail = failed == nullptr ? "its processes failed" : DescribeFailure(*failed);
    std::string reason = !stop.empty() ? stop
                         : failed != nullptr && failed->state == ProcessState::kLost
                             ? "ProcessesLost"
                             : "Error";
    if (!stop.empty()) {
      const std::string* why = PodAnnotation(pod, kStopMessageAnnotation);
      if (why != nullptr && !why->empty()) detail = *why + "; " + detail;
    }
    std::optional<int64_t> code;
    if (failed != nullptr) code = ExitCode(*failed);
    MarkFailed(after, std::move(reason), std::move(detail), code, now);
  }
  if (after.status.phase == "Running" && pod.spec.owner.kind == "Job") {
    ReportCheckpoint(pass, pod, after);
  }
  return Write(raw, pod, after);
}

Result<PodSpec> NodeAgent::BuildPodSpec(const store::Object& raw, const api::Pod& pod) {
  PodSpec spec;
  spec.uid = raw.uid;
  std::vector<std::string> argv = pod.spec.template_.command;
  argv.insert(argv.end(), pod.spec.template_.args.begin(), pod.spec.template_.args.end());
  if (pod.spec.owner.kind == "Job") {
    ASSIGN_OR_RETURN(TrainingPod training, TrainingPodFromPod(pod));
    training.checkpoint_dir =
        CheckpointDir(pod.metadata.namespace_name, training.job_name, training.checkpoint_dir);
    ASSIGN_OR_RETURN(std::vector<Environment> workers, BuildWorkerEnvironments(training));
    for (Environment& env : workers) {
      env.insert(options_.base_env.begin(), options_.base_env.end());
      if (!options_.api_url.empty()) {
        env["STRATA_CHECKPOINT_URL"] =
            fmt::format("{}/api/v1/namespaces/{}/pods/{}/checkpoint", options_.api_url,
                        pod.metadata.namespace_name, pod.metadata.name);
      }
      spec.processes.push_back(
          ProcessSpec{"rank-" + env["RANK"], argv, std::move(env), pod.spec.template_.working_dir});
    }
    // Watch from the start, so that the first checkpoint is seen.
    Result<CheckpointWatcher*> watcher = WatchCheckpoints(training.checkpoint_dir);
    if (!watcher) return Err(watcher.error());
  } else {
    Environment env = options_.base_env;
    for (size_t i = 0; i < pod.spec.template_.env.size(); ++i) {
      const api::EnvVar& var = pod.spec.template_.env[i];
      if (IsReservedEnvName(var.name)) {
        return Err(InvalidArgumentError(
            fmt::format("spec.template.env[{}].name \"{}\" is reserved", i, var.name)));
      }
      env[var.name] = var.value;
    }
    for (const api::AssignedGpu& gpu : pod.spec.assigned_gpus) {
      spec.gpu_indices.push_back(static_cast<int>(gpu.index));
    }
    spec.processes.push_back(
        ProcessSpec{"main", std::move(argv), std::move(env), pod.spec.template_.working_dir});
  }
  return spec;
}

Result<CheckpointWatcher*> NodeAgent::WatchCheckpoints(const std::string& dir) {
  auto found = watchers_.find(dir);
  if (found != watchers_.end()) return found->second.get();
  ASSIGN_OR_RETURN(std::unique_ptr<CheckpointWatcher> watcher,
                   CheckpointWatcher::Create(dir, &clock_));
  return watchers_.emplace(dir, std::move(watcher)).first->second.get();
}

void NodeAgent::ReportCheckpoint(Pass& pass, const api::Pod& pod, api::Pod& after) {
  const std::string* job_dir = PodAnnotation(pod, kCheckpointDirAnnotation);
  std::string dir = CheckpointDir(pod.metadata.namespace_name, pod.spec.owner.name,
                                  job_dir == nullptr ? "" : *job_dir);
  pass.checkpoint_dirs_in_use.insert(dir);
  Result<CheckpointWatcher*> watcher = WatchCheckpoints(dir);
  if (!watcher) {
    pass.Note(watcher.error());
    return;
  }
  std::optional<TimePoint> last = (*watcher)->LastCheckpoint();
  if (!last) return;
  // A checkpoint reported through the API may be newer than the directory's; both are
  // FormatRfc3339's fixed-width UTC text, so the later one is the greater string.
  std::string seen = FormatRfc3339(*last);
  const std::string* reported = PodAnnotation(pod, kLastCheckpointAnnotation);
  if (reported == nullptr || *reported < seen) {
    after.metadata.annotations[kLastCheckpointAnnotation] = std::move(seen);
  }
}

Status NodeAgent::Write(const store::Object& raw, const api::Pod& before, const api::Pod& after) {
  if (before == after) return Status::Ok();
  store::Object update = raw;
  update.body = api::EncodeObject(api::Object(after));
  Result<store::Object> written = store_.Update(std::move(update));
  if (!written) return written.error().WithPrefix(raw.key.Describe());
  return Status::Ok();
}

}  // namespace strata::node
