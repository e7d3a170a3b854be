#include "node/node_agent.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <string.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <thread>

#include "api/encode.h"
#include "api/manifest.h"
#include "api/pod_contract.h"
#include "api/torchrun_env.h"
#include "cluster/indexes.h"
#include "node/engine_endpoint.h"
#include "node/env_references.h"
#include "node/env_resolution.h"
#include "node/foreign_pod.h"
#include "node/node_agent_pass.h"
#include "node/pod_identity.h"

namespace strata::node {
namespace {

std::string SignalName(int signal) {
  const char* abbrev = sigabbrev_np(signal);
  return abbrev == nullptr ? std::to_string(signal) : std::string("SIG") + abbrev;
}

// A pod's IP: its node's address when that is an IP address (pods share their node's network);
// empty for a node known by name only.
std::string PodIp(const api::Node* node) {
  if (node == nullptr) return "";
  const std::string address = api::NodeAddress(*node);
  unsigned char parsed[sizeof(in6_addr)];
  if (inet_pton(AF_INET, address.c_str(), parsed) == 1 ||
      inet_pton(AF_INET6, address.c_str(), parsed) == 1) {
    return address;
  }
  return "";
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
    return fmt::format("{} was {} by signal {} ({})", process.name,
                       process.fenced ? "stopped (fenced: the node's lease with the control plane "
                                        "lapsed)"
                                      : "killed",
                       *process.signal, SignalName(*process.signal));
  }
  return process.name + " ended while the agent was away; its exit status is unknown";
}

// The process that failed first, or nullptr: by when it ended, so that the process whose
// failure brought the others down is named rather than one that failed because of it. Those
// whose end time is unknown (lost) come after the others, in the pod's order.
const ProcessStatus* FirstFailure(const PodStatus& status) {
  const ProcessStatus* first = nullptr;
  auto key = [](const ProcessStatus& process) {
    return std::pair(process.end_time_ns == 0, process.end_time_ns);
  };
  for (const ProcessStatus& process : status.processes) {
    if (DescribeFailure(process).empty()) continue;
    if (first == nullptr || key(process) < key(*first)) first = &process;
  }
  return first;
}

// When `process` ended, as an RFC 3339 time to the microsecond; `fallback` when unknown.
std::string EndTime(const ProcessStatus* process, const std::string& fallback) {
  if (process == nullptr || process->end_time_ns == 0) return fallback;
  return FormatRfc3339Micro(TimePoint(
      std::chrono::duration_cast<Duration>(std::chrono::nanoseconds(process->end_time_ns))));
}

// Shell's convention: the exit code, or 128 + the signal.
int64_t ExitCode(const ProcessStatus& process) {
  if (process.exit_code) return *process.exit_code;
  if (process.signal) return 128 + *process.signal;
  return 255;
}

void MarkFailed(api::Pod& pod, std::string reason, std::string message,
                std::optional<int64_t> exit_code, const std::string& now) {
  pod.status.phase = api::PodPhase::kFailed;
  pod.status.reason = std::move(reason);
  pod.status.message = std::move(message);
  pod.status.exit_code = exit_code;
  pod.metadata.annotations.emplace(api::kFinishedAtAnnotation, now);
}

bool IsReplica(const api::Pod& pod) { return pod.spec.owner.kind == "Service"; }

}  // namespace

NodeAgent::NodeAgent(store::Store& store, cluster::Cache& cache, NodeRuntime& runtime,
                     const Clock& clock, NodeAgentOptions options)
    : store_(store),
      cache_(cache),
      runtime_(runtime),
      clock_(clock),
      options_(std::move(options)),
      node_names_(options_.node_names.begin(), options_.node_names.end()),
      gpu_activity_(options_.gpu_activity_window),
      events_(store, clock, std::chrono::seconds(10)) {
  if (!options_.pod_cidr.empty()) {
    Result<PodCidr> cidr = PodCidr::Parse(options_.pod_cidr);
    if (cidr) {
      pod_cidr_ = *cidr;
    } else {
      spdlog::error("node agent: {}; pods share their node's address", cidr.error().ToString());
    }
  }
}

NodeAgent::~NodeAgent() = default;

