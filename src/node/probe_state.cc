#include "node/probe_state.h"

#include "common/check.h"

namespace strata::node {

std::string_view ProbeKindName(ProbeKind kind) {
  switch (kind) {
    case ProbeKind::kLiveness:
      return "Liveness";
    case ProbeKind::kReadiness:
      return "Readiness";
    case ProbeKind::kStartup:
      return "Startup";
  }
  return "Unknown";
}

ProbeState::ProbeState(ProbeKind kind, const api::Probe& probe, TimePoint started)
    : kind_(kind), probe_(probe), started_(started), passing_(kind == ProbeKind::kLiveness) {}

bool ProbeState::Due(TimePoint now) const {
  if (running_ || now < started_ + std::chrono::seconds(probe_.initial_delay_seconds)) {
    return false;
  }
  return !last_start_ || now >= *last_start_ + std::chrono::seconds(probe_.period_seconds);
}

void ProbeState::Start(TimePoint now) {
  STRATA_CHECK(Due(now));
  running_ = true;
  last_start_ = now;
}

bool ProbeState::Finish(const ProbeResult& result) {
  STRATA_CHECK(running_);
  running_ = false;
  if (!result.success) last_failure_ = result.message;
  in_a_row_ = result.success == last_success_ ? in_a_row_ + 1 : 1;
  last_success_ = result.success;
  const int64_t threshold = result.success ? probe_.success_threshold : probe_.failure_threshold;
  if (passing_ == result.success || in_a_row_ < threshold) return false;
  passing_ = result.success;
  return true;
}

}  // namespace strata::node
