#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "common/status.h"

namespace strata::autoscaler {

// What the autoscaler sees of one service version at one moment: the engines' own figures
// (vLLM's waiting/running/KV usage, summed or averaged over ready replicas) and the gateway's,
// read in-process. Plain data.
struct LoadSample {
  int64_t waiting = 0;         // requests queued inside the engines
  int64_t running = 0;         // requests the engines are batching
  int64_t gateway_queued = 0;  // requests the gateway holds (no ready replica yet)
  double kv_usage = 0.0;       // mean KV-cache usage of the ready replicas, in [0, 1]
  int64_t arrivals_total = 0;  // requests received since the start: a counter, never decreasing
  // Requests answered since the start (first token sent, or refused with 503) and, of those,
  // the ones whose first token came after the service's TTFT objective or never came: the
  // gateway's own TTFT measurements, counters like arrivals_total.
  int64_t answered_total = 0;
  int64_t late_total = 0;
  // Prompt tokens of the requests received since the start (the gateway's estimate at
  // admission, the one its token quotas reserve): a counter like arrivals_total. 0 when the
  // feeder does not count them; the rate policy then plans in requests alone.
  int64_t prompt_tokens_total = 0;
  // Replica-seconds in which a ready replica had at least one request sent to it and still
  // waiting for its first token, summed over the replicas (the gateway's own view of how busy
  // each replica is prefilling): a counter like arrivals_total. 0 when the feeder does not
  // measure it; the rate policy then learns its capacity from misses alone.
  double prefill_busy_seconds_total = 0;
  int ready_replicas = 0;
  int starting_replicas = 0;  // created, weights still loading

  // The load the windowed policies divide by their target: every request in the system.
  int64_t Load() const { return waiting + running + gateway_queued; }
};

// A policy's answer: the replica count wanted now, and why, in words for `describe service`.
struct Decision {
  int desired = 0;
  bool panic = false;
  std::string reason;
  // What a rate-based policy computed (0 for the others): the arrival rate it sees, the rate it
  // provisions for, and the requests/s it counts on per ready replica.
  double arrival_rate = 0;
  double forecast_rate = 0;
  double capacity_per_replica = 0;
};

// A scaling policy: turns a stream of samples into replica counts. Implementations are pure
// and deterministic: time enters only as the `now` argument, so the same object runs in real
// time under the control plane and in virtual time under `strata sim autoscale`.
//
// Owned by the loop that feeds it; not thread-safe.
class ScalingPolicy {
 public:
  virtual ~ScalingPolicy() = default;

  // Records `sample`, taken at `now`, and returns the replica count wanted from now on.
  // REQUIRES: `now` never decreases between calls.
  virtual Decision Decide(const LoadSample& sample, TimePoint now) = 0;

  // Tells the policy how long a new replica now takes from creation to readiness (measured by
  // the caller, e.g. from the last replica's start-up). Policies that look ahead by a cold start
  // use it from the next decision on; the others ignore it. REQUIRES: cold_start >= 0.
  virtual void SetColdStart(Duration /*cold_start*/) {}

  // "strata", "kpa", "keda" or "static".
  virtual std::string_view name() const = 0;
};

// A policy that always wants `replicas` (capacity provisioned for the peak, always on).
class FixedPolicy final : public ScalingPolicy {
 public:
  // REQUIRES: replicas >= 0.
  explicit FixedPolicy(int replicas);

  Decision Decide(const LoadSample& sample, TimePoint now) override;
  std::string_view name() const override { return "static"; }

 private:
  int replicas_;
};

// The last steps of a policy's decision, shared by the policies that scale to zero: a count of
// 0 while replicas exist becomes 1 unless the policy judges the service `idle` (saying
// "keeping 1 " + `keeping`, e.g. "until idle for 90s"); then the count is clamped to
// [min_replicas, max_replicas]. Appends what it did to `why`.
int ApplyIdleAndBounds(int desired, const LoadSample& sample, bool idle, std::string_view keeping,
                       int min_replicas, int max_replicas, std::string& why);

// Bounds shared by every policy: min and max replicas. InvalidArgument naming the field when
// min < 0, max < 1 or min > max.
Status ValidateReplicaBounds(int min_replicas, int max_replicas);

}  // namespace strata::autoscaler