api::Environment DefaultBaseEnvironment() {
  api::Environment env;
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
    if (geteuid() == 0) {
      // Pods run as other users; the control plane's own files stay out of their reach.
      if (Status opened = OpenDataDirToPods(options_.data_dir); !opened.ok()) {
        spdlog::warn("node agent: {}", opened.ToString());
      }
    }
    for (const PodStatus& status : runtime_.Adopt()) known_.insert(status.uid);
    adopted_ = true;
  }
  if (Status synced = cache_.Sync(); !synced.ok()) return synced;
  Pass pass;
  // The pods bound to this agent's nodes (a pod never moves to another node).
  std::set<std::string> stored_uids;
  for (const std::string& node : node_names_) {
    for (const cluster::ObjectRef& ref : cache_.Indexed(cluster::kPodsByNode, node)) {
      stored_uids.insert(ref->raw.uid);
      const api::Pod* pod = ref->As<api::Pod>();
      if (pod == nullptr) {
        pass.Note(ref->error);
        continue;
      }
      pass.pods.emplace_back(ref->raw, *pod);
    }
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
    if (api::PodTerminal(pod) || !api::StopRequested(pod).empty()) {
      stopping.push_back(raw.uid);
      // A deleted foreign pod's grace is its deletion's.
      if (const std::string* grace = api::PodAnnotation(pod, api::kForeignDeletingAnnotation)) {
        pass.kill_grace[raw.uid] = std::chrono::seconds(std::atoll(grace->c_str()));
      }
    } else if (const ProcessStatus* failed = FirstFailure(*status)) {
      // torchrun's rule: one worker failing stops the pod's others.
      pass.failed_first[raw.uid] = *failed;
      stopping.push_back(raw.uid);
    }
  }
  RunProbes(pass);
  for (const auto& [uid, why] : pass.probe_killed) stopping.push_back(uid);
  StopAll(stopping, pass.kill_grace);
  for (const std::string& uid : known_) {
    if (stored_uids.count(uid) == 0 && runtime_.Forget(uid).ok()) {
      spdlog::info("node agent: stopped the processes of deleted pod {}", uid);
    }
  }
  std::erase_if(known_, [&](const std::string& uid) { return stored_uids.count(uid) == 0; });
  std::erase_if(pod_ips_, [&](const auto& entry) { return stored_uids.count(entry.first) == 0; });
  std::erase_if(restart_at_,
                [&](const auto& entry) { return stored_uids.count(entry.first) == 0; });
  gpus_.Retain(stored_uids);

  for (const auto& [raw, pod] : pass.pods) {
    Result<int> port = IsReplica(pod) && !api::PodTerminal(pod) ? api::RecordedEnginePort(pod) : 0;
    if (port && *port != 0) pass.engine_ports.insert(*port);
  }
  ProbeReadiness(pass);
  RestoreGpus(pass);
  for (auto& [raw, pod] : pass.pods) pass.Note(Reconcile(pass, raw, pod));

  if (checkpoints_ != nullptr) {
    for (const std::string& dir : checkpoints_->Watched()) {
      if (pass.checkpoint_dirs_in_use.count(dir) == 0) checkpoints_->Unwatch(dir);
    }
  }
  gpu_activity_.Retain(known_);
  return pass.first_error;
}

ProbeTarget NodeAgent::ProbeTargetOf(const std::string& uid, const api::Pod& pod) {
  ProbeTarget target;
  const api::ProcessTemplate& process = pod.spec.template_;
  Result<int> port = IsReplica(pod) ? api::RecordedEnginePort(pod) : 0;
  target.own_port = port ? *port : 0;
  Result<api::Environment> env =
      TemplateEnvironment(options_.base_env, process.env, ReservedEnvNames(pod));
  target.env = env ? *env : options_.base_env;
  if (target.own_port != 0) {
    for (const char* name : {"PORT", "STRATA_PORT"}) target.env[name] = std::to_string(*port);
  }
  target.working_dir = process.working_dir;
  if (auto own = pod_ips_.find(uid); own != pod_ips_.end()) target.host = own->second;
  Result<std::optional<PodSpec::RunAs>> identity =
      PodIdentity(process.security_context, geteuid(), options_.allow_root_pods);
  if (identity) target.run_as = *identity;
  return target;
}

