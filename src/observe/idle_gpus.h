#pragma once

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "api/annotations.h"
#include "common/clock.h"
#include "common/status.h"
#include "observe/gpu_metrics.h"

// Idle reclaim: a job whose GPUs stay under its queue's utilisation threshold for a set time is
// reported once per idle spell (the control plane records a Warning event), and, where the
// queue's policy says so, is marked reclaimable so that preemption takes it first.

namespace strata::observe {

struct IdlePolicy {
  double threshold = 0.30;
  Duration idle_after = std::chrono::minutes(30);
  bool reclaimable = false;
};

// The policy the annotations set, defaults for those absent. Returns InvalidArgument naming
// the annotation and its value for one that does not parse (a threshold outside [0, 1], a
// duration that is not positive, a flag other than "true"/"false").
Result<IdlePolicy> ParseIdlePolicy(const std::map<std::string, std::string>& annotations);

// One job's GPUs at one moment: how many it holds and how many GPUs' worth of them are busy.
struct JobGpuUse {
  std::string namespace_name;
  std::string job;
  std::string queue;
  double gpus = 0;
  double busy = 0;
};

// Per job (holders with a job), from the samples: its GPUs (shares summed) and their busy
// share split as SummariseGpuUsage splits it. Holders whose pod does not run yet and GPUs whose
// utilisation is unknown are left out (not idle: not known). In (namespace, job) order.
std::vector<JobGpuUse> JobGpuUses(const std::vector<GpuSample>& samples);

// A job found idle: under its queue's threshold since `idle_since`.
struct IdleJob {
  std::string namespace_name;
  std::string job;
  std::string queue;
  double busy_ratio = 0;  // busy / gpus at the observation that found it idle
  TimePoint idle_since{};
  bool reclaimable = false;
};

// The message of the Warning event for `job` (reason kIdleEventReason): "GPUs 5 % busy, under
// the queue's 30 % threshold since 2026-01-01T00:00:00Z", plus "; reclaimable: preemption takes
// this job first" when the queue marks it so.
inline constexpr char kIdleEventReason[] = "GpuIdle";
std::string DescribeIdleJob(const IdleJob& job, const IdlePolicy& policy);

// Follows every job's use over successive observations. Owned by one control loop; not
// thread-safe. Pure: time comes in with each observation.
class IdleJobTracker {
 public:
  using PolicyOf = std::function<IdlePolicy(const std::string& queue)>;

  // Records `uses` seen at `now` and returns the jobs that have now been under their queue's
  // threshold for at least its idle_after, each once per idle spell. A job at or above the
  // threshold, or absent from `uses`, starts over. REQUIRES: `now` does not go backwards.
  std::vector<IdleJob> Observe(const std::vector<JobGpuUse>& uses, TimePoint now,
                               const PolicyOf& policy_of);

  // The jobs idle now whose queue marks them reclaimable, as (namespace, job).
  std::vector<std::pair<std::string, std::string>> Reclaimable() const;

 private:
  struct Spell {
    TimePoint under_since{};
    bool reported = false;
    bool reclaimable = false;
  };
  std::map<std::pair<std::string, std::string>, Spell> spells_;
};

}  // namespace strata::observe
