#include "sim/philly_replay.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <memory>
#include <queue>
#include <tuple>
#include <unordered_map>

#include "common/check.h"
#include "fmt/format.h"
#include "scheduler/scheduler.h"

namespace strata::sim {
namespace {

using scheduler::Resource;

constexpr int kGpusPerNode = 8;
// Cycles at one instant while victims are evicted and their preemptors placed; a preemptor is
// nominated, so one extra cycle normally places it.
constexpr int kMaxCyclesPerInstant = 4;

double Seconds(Duration d) { return std::chrono::duration<double>(d).count(); }
Duration FromSeconds(double s) {
  return std::chrono::duration_cast<Duration>(std::chrono::duration<double>(s));
}

// One replayed job and where it stands.
struct JobState {
  const PhillyJob* job = nullptr;
  std::string queue;
  double remaining_s = 0;  // run time still to do, from its last checkpoint
  bool running = false;
  bool done = false;
  bool nominated = false;
  TimePoint started;  // of the current run
  std::optional<TimePoint> first_start;
  TimePoint completed;
  int times_preempted = 0;
  int run = 0;  // bumped at each start, so completion events of an evicted run are stale
};

std::shared_ptr<scheduler::Cluster> MakeCluster(const std::vector<JobState>& states,
                                                const PhillyReplayOptions& options,
                                                std::map<std::string, double>& quota_gpus) {
  auto cluster = std::make_shared<scheduler::Cluster>();
  for (int n = 0; n < options.gpus / kGpusPerNode; ++n) {
    scheduler::Node node;
    node.name = fmt::format("node-{}", n);
    node.cpu_milli = 64'000;
    node.memory_bytes = int64_t{512} << 30;
    for (int g = 0; g < kGpusPerNode; ++g) node.gpus.push_back({"P100-16GB", 16 * 1024, 0, false});
    cluster->nodes.push_back(std::move(node));
  }
  if (options.policy == PhillyPolicy::kFifo) {
    scheduler::Queue queue;
    queue.name = "all";
    cluster->queues.push_back(std::move(queue));
    return cluster;
  }
  cluster->flavors.push_back({"gpu", {}, std::nullopt});
  std::map<std::string, double> gpu_time;
  double total = 0;
  for (const JobState& state : states) {
    gpu_time[state.queue] += state.job->gpus * state.job->duration_s;
    total += state.job->gpus * state.job->duration_s;
  }
  for (const auto& [name, time] : gpu_time) {
    scheduler::Queue queue;
    queue.name = name;
    queue.cohort = options.policy == PhillyPolicy::kStrata ? "philly" : "";
    const int64_t nominal = std::llround(options.gpus * 1000.0 * time / total);
    quota_gpus[name] = nominal / 1000.0;
    scheduler::FlavorQuota flavor_quota;
    flavor_quota.resources[static_cast<int>(Resource::kGpu)] =
        scheduler::ResourceQuota{nominal, std::nullopt, std::nullopt};
    queue.flavors.push_back(flavor_quota);
    cluster->queues.push_back(std::move(queue));
  }
  return cluster;
}

// The job as the scheduler sees it: 8-GPU pods plus one pod with the remainder.
scheduler::Workload MakeWorkload(size_t index, const JobState& state) {
  scheduler::Workload workload;
  workload.name = std::to_string(index);
  workload.queue = state.queue;
  workload.submitted = state.job->submitted;
  workload.runtime_limit = FromSeconds(state.remaining_s);
  workload.nominated = state.nominated;
  const int gpus = state.job->gpus;
  if (gpus >= kGpusPerNode) {
    scheduler::PodSet full;
    full.name = "full";
    full.count = gpus / kGpusPerNode;
    full.gpu.count = kGpusPerNode;
    workload.pod_sets.push_back(full);
  }
  if (gpus % kGpusPerNode != 0) {
    scheduler::PodSet rest;
    rest.name = "rest";
    rest.gpu.count = gpus % kGpusPerNode;
    workload.pod_sets.push_back(rest);
  }
  return workload;
}

size_t JobIndex(const std::string& name) {
  size_t index = 0;
  const auto [end, error] = std::from_chars(name.data(), name.data() + name.size(), index);
  STRATA_CHECK(error == std::errc() && end == name.data() + name.size());
  return index;
}

double Percentile(std::vector<double>& values, double q) {
  if (values.empty()) return 0;
  const size_t rank = static_cast<size_t>(std::ceil(q * values.size()));
  const size_t k = std::clamp<size_t>(rank, 1, values.size()) - 1;
  std::nth_element(values.begin(), values.begin() + k, values.end());
  return values[k];
}

PhillyDelayStats Stats(std::vector<double> values) {
  PhillyDelayStats stats;
  stats.jobs = static_cast<int>(values.size());
  if (values.empty()) return stats;
  double sum = 0;
  for (double v : values) sum += v;
  stats.mean_s = sum / values.size();
  stats.p50_s = Percentile(values, 0.50);
  stats.p95_s = Percentile(values, 0.95);
  return stats;
}

// The event-driven replay over prepared job states; owns the running set and the clock.
class Replay {
 public:
  Replay(std::vector<JobState> states, const PhillyReplayOptions& options, PhillyReport& report)
      : states_(std::move(states)),
        options_(options),
        report_(report),
        scheduler_(scheduler::SchedulerOptions{.explain = false}) {
    snapshot_.cluster = MakeCluster(states_, options_, quota_gpus_);
    arrivals_.resize(states_.size());
    for (size_t i = 0; i < states_.size(); ++i) arrivals_[i] = i;
    std::stable_sort(arrivals_.begin(), arrivals_.end(), [&](size_t a, size_t b) {
      return states_[a].job->submitted < states_[b].job->submitted;
    });
  }

