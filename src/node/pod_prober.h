#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/workload.h"
#include "common/clock.h"
#include "node/probe_run.h"
#include "node/probe_state.h"

namespace strata::node {

// What a pod's probes say after a Tick.
struct ProbeVerdict {
  // The readiness probe passes (false while the startup probe has not passed yet). Meaningful
  // only for a pod with a readiness probe.
  bool ready = false;
  // Set when a liveness probe, or a startup probe, failed failureThreshold times in a row:
  // the pod is to be killed. "Liveness probe failed: HTTP probe failed with statuscode: 500".
  std::optional<std::string> kill;
  // The probe whose failure asks for the kill, and its grace (terminationGracePeriodSeconds).
  std::optional<int64_t> kill_grace_seconds;
  // One line for each attempt that failed since the last Tick, as the kubelet's Unhealthy
  // events word them: "Readiness probe failed: dial tcp 127.0.0.1:8000: connect: connection
  // refused".
  std::vector<std::string> failures;
};

// The probes of one running pod, as the kubelet's prober workers run them: the startup probe
// first, alone, until it passes; then liveness and readiness, each on its own period. Each
// attempt runs on a thread of its own (RunProbe, bounded by the probe's timeout), so Tick never
// waits for one: it collects the attempts that ended, starts the ones due and says what the
// probes say now. An attempt still running when the prober is destroyed ends on its own, within
// its timeout, and its result is dropped.
//
// Owned by the node agent, one per running pod with probes; not thread-safe.
class PodProber {
 public:
  // The probes of `process`, for a pod whose processes started at `started`, reaching it at
  // `target`.
  PodProber(const api::ProcessTemplate& process, ProbeTarget target, TimePoint started);
  ~PodProber();
  PodProber(const PodProber&) = delete;
  PodProber& operator=(const PodProber&) = delete;

  ProbeVerdict Tick(TimePoint now);

  bool has_readiness() const { return readiness_.has_value(); }

 private:
  struct Attempt;
  struct Probe {
    ProbeState state;
    std::shared_ptr<Attempt> running;
  };

  // Collects `probe`'s ended attempt into `verdict`, then starts one if due.
  void Step(Probe& probe, TimePoint now, ProbeVerdict& verdict);

  ProbeTarget target_;
  std::optional<Probe> startup_;
  std::optional<Probe> liveness_;
  std::optional<Probe> readiness_;
};

}  // namespace strata::node