void NodeAgent::RunProbes(Pass& pass) {
  std::set<std::string> probing;
  for (const auto& [raw, pod] : pass.pods) {
    const api::ProcessTemplate& process = pod.spec.template_;
    if (!process.liveness_probe && !process.readiness_probe && !process.startup_probe) continue;
    if (known_.count(raw.uid) == 0 || api::PodTerminal(pod) || !api::StopRequested(pod).empty() ||
        pass.failed_first.count(raw.uid) > 0) {
      continue;
    }
    Result<PodStatus> status = runtime_.GetStatus(raw.uid);
    if (!status || !status->Running()) continue;
    probing.insert(raw.uid);
    std::unique_ptr<PodProber>& prober = probers_[raw.uid];
    if (prober == nullptr) {
      prober = std::make_unique<PodProber>(process, ProbeTargetOf(raw.uid, pod), clock_.Now());
    }
    ProbeVerdict verdict = prober->Tick(clock_.Now());
    const cluster::EventSubject subject{"Pod", pod.metadata.namespace_name, pod.metadata.name,
                                        raw.uid};
    for (const std::string& failure : verdict.failures) {
      (void)events_.Record(subject, "Warning", "Unhealthy", failure);
    }
    if (prober->has_readiness()) pass.probed_ready[raw.uid] = verdict.ready;
    if (verdict.kill) {
      spdlog::info("node agent: pod {}/{}: {}; stopping it", pod.metadata.namespace_name,
                   pod.metadata.name, *verdict.kill);
      const std::string probe = verdict.kill->rfind("Startup", 0) == 0 ? "startup" : "liveness";
      (void)events_.Record(subject, "Normal", "Killing",
                           fmt::format("Container {} failed {} probe, will be restarted",
                                       api::kPodContainerName, probe));
      pass.probe_killed[raw.uid] = *verdict.kill;
      if (verdict.kill_grace_seconds) {
        pass.kill_grace[raw.uid] = std::chrono::seconds(*verdict.kill_grace_seconds);
      }
    }
  }
  std::erase_if(probers_, [&](const auto& entry) {
    return probing.count(entry.first) == 0 || pass.probe_killed.count(entry.first) > 0;
  });
}

void NodeAgent::ProbeReadiness(Pass& pass) {
  std::map<int, std::string> leaders;  // port -> uid
  for (const auto& [raw, pod] : pass.pods) {
    Result<int> port = api::RecordedEnginePort(pod);
    if (!IsReplica(pod) || api::PodTerminal(pod) || !port || *port == 0) continue;
    if (pod.spec.owner.rank != 0 || pod.status.phase != api::PodPhase::kRunning ||
        known_.count(raw.uid) == 0 || api::PodAnnotation(pod, api::kReadyAtAnnotation) != nullptr ||
        !api::StopRequested(pod).empty() || pod.spec.template_.readiness_probe) {
      continue;
    }
    leaders.emplace(*port, raw.uid);
  }
  std::vector<int> ports;
  for (const auto& [port, uid] : leaders) ports.push_back(port);
  for (int port : ProbeHealth(ports, options_.readiness_timeout)) pass.ready.insert(leaders[port]);
}

const api::Node* NodeAgent::FindNode(Pass& pass, const std::string& name) {
  auto found = pass.nodes.find(name);
  if (found == pass.nodes.end()) {
    std::optional<api::Node> node;
    cluster::ObjectRef ref = cache_.Get({"Node", "", name});
    if (const api::Node* value = ref ? ref->As<api::Node>() : nullptr) node = *value;
    found = pass.nodes.emplace(name, std::move(node)).first;
  }
  return found->second ? &*found->second : nullptr;
}