  void Run() {
    const TimePoint first = states_[arrivals_.front()].job->submitted;
    const TimePoint last = states_[arrivals_.back()].job->submitted;
    size_t next_arrival = 0;
    TimePoint now = first;
    while (next_arrival < arrivals_.size() || !completions_.empty()) {
      TimePoint next = TimePoint::max();
      if (next_arrival < arrivals_.size()) next = states_[arrivals_[next_arrival]].job->submitted;
      if (!completions_.empty()) next = std::min(next, std::get<0>(completions_.top()));
      busy_gpu_s_ += busy_gpus_ * Seconds(std::max(Duration::zero(),
                                                   std::min(next, last) - std::min(now, last)));
      now = next;
      while (!completions_.empty() && std::get<0>(completions_.top()) == now) {
        const auto [at, index, run] = completions_.top();
        completions_.pop();
        if (states_[index].running && states_[index].run == run) Complete(index, now);
      }
      const size_t arrived_before = next_arrival;
      while (next_arrival < arrivals_.size() &&
             states_[arrivals_[next_arrival]].job->submitted == now) {
        pending_.push_back(arrivals_[next_arrival++]);
      }
      if (options_.progress && next_arrival != arrived_before) {
        options_.progress(next_arrival, arrivals_.size(), now - first);
      }
      for (int cycle = 0; cycle < kMaxCyclesPerInstant && !pending_.empty(); ++cycle) {
        if (!RunCycle(now)) break;
      }
    }
    const double window_s = Seconds(last - first);
    report_.utilisation = window_s > 0 ? busy_gpu_s_ / (options_.gpus * window_s) : 0;
    report_.makespan_s = Seconds(now - first);
  }

  void Summarise() {
    std::vector<double> all_delays, jcts;
    std::map<std::string, std::vector<double>> delays;
    for (const auto& [name, quota] : quota_gpus_) report_.queues[name].quota_gpus = quota;
    for (const JobState& state : states_) {
      report_.gpu_hours += state.job->gpus * state.job->duration_s / 3600;
      if (!state.done) {
        ++report_.unfinished_jobs;
        continue;
      }
      const double delay = Seconds(*state.first_start - state.job->submitted);
      all_delays.push_back(delay);
      delays[state.job->cluster].push_back(delay);
      jcts.push_back(Seconds(state.completed - state.job->submitted));
    }
    report_.queueing = Stats(std::move(all_delays));
    report_.jct = Stats(std::move(jcts));
    for (auto& [name, values] : delays) report_.queues[name].queueing = Stats(std::move(values));
  }

 private:
  // One scheduling cycle at `now`; true when it preempted (another cycle may place the
  // preemptors).
  bool RunCycle(TimePoint now) {
    ++report_.cycles;
    for (scheduler::RunningWorkload& running : snapshot_.running) {
      const JobState& state = states_[JobIndex(running.workload.name)];
      const Duration ran = now - state.started;
      running.last_checkpoint =
          state.started + (ran / options_.checkpoint_interval) * options_.checkpoint_interval;
    }
    snapshot_.now = now;
    std::vector<scheduler::Workload> pending;
    pending.reserve(pending_.size());
    for (size_t index : pending_) pending.push_back(MakeWorkload(index, states_[index]));
    const scheduler::Decisions decisions = scheduler_.Cycle(snapshot_, pending);
    for (const scheduler::Preemption& preemption : decisions.preemptions) {
      Evict(JobIndex(preemption.victim), now);
      states_[JobIndex(preemption.preemptor)].nominated = true;
    }
    for (const scheduler::Binding& binding : decisions.bindings) Start(binding, now);
    std::erase_if(pending_, [&](size_t index) { return states_[index].running; });
    return !decisions.preemptions.empty();
  }

