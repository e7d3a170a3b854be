#include "node/pod_prober.h"

#include <fmt/format.h>

#include <mutex>
#include <thread>

namespace strata::node {

// One attempt, shared by the thread that runs it and the prober that waits for its result.
struct PodProber::Attempt {
  std::mutex mu;
  std::optional<ProbeResult> result;
};

PodProber::PodProber(const api::ProcessTemplate& process, ProbeTarget target, TimePoint started)
    : target_(std::move(target)) {
  if (process.startup_probe)
    startup_.emplace(Probe{{ProbeKind::kStartup, *process.startup_probe, started}, nullptr});
  if (process.liveness_probe)
    liveness_.emplace(Probe{{ProbeKind::kLiveness, *process.liveness_probe, started}, nullptr});
  if (process.readiness_probe)
    readiness_.emplace(Probe{{ProbeKind::kReadiness, *process.readiness_probe, started}, nullptr});
}

PodProber::~PodProber() = default;

void PodProber::Step(Probe& probe, TimePoint now, ProbeVerdict& verdict) {
  if (probe.running != nullptr) {
    std::optional<ProbeResult> result;
    {
      std::lock_guard<std::mutex> lock(probe.running->mu);
      result = std::move(probe.running->result);
    }
    if (!result) return;  // still running
    probe.running = nullptr;
    const std::string name(ProbeKindName(probe.state.kind()));
    if (!result->success) verdict.failures.push_back(name + " probe failed: " + result->message);
    probe.state.Finish(*result);
    if (probe.state.kind() != ProbeKind::kReadiness && probe.state.failed() && !verdict.kill) {
      verdict.kill = name + " probe failed: " + result->message;
      verdict.kill_grace_seconds = probe.state.probe().termination_grace_period_seconds;
    }
  }
  if (!probe.state.Due(now)) return;
  probe.state.Start(now);
  auto attempt = std::make_shared<Attempt>();
  probe.running = attempt;
  std::thread([attempt, spec = probe.state.probe(), target = target_] {
    ProbeResult result = RunProbe(spec, target);
    std::lock_guard<std::mutex> lock(attempt->mu);
    attempt->result = std::move(result);
  }).detach();
}

ProbeVerdict PodProber::Tick(TimePoint now) {
  ProbeVerdict verdict;
  if (startup_ && !startup_->state.passing()) {
    Step(*startup_, now, verdict);
    if (!startup_->state.passing()) return verdict;
  }
  if (liveness_) Step(*liveness_, now, verdict);
  if (readiness_) {
    Step(*readiness_, now, verdict);
    verdict.ready = readiness_->state.passing();
  }
  return verdict;
}

}  // namespace strata::node