Result<store::Object> NodeAgent::RecordEnginePort(Pass& pass, const store::Object& raw,
                                                  const api::Pod& pod) {
  ASSIGN_OR_RETURN(int port, PickFreePort(pass.engine_ports));
  pass.engine_ports.insert(port);
  api::Pod annotated = pod;
  annotated.metadata.annotations[api::kEnginePortAnnotation] = std::to_string(port);
  if (pod.spec.owner.rank == 0) {
    const api::Node* node = FindNode(pass, pod.spec.node_name);
    std::string address = node != nullptr ? api::NodeAddress(*node) : pod.spec.node_name;
    annotated.metadata.annotations[api::kEndpointAnnotation] = fmt::format("{}:{}", address, port);
  }
  store::Object update = raw;
  update.body = api::EncodeObject(api::Object(annotated));
  Result<store::Object> written = store_.Update(std::move(update));
  if (!written) return Err(written.error().WithPrefix(raw.key.Describe()));
  return written;
}

void NodeAgent::StopEverything() {
  StopAll(std::vector<std::string>(known_.begin(), known_.end()));
  for (const std::string& uid : known_) (void)runtime_.Forget(uid);
  known_.clear();
}

std::string NodeAgent::PodIpOf(Pass& pass, const std::string& uid, const api::Pod& pod) {
  if (!IsForeignPod(pod) || !pod_cidr_) return PodIp(FindNode(pass, pod.spec.node_name));
  if (auto own = pod_ips_.find(uid); own != pod_ips_.end()) return own->second;
  // One it was given before (by this agent before a restart): kept.
  if (!pod.status.pod_ip.empty() && pod_cidr_->Contains(pod.status.pod_ip)) {
    return pod_ips_[uid] = pod.status.pod_ip;
  }
  std::set<std::string> used;
  for (const auto& [raw, other] : pass.pods) {
    if (!api::PodTerminal(other) && !other.status.pod_ip.empty()) used.insert(other.status.pod_ip);
  }
  for (const auto& [other, ip] : pod_ips_) used.insert(ip);
  Result<std::string> picked = pod_cidr_->Pick(used);
  if (!picked) {
    pass.Note(picked.error());
    return "";
  }
  return pod_ips_[uid] = *picked;
}

Status NodeAgent::FinishDeletion(const store::Object& raw, const api::Pod& pod) {
  if (known_.count(raw.uid) > 0) {
    Result<PodStatus> status = runtime_.GetStatus(raw.uid);
    if (status && status->Running()) return Status::Ok();  // still stopping
    (void)runtime_.Forget(raw.uid);
    known_.erase(raw.uid);
  }
  gpus_.Release(raw.uid);
  store::Object gone;
  gone.key = raw.key;
  gone.uid = raw.uid;
  Result<std::vector<store::Object>> deleted =
      store_.Apply({store::Write{store::WriteOp::kDelete, std::move(gone)}});
  if (!deleted && deleted.error().code() != StatusCode::kNotFound) {
    return deleted.error().WithPrefix(raw.key.Describe());
  }
  spdlog::info("node agent: pod {}/{} deleted: its processes have stopped",
               pod.metadata.namespace_name, pod.metadata.name);
  return Status::Ok();
}

void NodeAgent::StopAll(const std::vector<std::string>& uids,
                        const std::map<std::string, Duration>& grace) {
  std::vector<std::thread> stoppers;
  stoppers.reserve(uids.size());
  for (const std::string& uid : uids) {
    auto own = grace.find(uid);
    const Duration wait = own != grace.end() ? own->second : options_.stop_grace;
    stoppers.emplace_back([this, uid, wait] {
      Status stopped = runtime_.Stop(uid, wait);
      if (!stopped.ok()) spdlog::warn("node agent: stopping pod {}: {}", uid, stopped.ToString());
    });
  }
  for (std::thread& stopper : stoppers) stopper.join();
}

