#pragma once

#include <deque>
#include <string>
#include <vector>

#include "autoscaler/policy.h"

namespace strata::autoscaler {

// The knobs of RatePolicy. Plain data; RateDefaults gives strata's choices.
struct RateOptions {
  std::string name = "strata";
  // The latency objective the capacity estimate is learned against: a request whose first token
  // comes later (or which is refused) is a miss.
  Duration ttft_slo = std::chrono::seconds(2);
  // The share of answered requests per capacity window that may miss before the estimate drops.
  double miss_budget = 0.01;
  // Off (the default): the policy plans in requests. On: it plans in work, a request's work
  // being its prompt tokens (LoadSample::prompt_tokens_total) plus `request_tokens`, what its
  // fixed costs (the prefill's overhead, its share of the decode steps) weigh in prompt tokens;
  // rates, capacity and queue are then counted in work per second. On the Azure 2023
  // conversation trace it cost more GPU-hours for no better attainment (bench/autoscale).
  bool plan_in_prompt_tokens = false;
  double request_tokens = 300;
  // Average requests per second one ready replica serves within the objective, before anything
  // is learned (turned into work per second at the mean work per request first seen). Learning
  // moves it; a conservative start costs GPU-hours, not misses.
  double initial_capacity = 1.0;
  double min_capacity = 0.05;
  // The estimate is revised once per capacity window, from that window's arrivals per ready
  // replica and its misses: over budget while no replica was starting and the replicas carried
  // no more than the estimate, it falls towards `capacity_backoff` x the observed rate;
  // within half the budget while replicas carried at least `probe_load` x the estimate, it rises
  // towards the larger of itself and that rate, times (1 + capacity_probe). Each revision moves
  // it `capacity_smoothing` of the way there: one window's misses often come from a cluster of
  // long prompts rather than from too little capacity, and a full jump made the replayed
  // results swing by points of attainment with the smallest change of input (bench/autoscale).
  //
  // When the feeder reports busy time (LoadSample::prefill_busy_seconds_total), the capacity is
  // measured instead: over the capacity window, the requests served (answered) per
  // replica-second busy prefilling, times `target_busy_share`. It follows the prompt mix at
  // once (long prompts make a replica busier at the same rate) and needs no misses to find the
  // level. A replica busy three quarters of the time queues a new prompt behind about 1.5 mean
  // prefills on average (M/D/1), which keeps the tail of the time to first token within a 2 s
  // objective for prefills of a few hundred milliseconds; a tighter objective or longer prompts
  // want a lower share. Served, not arrived: after a backlog the replicas serve at their full
  // rate while few new requests arrive, and the arrival rate over the busy share made the
  // estimate collapse (bench/autoscale: 0.17 req/s per replica, the replica cap held for 15-42
  // requests a minute). With fewer than `min_measured_requests` served in the window the last
  // estimate stands. 0 turns it off.
  double target_busy_share = 0.75;
  int64_t min_measured_requests = 10;
  Duration capacity_window = std::chrono::seconds(60);
  double capacity_backoff = 0.9;
  double capacity_probe = 0.1;
  double probe_load = 0.5;
  double capacity_smoothing = 0.3;
  // Fewer answered requests than this in a window teach nothing.
  int64_t min_window_requests = 50;
  // Spare capacity provisioned on top of the forecast need: replicas = need x (1 + headroom) /
  // capacity. The knob that trades GPU-hours for attainment.
  double headroom = 0;
  // Arrival rates: `burst_window` sees a burst, `level_window` the level, and the level's change
  // between two consecutive trend windows is the trend, extrapolated over `cold_start` (the
  // measured time from a replica's creation to its readiness) so a replica asked for now is
  // ready when the load it serves arrives, but never further than one trend window: a trend
  // is not known to last longer than the window that measured it. The forecast grows at most
  // `max_forecast_growth` x.
  Duration cold_start = std::chrono::seconds(82);
  Duration burst_window = std::chrono::seconds(10);
  Duration level_window = std::chrono::seconds(60);
  Duration trend_window = std::chrono::seconds(120);
  double max_forecast_growth = 1.5;
  // Poisson burst headroom: the need includes `burst_sigmas` standard deviations of the
  // arrivals in one burst window at the forecast rate. 0.5 rather than 1: the learned capacity
  // already absorbs most bursts (bench/autoscale: 0.59x instead of 0.61x static-peak's
  // GPU-hours at an 82 s cold start, both above 99 %).
  double burst_sigmas = 0.5;
  // Requests queued (in the engines or held by the gateway) ask for the extra rate that drains
  // them within `drain_time`.
  Duration drain_time = std::chrono::seconds(30);
  // Scale-down: a lower count applies only once every decision over `scale_down_delay` wanted
  // no more, and then by at most one replica per `scale_down_step`. Beyond the delay, the k-th
  // replica (k >= 2) is kept while the rate (the queue left out) does not want it if the spells
  // in which the rate did not want it have come back as surprises: the rate wanted k again
  // while half a cold start earlier it wanted fewer than k x target_busy_share, replicas that
  // could not carry the load even fully busy (a step the forecast did not see coming, not a
  // ramp it follows), so a replica given back would have been ordered too late. A spell that
  // began with a step down (within half a cold start of wanting k, the level rate fell below
  // half its top and below what k x target_busy_share replicas carry) counts as one more that
  // comes back as a surprise: a load that left at once is expected to return at once, so the
  // first off spell of an on-off service is held before any return has been seen. It is kept
  // until the expected rest of the spell (as for the idle gap below, but, unless it began with
  // a step, only while some spell that came back lasted longer) exceeds a return's cost: the
  // cold start plus, at the share of surprise returns, the cold start less the objective of the
  // replica's capacity late, each late request priced as below.
  Duration scale_down_delay = std::chrono::seconds(120);
  Duration scale_down_step = std::chrono::seconds(5);
  // The arrival rates, the capacity and the wanted counts the scale-down delay holds are taken
  // from at most one sample per `rate_sample_period`; the samples between give only their queue
  // (which asks at once for the rate that drains it), their replicas and their activity. So the
  // counts do not depend on how often the policy is asked: recording every sample, the policy
  // asked every 100-200 ms inside `strata up` saw more of the 10 s burst window's peaks than
  // `sim autoscale` asking every second, and held each for the scale-down delay (bench/autoscale
  // live check: +2 % GPU-hours on the same slice of trace).
  Duration rate_sample_period = std::chrono::seconds(1);
  // Scale to zero: the last replica goes only after no load and no arrivals for
  // `scale_to_zero_after`, and then only once the idle gap forecast from the history pays for
  // a return: the expected rest of the gap (over the idle spells seen to end that lasted longer
  // than this one has so far, with this one's length counted as one more: a spell longer than
  // any seen is expected to last as long again) must exceed what a return from zero costs in
  // replica-seconds: the cold start, plus the requests it makes late (the rate before the gap
  // over the cold start less the objective), each priced at the replica time that serves the
  // 1 / miss_budget requests in the objective that one miss is allowed for. So a service whose
  // bursts come back keeps one replica through its gaps (a burst meeting zero replicas is late
  // for a whole cold start), and one left idle for good still goes to zero.
  Duration scale_to_zero_after = std::chrono::seconds(90);
  int min_replicas = 0;
  int max_replicas = 64;
};

// strata's choices for a service whose replicas take `cold_start` to become ready: forecast
// over the cold start, and capacity held for a cold start (at least a minute) before it is
// given back, since a replica given back too early costs a cold start to bring back.
RateOptions RateDefaults(Duration cold_start);

// InvalidArgument naming the field when `options` cannot make a policy.
Status ValidateRateOptions(const RateOptions& options);

// strata's autoscaling policy: replicas for the forecast arrival rate over a per-replica
// service rate that it learns online.
//
// - Need: the larger of the burst-window rate and the level-window rate extrapolated one cold
//   start (at most one trend window) ahead along its trend, plus Poisson burst headroom, plus the
//   rate that drains the queued requests within the drain time.
// - Capacity: requests/s one ready replica serves within the TTFT objective: measured from the
//   requests the replicas serve per second busy prefilling when the feeder reports busy time;
//   otherwise learned from the signals alone (arrivals, ready replicas, answered and late first
//   tokens): lowered to the rate that missed, raised slowly while the replicas carry the
//   planned rate without misses.
//   A queue therefore asks only for the capacity that drains it, never for one replica per
//   `target` queued requests, so a burst cannot ask for a multiple of what the rate needs.
// - With plan_in_prompt_tokens, rates, capacity and queue count work (prompt tokens plus a
//   fixed weight per request) instead of requests; decisions still report requests/s.
// - Replicas = ceil(need x (1 + headroom) / capacity), clamped to [min, max]; scale-down waits
//   for the scale-down delay and then gives back one replica per step (a drained replica
//   finishes its streams), except a replica whose earlier spells out of use ended in a step it
//   could not have been ordered back in time for, or whose spell out of use began with a step
//   down (expected to end in one); the last replica goes after the idle period,
//   once the idle gap forecast from the gaps seen pays for a return from zero.
// - Rates, capacity and the counts held for scale-down come from at most one sample per
//   rate_sample_period, so the answer does not depend on how often the policy is asked; the
//   queue counts at every sample.
//
// Nothing reads the future: every figure comes from samples already taken. Pure and
// deterministic; time enters only as `now`. Owned by the loop that feeds it; not thread-safe.
class RatePolicy final : public ScalingPolicy {
 public:
  // REQUIRES: ValidateRateOptions(options).ok().
  explicit RatePolicy(RateOptions options);