  void Start(const scheduler::Binding& binding, TimePoint now) {
    const size_t index = JobIndex(binding.workload);
    JobState& state = states_[index];
    state.running = true;
    state.nominated = false;
    state.started = now;
    if (!state.first_start) state.first_start = now;
    ++state.run;
    busy_gpus_ += state.job->gpus;
    scheduler::RunningWorkload running;
    running.workload = MakeWorkload(index, state);
    running.flavor = binding.flavor;
    running.pods = binding.pods;
    running.started = now;
    running.last_checkpoint = now;
    running.times_preempted = state.times_preempted;
    snapshot_.running.push_back(std::move(running));
    completions_.emplace(now + FromSeconds(state.remaining_s), index, state.run);
  }

  void RemoveRunning(size_t index) {
    const std::string name = std::to_string(index);
    std::erase_if(snapshot_.running,
                  [&](const scheduler::RunningWorkload& r) { return r.workload.name == name; });
    busy_gpus_ -= states_[index].job->gpus;
    states_[index].running = false;
  }

  void Complete(size_t index, TimePoint now) {
    RemoveRunning(index);
    states_[index].done = true;
    states_[index].completed = now;
  }

  // The victim keeps the work up to its last checkpoint and waits again.
  void Evict(size_t index, TimePoint now) {
    JobState& state = states_[index];
    STRATA_CHECK(state.running);
    const Duration ran = now - state.started;
    const Duration kept = (ran / options_.checkpoint_interval) * options_.checkpoint_interval;
    report_.lost_gpu_hours += state.job->gpus * Seconds(ran - kept) / 3600;
    ++report_.preemptions;
    state.remaining_s = std::max(0.0, state.remaining_s - Seconds(kept));
    ++state.times_preempted;
    RemoveRunning(index);
    pending_.push_back(index);
  }

  std::vector<JobState> states_;
  PhillyReplayOptions options_;
  PhillyReport& report_;
  std::map<std::string, double> quota_gpus_;
  scheduler::Scheduler scheduler_;
  scheduler::Snapshot snapshot_;
  std::vector<size_t> arrivals_;  // job indices by submit time
  std::vector<size_t> pending_;   // job indices
  using Completion = std::tuple<TimePoint, size_t, int>;
  std::priority_queue<Completion, std::vector<Completion>, std::greater<>> completions_;
  int64_t busy_gpus_ = 0;
  double busy_gpu_s_ = 0;
};

}  // namespace

Result<PhillyPolicy> ParsePhillyPolicy(std::string_view name) {
  if (name == "strata") return PhillyPolicy::kStrata;
  if (name == "fifo") return PhillyPolicy::kFifo;
  if (name == "strict") return PhillyPolicy::kStrict;
  return Err(
      InvalidArgumentError(fmt::format("policy '{}' is not one of strata, fifo, strict", name)));
}

std::string_view PhillyPolicyName(PhillyPolicy policy) {
  switch (policy) {
    case PhillyPolicy::kStrata:
      return "strata";
    case PhillyPolicy::kFifo:
      return "fifo";
    case PhillyPolicy::kStrict:
      return "strict";
  }
  return "strata";
}

Result<PhillyReport> ReplayPhilly(const std::vector<PhillyJob>& jobs,
                                  const PhillyReplayOptions& options) {
  if (options.gpus <= 0 || options.gpus % kGpusPerNode != 0) {
    return Err(InvalidArgumentError(
        fmt::format("gpus: {} is not a positive multiple of {}", options.gpus, kGpusPerNode)));
  }
  PhillyReport report;
  std::vector<JobState> states;
  for (const PhillyJob& job : jobs) {
    if (job.gpus > options.gpus) {
      ++report.rejected_jobs;
      continue;
    }
    JobState state;
    state.job = &job;
    state.queue = options.policy == PhillyPolicy::kFifo ? "all" : job.cluster;
    state.remaining_s = job.duration_s;
    states.push_back(std::move(state));
  }
  if (states.empty()) return Err(InvalidArgumentError("no job fits the cluster"));
  report.jobs = static_cast<int>(states.size());
  Replay replay(std::move(states), options, report);
  replay.Run();
  replay.Summarise();
  return report;
}

}  // namespace strata::sim