Status NodeAgent::Reconcile(Pass& pass, const store::Object& raw, const api::Pod& pod) {
  const std::string now = FormatRfc3339(clock_.Now());
  const std::string stop = api::StopRequested(pod);
  api::Pod after = pod;
  Result<PodStatus> status = known_.count(raw.uid) > 0
                                 ? runtime_.GetStatus(raw.uid)
                                 : Result<PodStatus>(Err(NotFoundError("not started here")));
  if (IsForeignPod(pod) && api::PodAnnotation(pod, api::kForeignDeletingAnnotation) != nullptr) {
    return FinishDeletion(raw, pod);
  }
  if (api::PodTerminal(pod)) {
    if (status && runtime_.Forget(raw.uid).ok()) known_.erase(raw.uid);
    if (!status || !status->Running()) gpus_.Release(raw.uid);
    return Status::Ok();
  }
  const cluster::EventSubject subject{"Pod", pod.metadata.namespace_name, pod.metadata.name,
                                      raw.uid};
  if (const std::string* why = api::PodAnnotation(pod, api::kCannotRunAnnotation)) {
    // Never left pending: a container the agent cannot run fails the pod, saying why.
    MarkFailed(after, api::kCannotRunReason, *why, std::nullopt, now);
    Status recorded = events_.Record(subject, "Warning", "Failed", *why);
    if (!recorded.ok()) spdlog::warn("node agent: event: {}", recorded.ToString());
    return Write(raw, pod, after);
  }
  Result<int> recorded_port = IsReplica(pod) ? api::RecordedEnginePort(pod) : 0;
  if (!status && stop.empty() && pod.status.phase != api::PodPhase::kRunning && recorded_port &&
      *recorded_port == 0 && IsReplica(pod)) {
    // The port is on the pod before the engine starts, so a restarted agent reuses it.
    Result<store::Object> recorded = RecordEnginePort(pass, raw, pod);
    if (!recorded) return recorded.error();
    Result<api::Object> decoded = api::DecodeObject(recorded->body);
    if (!decoded) return decoded.error();
    return Reconcile(pass, *recorded, *decoded->As<api::Pod>());
  }
  if (!status) {
    if (!stop.empty()) {
      const std::string* why = api::PodAnnotation(pod, api::kStopMessageAnnotation);
      MarkFailed(after, stop, why != nullptr ? *why : "stopped before its processes started",
                 std::nullopt, now);
    } else if (auto wait = restart_at_.find(raw.uid);
               wait != restart_at_.end() && clock_.Now() < wait->second) {
      return Status::Ok();  // a foreign pod backing off before it starts again
    } else if (Status admitted = AdmitGpus(pass, raw.uid, pod, after); !admitted.ok()) {
      // The kubelet's rejection: never pending, never running without its devices.
      const std::string reason = admitted.code() == StatusCode::kInvalidArgument
                                     ? kGpuShareUnsupportedReason
                                     : kUnexpectedAdmissionError;
      MarkFailed(after, reason, "Pod was rejected: " + admitted.message(), std::nullopt, now);
      (void)events_.Record(subject, "Warning", reason, admitted.message());
    } else if (pod.status.phase == api::PodPhase::kRunning &&
               !RestartsInPlace(pod, /*succeeded=*/false)) {
      MarkFailed(after, "ProcessesLost",
                 "the pod's processes were gone when the node agent restarted", std::nullopt, now);
    } else {
      // The kubelet's rule: what the environment reads (ConfigMaps, Secrets) is read now, and a
      // pod whose reads fail waits, retried every pass, until they succeed.
      const api::Node* node = FindNode(pass, pod.spec.node_name);
      PodPlacement placement{PodIpOf(pass, raw.uid, pod),
                             node != nullptr ? api::NodeAddress(*node) : "",
                             node != nullptr ? node->status.cpu : Quantity(),
                             node != nullptr ? node->status.memory : Quantity()};
      Result<std::vector<api::EnvVar>> env = ResolvePodEnvironment(pod, placement, store_);
      api::Pod resolved = pod;
      if (env) {
        resolved.spec.template_.env = std::move(*env);
        resolved.spec.template_.env_from.clear();
      }
      Result<PodSpec> spec = env ? BuildPodSpec(pass, raw, resolved, after) : Err(env.error());
      Status started = spec ? runtime_.Start(*spec) : spec.error();
      if (!env) {
        after.status.reason = kCreateContainerConfigError;
        after.status.message = env.error().message();
        Status recorded = events_.Record(
            {"Pod", pod.metadata.namespace_name, pod.metadata.name, pod.metadata.uid}, "Warning",
            "Failed", "Error: " + env.error().message());
        if (!recorded.ok()) spdlog::warn("node agent: event: {}", recorded.ToString());
      } else if (!started.ok()) {
        MarkFailed(after, "StartError", started.message(), std::nullopt, now);
      } else {
        known_.insert(raw.uid);
        after.status.reason.clear();
        after.status.message.clear();
        after.status.pod_ip = placement.pod_ip;
        if (IsForeignPod(pod)) {
          // The pod started once; its container starts again in place (restartCount).
          if (pod.status.phase == api::PodPhase::kRunning) {
            after.status.restart_count += 1;
          } else if (const std::string* ignored =
                         api::PodAnnotation(pod, api::kIgnoredFieldsAnnotation)) {
            (void)events_.Record(subject, "Warning", "IgnoredFields", *ignored);
          }
          restart_at_.erase(raw.uid);
          after.metadata.annotations.emplace(api::kStartedAtAnnotation, now);
        } else {
          after.metadata.annotations[api::kStartedAtAnnotation] = now;
        }
        after.status.phase = api::PodPhase::kRunning;
      }
    }
  } else if (status->Running()) {
    after.status.phase = api::PodPhase::kRunning;
    if (after.status.pod_ip.empty()) after.status.pod_ip = PodIpOf(pass, raw.uid, pod);
    after.metadata.annotations.emplace(api::kStartedAtAnnotation, now);
    // To the microsecond: the autoscaler measures cold starts from the pod's exact creation.
    if (pass.ready.count(raw.uid) > 0) {
      after.metadata.annotations[api::kReadyAtAnnotation] = FormatRfc3339Micro(clock_.Now());
    }
    // The pod's own readiness probe decides, every pass: Ready while it passes.
    if (auto probed = pass.probed_ready.find(raw.uid); probed != pass.probed_ready.end()) {
      if (!probed->second) {
        after.metadata.annotations.erase(api::kReadyAtAnnotation);
      } else if (api::PodAnnotation(pod, api::kReadyAtAnnotation) == nullptr) {
        after.metadata.annotations[api::kReadyAtAnnotation] = FormatRfc3339Micro(clock_.Now());
      }
    }
    ReportGpuActivity(pass, raw.uid, pod, after);
    // Each GPU's health as the node's inventory says now. Only where the pod carries its
    // report (or a restarted agent learnt its GPUs from the state file alone): a server that
    // drops allocatedResourcesStatus (its ResourceHealthStatus gate off) gets no write a pass.
    const api::Node* node = FindNode(pass, pod.spec.node_name);
    const std::vector<int64_t>* held = gpus_.HeldBy(raw.uid);
    if (held != nullptr && node != nullptr &&
        (api::PodAnnotation(pod, api::kAllocatedGpusAnnotation) != nullptr ||
         pass.gpus_to_report.count(raw.uid) > 0)) {
      after.metadata.annotations[api::kAllocatedGpusAnnotation] =
          AllocatedGpusAnnotation(*node, *held);
    }
  } else if (RestartsInPlace(pod, status->Succeeded() && pass.probe_killed.count(raw.uid) == 0)) {
    // The kubelet's way: the container starts again after a back-off; the pod stays Running.
    const ProcessStatus* ended = FirstFailure(*status);
    auto killed = pass.probe_killed.find(raw.uid);
    const std::string what = killed != pass.probe_killed.end() ? killed->second
                             : ended != nullptr                ? DescribeFailure(*ended)
                                                               : "it exited with code 0";
    (void)runtime_.Forget(raw.uid);
    known_.erase(raw.uid);
    const Duration backoff = RestartBackoff(pod.status.restart_count);
    restart_at_[raw.uid] = clock_.Now() + backoff;
    after.status.reason = "CrashLoopBackOff";
    after.status.message =
        fmt::format("back-off {}s restarting container {} ({})",
                    std::chrono::duration_cast<std::chrono::seconds>(backoff).count(),
                    ContainerNameOf(pod), what);
    after.metadata.annotations.erase(api::kReadyAtAnnotation);
    (void)events_.Record(subject, "Warning", "BackOff", after.status.message);
  } else if (auto killed = pass.probe_killed.find(raw.uid); killed != pass.probe_killed.end()) {
    // Killed by its probe: failed, whatever its processes answered SIGTERM with.
    const ProcessStatus* ended = FirstFailure(*status);
    std::string message = killed->second;
    if (ended != nullptr) message += "; " + DescribeFailure(*ended);
    MarkFailed(after, "Unhealthy", std::move(message),
               ended != nullptr ? std::optional<int64_t>(ExitCode(*ended)) : std::nullopt,
               EndTime(ended, now));
  } else if (status->Succeeded()) {
    after.status.phase = api::PodPhase::kSucceeded;
    after.status.exit_code = 0;
    after.status.reason = "Completed";
    after.status.message = "every process exited with code 0";
    after.metadata.annotations.emplace(api::kFinishedAtAnnotation, now);
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
      const std::string* why = api::PodAnnotation(pod, api::kStopMessageAnnotation);
      if (why != nullptr && !why->empty()) detail = *why + "; " + detail;
    }
    std::optional<int64_t> code;
    if (failed != nullptr) code = ExitCode(*failed);
    // When the failing process ended, not when this pass saw it: the job controller names the
    // pod that failed first.
    MarkFailed(after, std::move(reason), std::move(detail), code, EndTime(failed, now));
  }
  if (after.status.phase == api::PodPhase::kRunning && pod.spec.owner.kind == "Job") {
    ReportCheckpoint(pass, pod, after);
  }
  return Write(raw, pod, after);
}