  Decision Decide(const LoadSample& sample, TimePoint now) override;
  std::string_view name() const override { return options_.name; }
  // The forecast looks `cold_start` ahead from the next decision on (the scale-down delay and
  // idle period stay as constructed).
  void SetColdStart(Duration cold_start) override;

  // Work per second (see plan_in_prompt_tokens) one ready replica serves within the objective,
  // as currently estimated; 0 before the first decision.
  double capacity() const { return capacity_; }
  const RateOptions& options() const { return options_; }

 private:
  struct Point {
    TimePoint at;
    int64_t arrivals_total;
    double work_total;  // requests, or prompt tokens + request_tokens per request, since the start
    int64_t answered_total;
    int64_t late_total;
    double busy_seconds_total;
    int ready;
    int starting;
  };
  struct Wanted {
    TimePoint at;
    int replicas;
  };

  // Work (requests, or see plan_in_prompt_tokens) per second between now - to_ago - window and
  // now - to_ago (0 without samples).
  double WorkRate(TimePoint now, Duration to_ago, Duration window) const;
  // Mean work of one request over the samples kept (1 when planning in requests).
  double WorkPerRequest() const;
  // The last sample at or before `t`, or the oldest one.
  const Point& PointAt(TimePoint t) const;
  // Revises capacity_ once per capacity window; appends what it did to `why`.
  void LearnCapacity(TimePoint now, std::string& why);
  // With busy time reported: sets capacity_ from the carried rate and the busy share over the
  // last capacity window; appends what it did to `why`. False when there is no measurement.
  bool MeasureCapacity(TimePoint now, std::string& why);
  // Applies the scale-down delay and step to `wanted`, remembering it for the delay when
  // `remember`; appends what it did to `why`.
  int HoldForScaleDown(int wanted, TimePoint now, bool remember, std::string& why);
  // Replicas for `rate` (work per second) at the current capacity and headroom.
  int ReplicasFor(double rate) const;
  // Records the rate alone (no queue) needs at `now` and the spells in which it wanted fewer
  // than each count of replicas.
  void RecordRateWanted(double rate_need, double level_need, TimePoint now);
  // Whether the `replica`-th replica (>= 2) is kept beyond the scale-down delay because its
  // spells came back as surprises (see scale_down_delay); appends why to `why`.
  bool HoldForSurpriseReturn(int replica, TimePoint now, std::string& why) const;
  // Whether an idle spell of `idle_for` is forecast to last long enough to pay for a return
  // from zero (see scale_to_zero_after); when not, sets `keeping` to why one replica stays.
  bool IdleGapPaysForColdStart(Duration idle_for, double per_request, std::string& keeping) const;

