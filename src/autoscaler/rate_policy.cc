#include "autoscaler/rate_policy.h"

#include <algorithm>
#include <cmath>

#include "common/check.h"
#include "fmt/format.h"

namespace strata::autoscaler {
namespace {

int64_t Seconds(Duration d) { return std::chrono::duration_cast<std::chrono::seconds>(d).count(); }

// Idle spells remembered for the scale-to-zero forecast, and spells per replica count.
constexpr size_t kIdleGapsKept = 64;
constexpr size_t kSpellsKept = 32;

// The expected rest of a spell that has lasted `so_far`, from the lengths (`length(spell)`) of
// the spells that ended: over those that lasted longer, with this one counted as one more that
// lasts as long again (a spell longer than any seen is expected to last as long again).
template <typename Spells, typename Length>
double ExpectedRest(Duration so_far, const Spells& spells, Length length) {
  double rest = ToSeconds(so_far);
  int longer = 1;
  for (const auto& spell : spells) {
    if (length(spell) > so_far) {
      rest += ToSeconds(length(spell) - so_far);
      ++longer;
    }
  }
  return rest / longer;
}

}  // namespace

RateOptions RateDefaults(Duration cold_start) {
  RateOptions options;
  options.cold_start = cold_start;
  options.scale_down_delay = std::max<Duration>(cold_start, std::chrono::seconds(60));
  options.scale_to_zero_after = std::max<Duration>(cold_start, std::chrono::seconds(90));
  return options;
}

Status ValidateRateOptions(const RateOptions& options) {
  Status bounds = ValidateReplicaBounds(options.min_replicas, options.max_replicas);
  if (!bounds.ok()) return bounds;
  if (options.ttft_slo <= Duration{0}) return InvalidArgumentError("ttftSlo: must be > 0");
  if (!(options.miss_budget > 0 && options.miss_budget < 1)) {
    return InvalidArgumentError("missBudget: must be in (0, 1)");
  }
  if (!(options.min_capacity > 0) || !(options.initial_capacity >= options.min_capacity)) {
    return InvalidArgumentError("initialCapacity: must be >= minCapacity, which must be > 0");
  }
  if (!(options.capacity_backoff > 0 && options.capacity_backoff < 1)) {
    return InvalidArgumentError("capacityBackoff: must be in (0, 1)");
  }
  if (!(options.capacity_smoothing > 0 && options.capacity_smoothing <= 1)) {
    return InvalidArgumentError("capacitySmoothing: must be in (0, 1]");
  }
  if (!(options.capacity_probe >= 0) || !(options.probe_load >= 0)) {
    return InvalidArgumentError("capacityProbe, probeLoad: must be >= 0");
  }
  if (!(options.headroom >= 0)) return InvalidArgumentError("headroom: must be >= 0");
  if (!(options.target_busy_share >= 0 && options.target_busy_share < 1)) {
    return InvalidArgumentError("targetBusyShare: must be in [0, 1)");
  }
  if (options.min_measured_requests < 1) {
    return InvalidArgumentError("minMeasuredRequests: must be >= 1");
  }
  if (!(options.request_tokens > 0)) return InvalidArgumentError("requestTokens: must be > 0");
  if (!(options.burst_sigmas >= 0)) return InvalidArgumentError("burstSigmas: must be >= 0");
  if (!(options.max_forecast_growth >= 1)) {
    return InvalidArgumentError("maxForecastGrowth: must be >= 1");
  }
  for (const auto& [field, window] :
       {std::pair{"capacityWindow", options.capacity_window},
        std::pair{"burstWindow", options.burst_window},
        std::pair{"levelWindow", options.level_window},
        std::pair{"trendWindow", options.trend_window}, std::pair{"drainTime", options.drain_time},
        std::pair{"scaleDownStep", options.scale_down_step},
        std::pair{"rateSamplePeriod", options.rate_sample_period}}) {
    if (window <= Duration{0}) return InvalidArgumentError(fmt::format("{}: must be > 0", field));
  }
  if (options.cold_start < Duration{0} || options.scale_down_delay < Duration{0} ||
      options.scale_to_zero_after < Duration{0}) {
    return InvalidArgumentError("coldStart, scaleDownDelay, scaleToZeroAfter: must be >= 0");
  }
  return Status::Ok();
}

RatePolicy::RatePolicy(RateOptions options) : options_(std::move(options)) {
  STRATA_CHECK(ValidateRateOptions(options_).ok());
}

const RatePolicy::Point& RatePolicy::PointAt(TimePoint t) const {
  STRATA_CHECK(!points_.empty());
  // Samples are in time order: the last one at or before t.
  auto after = std::upper_bound(points_.begin(), points_.end(), t,
                                [](TimePoint at, const Point& point) { return at < point.at; });
  return after == points_.begin() ? points_.front() : *std::prev(after);
}

double RatePolicy::WorkRate(TimePoint now, Duration to_ago, Duration window) const {
  const Point& end = PointAt(now - to_ago);
  const Point& begin = PointAt(now - to_ago - window);
  if (end.at <= begin.at) return 0;
  return (end.work_total - begin.work_total) / ToSeconds(end.at - begin.at);
}

double RatePolicy::WorkPerRequest() const {
  const Point& begin = points_.front();
  const Point& end = points_.back();
  if (end.arrivals_total > begin.arrivals_total) {
    return (end.work_total - begin.work_total) /
           static_cast<double>(end.arrivals_total - begin.arrivals_total);
  }
  if (end.arrivals_total > 0) return end.work_total / static_cast<double>(end.arrivals_total);
  return options_.plan_in_prompt_tokens ? options_.request_tokens : 1;
}

bool RatePolicy::MeasureCapacity(TimePoint now, std::string& why) {
  if (options_.target_busy_share == 0) return false;
  const Point& begin = PointAt(now - options_.capacity_window);
  const Point& end = points_.back();
  if (end.at <= begin.at || end.busy_seconds_total <= 0) return false;
  const int64_t served = end.answered_total - begin.answered_total;
  const double busy = end.busy_seconds_total - begin.busy_seconds_total;
  if (served < options_.min_measured_requests || busy <= 0) return true;
  // The rate of a replica while it prefills, whatever the arrivals did meanwhile: a backlog
  // keeps it busy at its full rate, and a replica idle most of the time still measures its
  // prefills. The mean work of a request converts it when planning in prompt tokens.
  const double per_request = WorkPerRequest();
  capacity_ = static_cast<double>(served) * per_request / busy * options_.target_busy_share;
  why +=
      fmt::format("; {} served in {:.1f} replica-seconds busy prefilling: {:.2f} req/s at {:.0f}%",
                  served, busy, capacity_ / per_request, options_.target_busy_share * 100);
  return true;
}

void RatePolicy::LearnCapacity(TimePoint now, std::string& why) {
  if (now - last_learned_ < options_.capacity_window) return;
  const Point& begin = PointAt(now - options_.capacity_window);
  const Point& end = points_.back();
  if (end.at - begin.at < options_.capacity_window) return;
  const int64_t answered = end.answered_total - begin.answered_total;
  if (answered < options_.min_window_requests) return;
  double ready_sum = 0;
  int samples = 0;
  bool scaling_up = false;
  for (auto it = points_.rbegin(); it != points_.rend() && it->at > begin.at; ++it) {
    ready_sum += it->ready;
    scaling_up = scaling_up || it->starting > 0;
    ++samples;
  }
  if (ready_sum == 0) return;
  last_learned_ = now;
  const double per_replica =
      (end.work_total - begin.work_total) / ToSeconds(end.at - begin.at) / (ready_sum / samples);
  const double per_request = WorkPerRequest();
  const double missed =
      static_cast<double>(end.late_total - begin.late_total) / static_cast<double>(answered);
  // Misses while replicas carried more than the estimate, or while the replicas asked for were
  // still starting, say the count was short, not that the estimate is wrong.
  double revised = capacity_;
  if (missed > options_.miss_budget && per_replica <= capacity_ && !scaling_up) {
    revised =
        std::max(options_.min_capacity * per_request, per_replica * options_.capacity_backoff);
  } else if (missed <= options_.miss_budget / 2 && per_replica >= options_.probe_load * capacity_) {
    revised = std::max(capacity_, per_replica) * (1 + options_.capacity_probe);
  }
  if (revised == capacity_) return;
  revised = capacity_ + options_.capacity_smoothing * (revised - capacity_);
  why += fmt::format("; {:.1f}% late at {:.2f} req/s per replica: capacity {:.2f} -> {:.2f}",
                     missed * 100, per_replica / per_request, capacity_ / per_request,
                     revised / per_request);
  capacity_ = revised;
}

int RatePolicy::HoldForScaleDown(int wanted, TimePoint now, bool remember, std::string& why) {
  if (remember) wanted_.push_back({now, wanted});
  while (!wanted_.empty() && now - wanted_.front().at > options_.scale_down_delay) {
    wanted_.pop_front();
  }
  int held = wanted;
  for (const Wanted& earlier : wanted_) held = std::max(held, earlier.replicas);
  if (held >= last_desired_) return held;
  if (now - points_.front().at < options_.level_window) {
    why += fmt::format("; no scale-down before {}s of signals", Seconds(options_.level_window));
    return last_desired_;
  }
  if (HoldForSurpriseReturn(last_desired_, now, why)) return last_desired_;
  if (now - last_step_down_ < options_.scale_down_step) {
    why += fmt::format("; next step down after {}s", Seconds(options_.scale_down_step));
    return last_desired_;
  }
  last_step_down_ = now;
  if (held < last_desired_ - 1) why += "; stepping down one replica";
  return last_desired_ - 1;
}

bool RatePolicy::IdleGapPaysForColdStart(Duration idle_for, double per_request,
                                         std::string& keeping) const {
  const double rest = ExpectedRest(idle_for, idle_gaps_, [](Duration gap) { return gap; });
  const double late =
      rate_before_idle_ *
      ToSeconds(std::max<Duration>(Duration{0}, options_.cold_start - options_.ttft_slo));
  const double seconds_per_late = per_request / capacity_ / options_.miss_budget;
  const double cost = ToSeconds(options_.cold_start) + late * seconds_per_late;
  if (rest > cost) return true;
  keeping = fmt::format(
      "while the idle gap is not forecast to pay for a return (idle {}s, {:.0f}s more expected; "
      "a return from zero costs {:.0f} replica-seconds: {}s cold start, {:.0f} late at {:.2f} "
      "req/s)",
      Seconds(idle_for), rest, cost, Seconds(options_.cold_start), late, rate_before_idle_);
  return false;
}

int RatePolicy::ReplicasFor(double rate) const {
  return static_cast<int>(std::ceil(rate * (1 + options_.headroom) / capacity_ - 1e-9));
}

void RatePolicy::RecordRateWanted(double rate_need, double level_need, TimePoint now) {
  rate_needs_.push_back({now, rate_need, level_need});
  while (now - rate_needs_.front().at > options_.cold_start / 2 + options_.rate_sample_period) {
    rate_needs_.pop_front();
  }
  // The rates of the last half cold start, counted at today's capacity (so a revised capacity
  // is not mistaken for a change of load). Half a cold start ago, the oldest rate kept: a rise
  // since then that the replicas it wanted could not carry even fully busy (each is planned at
  // the target busy share) is a step the forecast, about a cold start ahead, did not see
  // coming. A step down is judged on the level rate alone (the 10 s bursts and the trend's
  // swings are not the load leaving): within half a cold start of wanting a replica, the level
  // fell below half its top and below what the replicas carry fully busy.
  const int rate_wanted = ReplicasFor(rate_need);
  const int wanted_before = ReplicasFor(rate_needs_.front().rate);
  const auto top =
      std::max_element(rate_needs_.begin(), rate_needs_.end(),
                       [](const RateNeed& a, const RateNeed& b) { return a.level < b.level; });
  const int wanted_lately = ReplicasFor(top->level);
  const int level_wanted = ReplicasFor(level_need);
  const double carried_share = options_.target_busy_share > 0 ? options_.target_busy_share : 1.0;
  const int counted = std::min(rate_wanted, options_.max_replicas);
  if (static_cast<int>(levels_.size()) < counted) levels_.resize(counted);
  for (int replica = 2; replica <= static_cast<int>(levels_.size()); ++replica) {
    Level& level = levels_[replica - 1];
    if (rate_wanted < replica) {
      if (!level.unwanted) {
        level.unwanted = true;
        level.since = now;
        level.stepped = false;
      }
      if (wanted_lately >= replica && level_wanted < replica * carried_share &&
          level_need < top->level / 2) {
        level.stepped = true;
      }
      continue;
    }
    if (!level.unwanted) continue;
    level.unwanted = false;
    if (now - level.since < options_.scale_down_delay) continue;
    level.ended.push_back({now - level.since, wanted_before < replica * carried_share});
    if (level.ended.size() > kSpellsKept) level.ended.pop_front();
  }
}

bool RatePolicy::HoldForSurpriseReturn(int replica, TimePoint now, std::string& why) const {
  if (replica < 2 || replica > static_cast<int>(levels_.size())) return false;
  const Level& level = levels_[replica - 1];
  if (!level.unwanted) return false;
  // The open spell, when it began with a step down, counts as one more that comes back as a
  // step: a load that left at once is expected to return at once. So the first step of a
  // service is held before any return has been seen (on-off bursts: the first return from an
  // off spell met one replica and was late for a whole cold start).
  const auto surprises = std::count_if(level.ended.begin(), level.ended.end(),
                                       [](const Spell& spell) { return spell.surprise; }) +
                         (level.stepped ? 1 : 0);
  if (surprises == 0) return false;
  const double surprise_share = static_cast<double>(surprises) /
                                static_cast<double>(level.ended.size() + (level.stepped ? 1 : 0));
  // A surprise return finds the replica cold: its capacity's worth of requests late for the
  // cold start less the objective, each priced at the replica time of 1 / miss_budget requests.
  const double late_seconds =
      ToSeconds(std::max<Duration>(Duration{0}, options_.cold_start - options_.ttft_slo));
  const double cost =
      ToSeconds(options_.cold_start) + surprise_share * late_seconds / options_.miss_budget;
  // Kept until the expected rest of the spell exceeds a return's cost (a spell longer than any
  // seen is expected to last as long again), so a spell that never ends costs at most that.
  const Duration unwanted_for = now - level.since;
  // Unwanted for longer than any spell that came back, and not left at once: no return is in
  // sight.
  if (!level.stepped && !level.ended.empty() &&
      std::none_of(level.ended.begin(), level.ended.end(),
                   [&](const Spell& spell) { return spell.length > unwanted_for; })) {
    return false;
  }
  const double rest =
      ExpectedRest(unwanted_for, level.ended, [](const Spell& spell) { return spell.length; });
  if (rest > cost) return false;
  why += fmt::format(
      "; keeping replica {}: {} of its last {} spells unwanted {} as steps (unwanted {}s, {:.0f}s "
      "more expected, a return costs {:.0f} replica-seconds)",
      replica, surprises, level.ended.size() + (level.stepped ? 1 : 0),
      level.stepped ? "began or came back" : "came back", Seconds(unwanted_for), rest, cost);
  return true;
}

void RatePolicy::SetColdStart(Duration cold_start) {
  STRATA_CHECK(cold_start >= Duration{0});
  options_.cold_start = cold_start;
}

Decision RatePolicy::Decide(const LoadSample& sample, TimePoint now) {
  const bool arrived = !points_.empty() && sample.arrivals_total > points_.back().arrivals_total;
  const bool active = sample.Load() > 0 || arrived;
  if (active) {
    if (seen_activity_ && now - last_active_ >= options_.scale_to_zero_after) {
      idle_gaps_.push_back(now - last_active_);
      if (idle_gaps_.size() > kIdleGapsKept) idle_gaps_.pop_front();
    }
    last_active_ = now;
    seen_activity_ = true;
  }
  if (points_.empty()) {
    // The count in place when scaling starts is the one scale-down steps from.
    last_learned_ = now;
    last_desired_ = sample.ready_replicas + sample.starting_replicas;
  }
  // Everything measured over windows is read at the last recorded sample, `at`.
  const bool record = points_.empty() || now - points_.back().at >= options_.rate_sample_period;
  if (record) {
    const double arrivals = static_cast<double>(sample.arrivals_total);
    const double work_total =
        options_.plan_in_prompt_tokens
            ? static_cast<double>(sample.prompt_tokens_total) + options_.request_tokens * arrivals
            : arrivals;
    points_.push_back({now, sample.arrivals_total, work_total, sample.answered_total,
                       sample.late_total, sample.prefill_busy_seconds_total, sample.ready_replicas,
                       sample.starting_replicas});
    // A burst window more than the longest look-back, so a whole one is always there.
    const Duration keep =
        std::max({options_.capacity_window, 2 * options_.trend_window, options_.level_window}) +
        options_.burst_window;
    while (now - points_.front().at > keep) points_.pop_front();
  }
  const TimePoint at = points_.back().at;

  // Work per request converts between requests and work: the capacity before anything is
  // learned, the Poisson margin (arrivals are counted in requests) and the queue.
  const double per_request = WorkPerRequest();
  if (capacity_ == 0) capacity_ = options_.initial_capacity * per_request;
  std::string why;
  if (!MeasureCapacity(at, why)) LearnCapacity(at, why);

  const double burst = WorkRate(at, Duration{0}, options_.burst_window);
  const double level = WorkRate(at, Duration{0}, options_.level_window);
  // The trend compares the last two trend windows, once the samples cover both; each window's
  // rate is its mean, centred half a window back, and so is the level's.
  double slope = 0;
  if (at - points_.front().at >= 2 * options_.trend_window) {
    const double recent = WorkRate(at, Duration{0}, options_.trend_window);
    const double before = WorkRate(at, options_.trend_window, options_.trend_window);
    slope = (recent - before) / ToSeconds(options_.trend_window);
  }
  // A trend measured over one trend window says little about the load further ahead than
  // that: extrapolated over a five-minute cold start it ordered replicas for peaks that had
  // passed by the time they were ready (bench/autoscale: 0.96x -> 0.85x static-peak at 294 s).
  const double ahead = ToSeconds(std::min(options_.cold_start, options_.trend_window)) +
                       ToSeconds(options_.level_window) / 2;
  const double forecast =
      std::clamp(level + slope * ahead, 0.0, options_.max_forecast_growth * std::max(level, burst));
  // The level serves now and the forecast one cold start from now; the Poisson margin covers
  // the bursts the expected rate brings, and a burst already larger than that counts as it is.
  const double expected = std::max(level, forecast);
  const double burst_margin = options_.burst_sigmas *
                              std::sqrt(expected / per_request / ToSeconds(options_.burst_window)) *
                              per_request;
  const int64_t queued = sample.waiting + sample.gateway_queued;
  const double drain = static_cast<double>(queued) * per_request / ToSeconds(options_.drain_time);
  const double need = std::max(expected + burst_margin, burst) + drain;
  const int wanted = ReplicasFor(need);
  if (record) RecordRateWanted(std::max(expected + burst_margin, burst), level, at);
  const std::string work =
      options_.plan_in_prompt_tokens ? fmt::format(" ({:.0f} tokens/request)", per_request) : "";
  why = fmt::format(
            "arrivals {:.2f} req/s over {}s, {:.2f} over {}s, forecast {:.2f} in {}s{}; {} "
            "queued; need {:.2f} req/s (+{:.0f}% headroom) at {:.2f} req/s per replica wants {}",
            burst / per_request, Seconds(options_.burst_window), level / per_request,
            Seconds(options_.level_window), forecast / per_request, Seconds(options_.cold_start),
            work, queued, need / per_request, options_.headroom * 100, capacity_ / per_request,
            wanted) +
        why;

  if (arrived) rate_before_idle_ = level / per_request;
  bool idle = !seen_activity_;
  std::string keeping = fmt::format("until idle for {}s", Seconds(options_.scale_to_zero_after));
  if (seen_activity_ && now - last_active_ >= options_.scale_to_zero_after) {
    idle = IdleGapPaysForColdStart(now - last_active_, per_request, keeping);
  }
  const int desired =
      ApplyIdleAndBounds(HoldForScaleDown(wanted, now, record, why), sample, idle, keeping,
                         options_.min_replicas, options_.max_replicas, why);
  last_desired_ = desired;
  Decision decision{desired, false, fmt::format("{} -> {} replicas", why, desired)};
  decision.arrival_rate = burst / per_request;
  decision.forecast_rate = need / per_request;
  decision.capacity_per_replica = capacity_ / per_request;
  return decision;
}

}  // namespace strata::autoscaler