Result<PodSpec> NodeAgent::BuildPodSpec(Pass& pass, const store::Object& raw, const api::Pod& pod,
                                        api::Pod& after) {
  PodSpec spec;
  spec.uid = raw.uid;
  spec.name = pod.metadata.namespace_name + "/" + pod.metadata.name;
  ASSIGN_OR_RETURN(spec.run_as, PodIdentity(pod.spec.template_.security_context, geteuid(),
                                            options_.allow_root_pods));
  spec.limits = PodLimits(pod.spec.resources);
  if (IsReplica(pod)) {
    ASSIGN_OR_RETURN(spec.processes, BuildReplicaProcesses(pass, pod, after));
    for (const api::AssignedGpu& gpu : pod.spec.assigned_gpus) {
      spec.gpu_indices.push_back(static_cast<int>(gpu.index));
    }
    return spec;
  }
  std::vector<std::string> argv = pod.spec.template_.command;
  argv.insert(argv.end(), pod.spec.template_.args.begin(), pod.spec.template_.args.end());
  if (pod.spec.owner.kind == "Job") {
    ASSIGN_OR_RETURN(api::TrainingPod training, api::TrainingPodFromPod(pod));
    training.checkpoint_dir =
        CheckpointDir(pod.metadata.namespace_name, training.job_name, training.checkpoint_dir);
    // The launcher form: the user's torchrun starts the pod's workers; else strata does.
    const bool launcher = api::IsTorchrunLauncher(argv);
    std::vector<api::Environment> envs;
    if (launcher) {
      ASSIGN_OR_RETURN(api::Environment env, api::BuildLauncherEnvironment(training));
      envs.push_back(std::move(env));
    } else {
      ASSIGN_OR_RETURN(envs, api::BuildWorkerEnvironments(training));
    }
    for (api::Environment& env : envs) {
      env.insert(options_.base_env.begin(), options_.base_env.end());
      if (!options_.api_url.empty()) {
        env["STRATA_CHECKPOINT_URL"] =
            fmt::format("{}/api/v1/namespaces/{}/pods/{}/checkpoint", options_.api_url,
                        pod.metadata.namespace_name, pod.metadata.name);
      }
      std::vector<std::string> expanded;
      for (const std::string& arg : argv) expanded.push_back(ExpandEnvReferences(arg, env));
      spec.processes.push_back(ProcessSpec{launcher ? "launcher" : "rank-" + env["RANK"],
                                           std::move(expanded), std::move(env),
                                           pod.spec.template_.working_dir});
    }
    // Watch from the start, so that the first checkpoint is seen.
    RETURN_IF_ERROR(WatchCheckpoints(training.checkpoint_dir));
    // The workers write there. Only a directory strata made is given to them, never one the
    // manifest names elsewhere (that is the user's to prepare).
    if (spec.run_as && training.checkpoint_dir.rfind(options_.data_dir + "/checkpoints/", 0) == 0 &&
        chown(training.checkpoint_dir.c_str(), spec.run_as->uid, spec.run_as->gid) != 0) {
      return Err(InternalError(
          fmt::format("chown {}: {}", training.checkpoint_dir, std::strerror(errno))));
    }
  } else {
    ASSIGN_OR_RETURN(
        api::Environment env,
        TemplateEnvironment(options_.base_env, pod.spec.template_.env, ReservedEnvNames(pod)));
    for (const api::AssignedGpu& gpu : pod.spec.assigned_gpus) {
      spec.gpu_indices.push_back(static_cast<int>(gpu.index));
    }
    if (IsForeignPod(pod)) SetGpuVisibility(pass, raw.uid, pod, env, spec);
    for (std::string& arg : argv) arg = ExpandEnvReferences(arg, env);
    // A foreign pod's process is its container: `kubectl logs` names it.
    spec.processes.push_back(ProcessSpec{ContainerNameOf(pod), std::move(argv), std::move(env),
                                         pod.spec.template_.working_dir});
  }
  return spec;
}

