#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "api/workload.h"
#include "common/clock.h"

// The kubelet's rules for one probe of one pod: when an attempt is due, and what a run of
// passes or failures makes of its result. Pure: the caller runs the attempts and gives the
// times. Not thread-safe; owned by the pod's PodProber.
namespace strata::node {

enum class ProbeKind { kLiveness, kReadiness, kStartup };

// "Liveness", "Readiness", "Startup": how the kubelet names the probe in its events.
std::string_view ProbeKindName(ProbeKind kind);

// How one attempt went. `message` says why it failed, in the kubelet's words ("HTTP probe
// failed with statuscode: 500").
struct ProbeResult {
  bool success = false;
  std::string message;
};

class ProbeState {
 public:
  // The probe of a pod whose processes started at `started`. Its result starts as the
  // kubelet's does: passing for liveness (a pod is not killed before a probe says so), failing
  // for readiness (not Ready until a probe passes) and startup.
  ProbeState(ProbeKind kind, const api::Probe& probe, TimePoint started);

  // Whether an attempt is to start at `now`: none is running, initialDelaySeconds have passed
  // since the start, and periodSeconds since the last attempt started.
  bool Due(TimePoint now) const;
  // Notes that an attempt started at `now`. REQUIRES: Due(now).
  void Start(TimePoint now);
  // Notes how the running attempt went: successThreshold passes in a row make the result
  // pass, failureThreshold failures in a row make it fail. Returns true when the result
  // changed. REQUIRES: an attempt runs.
  bool Finish(const ProbeResult& result);

  bool passing() const { return passing_; }
  // Whether the last failureThreshold attempts all failed (for startup, whose result starts
  // failing, this is not the same as !passing()).
  bool failed() const { return !last_success_ && in_a_row_ >= probe_.failure_threshold; }
  bool running() const { return running_; }
  ProbeKind kind() const { return kind_; }
  const api::Probe& probe() const { return probe_; }
  // Why the last failed attempt failed ("" before any failed).
  const std::string& last_failure() const { return last_failure_; }

 private:
  ProbeKind kind_;
  api::Probe probe_;
  TimePoint started_;
  std::optional<TimePoint> last_start_;
  bool running_ = false;
  bool passing_;
  bool last_success_ = false;
  int64_t in_a_row_ = 0;
  std::string last_failure_;
};

}  // namespace strata::node
