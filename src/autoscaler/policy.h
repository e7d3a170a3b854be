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

// Bounds shared by every policy: min and max replicas. InvalidArgument naming the field when
// min < 0, max < 1 or min > max.
Status ValidateReplicaBounds(int min_replicas, int max_replicas);

}  // namespace strata::autoscaler