Result<std::vector<ProcessSpec>> NodeAgent::BuildReplicaProcesses(Pass& pass, const api::Pod& pod,
                                                                  api::Pod& after) {
  const api::Node* node = FindNode(pass, pod.spec.node_name);
  ReplicaLaunchInput input;
  ASSIGN_OR_RETURN(input.replica, api::ReplicaPodFromPod(pod));
  input.command = pod.spec.template_.command;
  input.args = pod.spec.template_.args;
  input.user_env = pod.spec.template_.env;
  ASSIGN_OR_RETURN(input.port, api::RecordedEnginePort(pod));
  input.node_address = node != nullptr ? api::NodeAddress(*node) : pod.spec.node_name;
  input.gpu_memory_fraction = GpuMemoryFraction(pod.spec.assigned_gpus, node);
  // Only a replica bound to (simulated) GPUs has an engine engine-sim stands in for; one that
  // asked for none (a Deployment's web server, say) runs its own command.
  if (!pod.spec.assigned_gpus.empty()) input.engine_sim = options_.engine_sim;
  ASSIGN_OR_RETURN(ReplicaLaunch launch, BuildReplicaLaunch(input, options_.base_env));
  if (!launch.replaced_engine.empty()) {
    after.metadata.annotations[api::kEngineAnnotation] =
        fmt::format("simulated (engine-sim in place of {})", launch.replaced_engine);
  }
  std::vector<ProcessSpec> processes;
  processes.push_back(ProcessSpec{"main", std::move(launch.argv), std::move(launch.env),
                                  pod.spec.template_.working_dir});
  return processes;
}