  RateOptions options_;
  double capacity_ = 0;
  std::deque<Point> points_;
  std::deque<Wanted> wanted_;
  TimePoint last_learned_{};
  TimePoint last_step_down_{};
  TimePoint last_active_{};
  bool seen_activity_ = false;
  // The idle spells (at least scale_to_zero_after long) that ended with an arrival, oldest
  // first, and the arrival rate (requests/s over the level window) at the last sample that saw
  // an arrival.
  std::deque<Duration> idle_gaps_;
  double rate_before_idle_ = 0;
  // The rate alone needed at each recorded sample over half a cold start, and per
  // count k (index k - 1, up to max_replicas) the spell in which it has wanted fewer (if one is
  // open) and the spells that ended (at least scale_down_delay long), each with whether it came
  // back as a surprise.
  struct Spell {
    Duration length;
    bool surprise;
  };
  struct Level {
    bool unwanted = false;
    TimePoint since{};
    // Whether the open spell began with a step down (see RecordRateWanted).
    bool stepped = false;
    std::deque<Spell> ended;
  };
  struct RateNeed {
    TimePoint at;
    double rate;
    double level;
  };
  std::deque<RateNeed> rate_needs_;
  std::vector<Level> levels_;
  int last_desired_ = 0;
};

}  // namespace strata::autoscaler
