#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "sim/philly_trace.h"

namespace strata::sim {

// How the queues of a Philly replay are set up.
enum class PhillyPolicy {
  // One queue per virtual cluster, all in one cohort, nominal GPU quota in proportion to each
  // one's GPU-time in the replayed jobs; idle quota is borrowed and reclaimed by preemption;
  // queues ordered by dominant share (fair sharing); every priority equal.
  kStrata,
  // One queue, no quota: first come, first served (with the scheduler's backfill).
  kFifo,
  // The kStrata quotas, but nothing is lent or borrowed.
  kStrict,
};

// "strata", "fifo", "strict"; InvalidArgument naming the value otherwise.
Result<PhillyPolicy> ParsePhillyPolicy(std::string_view name);
std::string_view PhillyPolicyName(PhillyPolicy policy);

struct PhillyReplayOptions {
  int gpus = 0;  // cluster size; a positive multiple of 8 (8-GPU nodes)
  PhillyPolicy policy = PhillyPolicy::kStrata;
  Duration checkpoint_interval = std::chrono::minutes(30);
  // Called after each instant at which jobs arrived, with how many have arrived of how many and
  // the virtual time's distance from the first arrival: for a caller that shows progress (a
  // whole-trace replay takes minutes).
  std::function<void(size_t arrived, size_t total, Duration elapsed)> progress;
};

// Delay or time statistics in seconds.
struct PhillyDelayStats {
  int jobs = 0;
  double mean_s = 0;
  double p50_s = 0;
  double p95_s = 0;
};

struct PhillyQueueReport {
  double quota_gpus = 0;  // nominal quota (0 under kFifo)
  PhillyDelayStats queueing;
};

// What a replay measured. Queueing delay is submit to first start; JCT is submit to completion.
struct PhillyReport {
  int jobs = 0;
  int rejected_jobs = 0;    // asked for more GPUs than the cluster has; not replayed
  int unfinished_jobs = 0;  // never placed (e.g. larger than a strict quota)
  int cycles = 0;
  double utilisation = 0;     // busy GPU-seconds / (gpus x [first submit, last submit])
  double gpu_hours = 0;       // sum of gpus x duration of the replayed jobs
  double lost_gpu_hours = 0;  // work since the last checkpoint, thrown away by preemption
  int preemptions = 0;
  double makespan_s = 0;  // first submit to last completion
  PhillyDelayStats queueing;
  PhillyDelayStats jct;
  std::map<std::string, PhillyQueueReport> queues;  // by cluster
};

// Replays `jobs` (any order) in event-driven virtual time through the real scheduler: a cycle
// at each instant where jobs arrive or complete (or victims were just evicted), never per
// second. Nodes have 8 GPUs; a job of more than 8 GPUs is a gang of 8-GPU pods (plus one pod
// with the remainder). A preempted job keeps the work up to its last checkpoint (every
// `checkpoint_interval` of run time), loses the rest and requeues with its original submit time.
// Runtime limits given to the scheduler (for backfill) are each job's remaining run time.
// InvalidArgument when options.gpus is not a positive multiple of 8 or `jobs` is empty.
Result<PhillyReport> ReplayPhilly(const std::vector<PhillyJob>& jobs,
                                  const PhillyReplayOptions& options);

}  // namespace strata::sim