Status NodeAgent::WatchCheckpoints(const std::string& dir) {
  if (checkpoints_ == nullptr) {
    Result<std::unique_ptr<CheckpointWatcher>> created = CheckpointWatcher::Create(&clock_);
    if (!created) return created.error();
    checkpoints_ = std::move(*created);
  }
  return checkpoints_->Watch(dir);
}

void NodeAgent::ReportCheckpoint(Pass& pass, const api::Pod& pod, api::Pod& after) {
  const std::string* job_dir = api::PodAnnotation(pod, api::kCheckpointDirAnnotation);
  std::string dir = CheckpointDir(pod.metadata.namespace_name, pod.spec.owner.name,
                                  job_dir == nullptr ? "" : *job_dir);
  pass.checkpoint_dirs_in_use.insert(dir);
  if (Status watched = WatchCheckpoints(dir); !watched.ok()) {
    pass.Note(watched);
    return;
  }
  std::optional<TimePoint> last = checkpoints_->LastCheckpoint(dir);
  if (!last) return;
  // A checkpoint reported through the API may be newer than the directory's; both are
  // FormatRfc3339's fixed-width UTC text, so the later one is the greater string.
  std::string seen = FormatRfc3339(*last);
  const std::string* reported = api::PodAnnotation(pod, api::kLastCheckpointAnnotation);
  if (reported == nullptr || *reported < seen) {
    after.metadata.annotations[api::kLastCheckpointAnnotation] = std::move(seen);
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
