#include "sim/autoscale_sim.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <memory>

#include "autoscaler/autoscaler.h"
#include "autoscaler/keda_policy.h"
#include "autoscaler/rate_policy.h"
#include "autoscaler/windowed_policy.h"
#include "common/check.h"
#include "fmt/format.h"
#include "gateway/picker.h"
#include "sim/sim_picker_options.h"
#include "sim/stepping_engine.h"

namespace strata::sim {
namespace {

const autoscaler::TargetKey kTarget{"replay", "v1"};
constexpr Duration kKnativeTick = std::chrono::seconds(2);
constexpr double kPeakAttainment = 0.99;

struct Replica : SteppingEngine {
  explicit Replica(const engine::EngineOptions& options) : SteppingEngine(options) {}
  std::string id;
  TimePoint created{};
  TimePoint ready_at{};
  bool announced = false;  // readiness seen by the gateway
  bool draining = false;
  int64_t in_flight = 0;
  // Requests sent here still waiting for their first token, since when there have been some.
  int64_t awaiting_first_token = 0;
  TimePoint busy_since{};
};

struct RequestState {
  TimePoint arrival{};
  TimePoint first_token{};
  bool answered = false;  // first token produced
  bool rejected = false;
  bool during_scale_up = false;
  uint64_t ticket = 0;  // the picker's name for this request's prefill
};

// Nearest-rank percentile of sorted `values` (0 when empty).
double Percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const size_t rank = static_cast<size_t>(std::ceil(p * static_cast<double>(sorted.size())));
  return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

// One replay: the cluster of replicas, the gateway (picker + activator) and the autoscaler, in
// virtual time. Runs once.
class Replay {
 public:
  Replay(const std::vector<TraceRequest>& trace, const AutoscaleSimOptions& options,
         std::unique_ptr<autoscaler::ScalingPolicy> policy, Duration decision_interval,
         int initial_replicas)
      : trace_(trace),
        options_(options),
        decision_interval_(decision_interval),
        initial_replicas_(initial_replicas),
        clock_(kStart),
        autoscaler_(clock_, registry_),
        picker_(SimPickerOptions(engine::EngineModel(options.engine), trace.front().block_tokens)),
        requests_(trace.size()) {
    STRATA_CHECK(autoscaler_.AddTarget(kTarget, std::move(policy)).ok());
  }

  AutoscaleSimReport Run();

 private:
  static constexpr TimePoint kStart = FakeClock::kDefaultStart;

  void AddReplica(TimePoint now, TimePoint ready_at);
  void StopReplica(size_t index, TimePoint now);
  void FinishStep(size_t index, TimePoint now);
  void Arrive(size_t request, TimePoint now);
  // The gateway answers `request` now: its first token, or a refusal.
  void Answer(size_t request, TimePoint now, bool refused);
  // Routes `request` to a ready replica; false when none is eligible.
  bool Route(size_t request, TimePoint now);
  void FlushHeld(TimePoint now);
  void ExpireHeld(TimePoint now);
  void Decide(TimePoint now);
  // Adds the replicas paid for and ready now to the current minute's means.
  void SampleMinute(TimePoint now);
  // The index of the minute `t` falls in, growing the timeline to hold it.
  size_t MinuteIndex(TimePoint t);
  void Apply(int desired, TimePoint now);
  bool AnyServing() const;
  int Starting() const;

  const std::vector<TraceRequest>& trace_;
  const AutoscaleSimOptions& options_;
  const Duration decision_interval_;
  const int initial_replicas_;
  FakeClock clock_;
  metrics::Registry registry_;
  autoscaler::Autoscaler autoscaler_;
  gateway::Picker picker_;
  std::vector<std::unique_ptr<Replica>> replicas_;
  std::vector<RequestState> requests_;
  std::deque<size_t> held_;
  std::vector<double> held_waits_;
  int64_t arrivals_ = 0;
  int64_t prompt_tokens_ = 0;
  int64_t answered_ = 0;
  int64_t late_ = 0;
  int64_t next_replica_id_ = 0;
  Duration gpu_time_{0};
  // Replica time with a request waiting for its first token, over the busy spells that have
  // ended (see LoadSample::prefill_busy_seconds_total).
  Duration busy_time_{0};
  TimePoint first_arrival_{};
  std::vector<int64_t> minute_samples_;
  AutoscaleSimReport report_;
};

void Replay::AddReplica(TimePoint now, TimePoint ready_at) {
  auto replica = std::make_unique<Replica>(options_.engine);
  replica->id = fmt::format("replica-{}", next_replica_id_++);
  replica->created = now;
  replica->ready_at = ready_at;
  replicas_.push_back(std::move(replica));
  report_.peak_replicas = std::max(report_.peak_replicas, static_cast<int>(replicas_.size()));
}

void Replay::StopReplica(size_t index, TimePoint now) {
  gpu_time_ += now - replicas_[index]->created;
  picker_.ForgetEndpoint(replicas_[index]->id);
  replicas_.erase(replicas_.begin() + static_cast<std::ptrdiff_t>(index));
}

void Replay::FinishStep(size_t index, TimePoint now) {
  Replica& replica = *replicas_[index];
  replica.busy = false;
  for (const engine::TokenOutput& output : replica.pending.outputs) {
    if (output.index == 0) {
      if (--replica.awaiting_first_token == 0) busy_time_ += now - replica.busy_since;
      Answer(output.request_id, now, false);
      picker_.PrefillDone(replica.id, requests_[output.request_id].ticket, now);
    }
    if (output.finished) {
      --replica.in_flight;
      ++report_.completed;
    }
  }
  if (replica.model.HasWork()) {
    replica.StartStep(now);
  } else if (replica.draining && replica.in_flight == 0) {
    StopReplica(index, now);
  }
}

bool Replay::AnyServing() const {
  return std::any_of(replicas_.begin(), replicas_.end(),
                     [](const auto& r) { return r->announced && !r->draining; });
}

int Replay::Starting() const {
  return static_cast<int>(std::count_if(replicas_.begin(), replicas_.end(),
                                        [](const auto& r) { return !r->announced; }));
}

bool Replay::Route(size_t request, TimePoint now) {
  std::vector<gateway::EndpointState> endpoints(replicas_.size());
  for (size_t i = 0; i < replicas_.size(); ++i) {
    const Replica& replica = *replicas_[i];
    endpoints[i].id = replica.id;
    endpoints[i].ready = replica.announced;
    endpoints[i].draining = replica.draining;
    replica.Scrape(endpoints[i], now);
    endpoints[i].in_flight = replica.in_flight;
  }
  const std::vector<uint64_t> hashes = ChainedKeyHashes(trace_[request]);
  gateway::PickRequest pick;
  pick.block_hashes = hashes;
  const Result<gateway::PickResult> picked = picker_.Pick(endpoints, pick, now);
  if (!picked) return false;
  Replica& replica = *replicas_[picked->index];
  engine::EngineRequest engine_request;
  engine_request.id = request;
  engine_request.prompt = ExpandPrompt(trace_[request]);
  engine_request.max_tokens = trace_[request].output_tokens;
  if (!replica.model.Add(std::move(engine_request), now).ok()) {
    picker_.PrefillDone(replica.id, picked->ticket, now);
    Answer(request, now, true);
    return true;
  }
  requests_[request].ticket = picked->ticket;
  ++replica.in_flight;
  if (replica.awaiting_first_token++ == 0) replica.busy_since = now;
  if (!replica.busy) replica.StartStep(now);
  return true;
}

void Replay::Arrive(size_t request, TimePoint now) {
  ++arrivals_;
  prompt_tokens_ += trace_[request].input_tokens;
  requests_[request].arrival = now;
  requests_[request].during_scale_up = Starting() > 0;
  if (AnyServing() && Route(request, now)) return;
  if (held_.size() >= options_.activator_capacity) {
    Answer(request, now, true);
    return;
  }
  held_.push_back(request);
  ++report_.held_requests;
}

void Replay::Answer(size_t request, TimePoint now, bool refused) {
  RequestState& state = requests_[request];
  ++answered_;
  if (refused) {
    state.rejected = true;
  } else {
    state.first_token = now;
    state.answered = true;
  }
  if (refused || now - state.arrival > options_.ttft_slo) ++late_;
}

void Replay::ExpireHeld(TimePoint now) {
  while (!held_.empty() && now - requests_[held_.front()].arrival >= options_.activator_timeout) {
    Answer(held_.front(), now, true);
    held_waits_.push_back(ToSeconds(now - requests_[held_.front()].arrival));
    held_.pop_front();
  }
}

void Replay::FlushHeld(TimePoint now) {
  ExpireHeld(now);
  while (!held_.empty() && AnyServing()) {
    const size_t request = held_.front();
    if (!Route(request, now)) break;
    held_waits_.push_back(ToSeconds(now - requests_[request].arrival));
    held_.pop_front();
  }
}

void Replay::Decide(TimePoint now) {
  ExpireHeld(now);
  SampleMinute(now);
  autoscaler::LoadSample sample;
  sample.gateway_queued = static_cast<int64_t>(held_.size());
  sample.arrivals_total = arrivals_;
  sample.prompt_tokens_total = prompt_tokens_;
  Duration busy = busy_time_;
  for (const auto& replica : replicas_) {
    if (replica->awaiting_first_token > 0) busy += now - replica->busy_since;
  }
  sample.prefill_busy_seconds_total = ToSeconds(busy);
  sample.answered_total = answered_;
  sample.late_total = late_;
  double kv_sum = 0;
  for (const auto& replica : replicas_) {
    if (replica->draining) continue;
    if (!replica->announced) {
      ++sample.starting_replicas;
      continue;
    }
    const engine::EngineStats stats = replica->model.Stats();
    sample.waiting += stats.waiting;
    sample.running += stats.running;
    kv_sum += stats.kv_usage;
    ++sample.ready_replicas;
  }
  sample.kv_usage = sample.ready_replicas > 0 ? kv_sum / sample.ready_replicas : 0;
  clock_.Set(now);
  const Result<autoscaler::Decision> decision = autoscaler_.Evaluate(kTarget, sample);
  STRATA_CHECK(decision.has_value());
  AutoscaleMinute& minute = report_.minutes[MinuteIndex(now)];
  minute.desired = decision->desired;
  minute.forecast_rate = decision->forecast_rate;
  minute.capacity = decision->capacity_per_replica;
  Apply(decision->desired, now);
}

size_t Replay::MinuteIndex(TimePoint t) {
  const size_t index = static_cast<size_t>(std::max<int64_t>(
      0, std::chrono::duration_cast<std::chrono::minutes>(t - first_arrival_).count()));
  if (report_.minutes.size() <= index) {
    report_.minutes.resize(index + 1);
    minute_samples_.resize(index + 1);
  }
  return index;
}

void Replay::SampleMinute(TimePoint now) {
  const size_t index = MinuteIndex(now);
  AutoscaleMinute& minute = report_.minutes[index];
  int64_t& samples = minute_samples_[index];
  const auto ready = std::count_if(replicas_.begin(), replicas_.end(),
                                   [](const auto& r) { return r->announced && !r->draining; });
  // Running means, so a minute's figure needs no second pass.
  ++samples;
  minute.replicas_paid +=
      (static_cast<double>(replicas_.size()) - minute.replicas_paid) / static_cast<double>(samples);
  minute.replicas_ready +=
      (static_cast<double>(ready) - minute.replicas_ready) / static_cast<double>(samples);
}

void Replay::Apply(int desired, TimePoint now) {
  int active = static_cast<int>(std::count_if(replicas_.begin(), replicas_.end(),
                                              [](const auto& r) { return !r->draining; }));
  if (desired > active) {
    ++report_.scale_ups;
    // A draining replica is warm: taking it back costs no cold start.
    for (auto& replica : replicas_) {
      if (active < desired && replica->draining) {
        replica->draining = false;
        ++active;
      }
    }
    while (active < desired) {
      AddReplica(now, now + options_.cold_start);
      ++active;
    }
    return;
  }
  if (desired == active) return;
  ++report_.scale_downs;
  // Replicas still loading go first (newest first), then the least busy ready ones drain.
  for (size_t i = replicas_.size(); i-- > 0 && active > desired;) {
    if (!replicas_[i]->announced) {
      StopReplica(i, now);
      --active;
    }
  }
  while (active > desired) {
    size_t least = replicas_.size();
    for (size_t i = 0; i < replicas_.size(); ++i) {
      if (replicas_[i]->draining) continue;
      if (least == replicas_.size() || replicas_[i]->in_flight < replicas_[least]->in_flight) {
        least = i;
      }
    }
    STRATA_CHECK(least < replicas_.size());
    replicas_[least]->draining = true;
    --active;
    if (replicas_[least]->in_flight == 0 && !replicas_[least]->busy) StopReplica(least, now);
  }
}

AutoscaleSimReport Replay::Run() {
  std::vector<size_t> order(trace_.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return trace_[a].arrival < trace_[b].arrival; });
  const TimePoint first = kStart + trace_[order.front()].arrival;
  first_arrival_ = first;
  for (int i = 0; i < initial_replicas_; ++i) AddReplica(first, first);
  TimePoint next_tick = first;
  TimePoint now = first;
  size_t next = 0;
  while (true) {
    const bool busy =
        std::any_of(replicas_.begin(), replicas_.end(), [](const auto& r) { return r->busy; });
    if (next == order.size() && !busy && held_.empty()) break;
    const TimePoint arrival =
        next < order.size() ? kStart + trace_[order[next]].arrival : TimePoint::max();
    const size_t stepping = FirstStepToEnd(
        replicas_.size(), [&](size_t i) -> const SteppingEngine& { return *replicas_[i]; });
    size_t readying = replicas_.size();
    for (size_t i = 0; i < replicas_.size(); ++i) {
      const Replica& replica = *replicas_[i];
      if (!replica.announced &&
          (readying == replicas_.size() || replica.ready_at < replicas_[readying]->ready_at)) {
        readying = i;
      }
    }
    const TimePoint step_end =
        stepping < replicas_.size() ? replicas_[stepping]->step_end : TimePoint::max();
    const TimePoint ready_at =
        readying < replicas_.size() ? replicas_[readying]->ready_at : TimePoint::max();
    now = std::min({step_end, ready_at, arrival, next_tick});
    if (now == step_end) {
      FinishStep(stepping, now);
    } else if (now == ready_at) {
      replicas_[readying]->announced = true;
      FlushHeld(now);
    } else if (now == arrival) {
      Arrive(order[next++], now);
    } else {
      Decide(now);
      next_tick += decision_interval_;
    }
  }
  for (const auto& replica : replicas_) gpu_time_ += now - replica->created;

  report_.requests = trace_.size();
  report_.initial_replicas = initial_replicas_;
  report_.cold_start_seconds = ToSeconds(options_.cold_start);
  report_.gpu_hours = ToSeconds(gpu_time_) / 3600;
  report_.span_seconds = ToSeconds(now - first);
  if (const autoscaler::Decision* last = autoscaler_.LastDecision(kTarget)) {
    report_.learned_capacity = last->capacity_per_replica;
  }
  std::vector<double> ttft;
  std::vector<double> scale_up_ttft;
  size_t good = 0;
  for (const RequestState& request : requests_) {
    report_.during_scale_up += request.during_scale_up;
    AutoscaleMinute& minute = report_.minutes[MinuteIndex(request.arrival)];
    ++minute.arrivals;
    if (request.rejected || !request.answered) {
      ++report_.rejected;
      ++minute.late;
      continue;
    }
    const Duration first_token = request.first_token - request.arrival;
    ttft.push_back(ToSeconds(first_token));
    if (request.during_scale_up) scale_up_ttft.push_back(ToSeconds(first_token));
    if (first_token <= options_.ttft_slo) {
      ++good;
    } else {
      ++minute.late;
    }
  }
  std::sort(ttft.begin(), ttft.end());
  std::sort(scale_up_ttft.begin(), scale_up_ttft.end());
  report_.slo_attainment = static_cast<double>(good) / static_cast<double>(trace_.size());
  report_.ttft_p50 = Percentile(ttft, 0.5);
  report_.ttft_p99 = Percentile(ttft, 0.99);
  report_.during_scale_up_ttft_p99 = Percentile(scale_up_ttft, 0.99);
  for (double wait : held_waits_) report_.held_wait_max = std::max(report_.held_wait_max, wait);
  return report_;
}

// The requests of `trace` arriving in [from, from + length), shifted to start at 0.
std::vector<TraceRequest> Window(const std::vector<TraceRequest>& trace, Duration from,
                                 Duration length) {
  std::vector<TraceRequest> window;
  for (const TraceRequest& request : trace) {
    if (request.arrival >= from && request.arrival < from + length) {
      window.push_back(request);
      window.back().arrival -= from;
    }
  }
  return window;
}

// The fewest always-on replicas that serve `minute` with kPeakAttainment of requests in SLO.
int ReplicasFor(const std::vector<TraceRequest>& minute, const AutoscaleSimOptions& options) {
  if (minute.empty()) return 1;
  for (int replicas = 1; replicas < options.max_replicas; ++replicas) {
    Replay replay(minute, options, std::make_unique<autoscaler::FixedPolicy>(replicas),
                  options.decision_interval, replicas);
    if (replay.Run().slo_attainment >= kPeakAttainment) return replicas;
  }
  return options.max_replicas;
}

Status Validate(const std::vector<TraceRequest>& trace, const AutoscaleSimOptions& options) {
  if (trace.empty()) return InvalidArgumentError("trace: has no requests");
  if (options.max_replicas < 1) return InvalidArgumentError("max_replicas: must be at least 1");
  if (options.cold_start < Duration{0}) return InvalidArgumentError("cold_start: must be >= 0");
  if (options.decision_interval <= Duration{0}) {
    return InvalidArgumentError("decision_interval: must be > 0");
  }
  if (!(options.target_load > 0) || !(options.keda_target_waiting > 0)) {
    return InvalidArgumentError("target_load, keda_target_waiting: must be > 0");
  }
  if (!(options.headroom >= 0)) return InvalidArgumentError("headroom: must be >= 0");
  if (options.static_replicas < 0 || options.static_replicas > options.max_replicas) {
    return InvalidArgumentError("static_replicas: must be in [0, max_replicas]");
  }
  if (!(options.target_busy_share >= 0 && options.target_busy_share < 1)) {
    return InvalidArgumentError("target_busy_share: must be in [0, 1)");
  }
  return engine::EngineModel::Validate(options.engine);
}

}  // namespace

std::string_view AutoscalePolicyName(AutoscalePolicy policy) {
  switch (policy) {
    case AutoscalePolicy::kStrata:
      return "strata";
    case AutoscalePolicy::kKpa:
      return "kpa";
    case AutoscalePolicy::kKeda:
      return "keda";
    case AutoscalePolicy::kStaticPeak:
      return "static-peak";
  }
  return "unknown";
}

Result<AutoscalePolicy> ParseAutoscalePolicy(std::string_view name) {
  for (AutoscalePolicy policy : {AutoscalePolicy::kStrata, AutoscalePolicy::kKpa,
                                 AutoscalePolicy::kKeda, AutoscalePolicy::kStaticPeak}) {
    if (name == AutoscalePolicyName(policy)) return policy;
  }
  return Err(InvalidArgumentError(
      fmt::format("policy: '{}' is not one of strata, kpa, keda, static-peak", name)));
}

nlohmann::ordered_json AutoscaleSimReport::ToJson() const {
  nlohmann::ordered_json json;
  json["policy"] = policy;
  json["cold_start_seconds"] = cold_start_seconds;
  json["requests"] = requests;
  json["completed"] = completed;
  json["rejected"] = rejected;
  json["slo_attainment"] = slo_attainment;
  json["ttft_seconds"] = {{"p50", ttft_p50}, {"p99", ttft_p99}};
  json["gpu_hours"] = gpu_hours;
  json["replicas"] = {{"initial", initial_replicas}, {"peak", peak_replicas}};
  json["scale_events"] = {{"up", scale_ups}, {"down", scale_downs}};
  json["scale_up_queueing"] = {{"held_by_gateway", held_requests},
                               {"held_wait_max_seconds", held_wait_max},
                               {"arrived_during_scale_up", during_scale_up},
                               {"ttft_p99_seconds", during_scale_up_ttft_p99}};
  json["span_seconds"] = span_seconds;
  if (learned_capacity > 0) json["learned_capacity_requests_per_second"] = learned_capacity;
  nlohmann::ordered_json timeline = nlohmann::ordered_json::array();
  for (const AutoscaleMinute& minute : minutes) {
    timeline.push_back({{"arrivals", minute.arrivals},
                        {"late", minute.late},
                        {"replicas_paid", minute.replicas_paid},
                        {"replicas_ready", minute.replicas_ready},
                        {"desired", minute.desired},
                        {"forecast_rate", minute.forecast_rate},
                        {"capacity", minute.capacity}});
  }
  json["minutes"] = std::move(timeline);
  return json;
}

Result<int> PeakMinuteReplicas(const std::vector<TraceRequest>& trace,
                               const AutoscaleSimOptions& options) {
  RETURN_IF_ERROR(Validate(trace, options));
  std::vector<Duration> arrivals;
  for (const TraceRequest& request : trace) arrivals.push_back(request.arrival);
  std::sort(arrivals.begin(), arrivals.end());
  size_t best = 0;
  Duration best_from = arrivals.front();
  for (size_t begin = 0, end = 0; begin < arrivals.size(); ++begin) {
    while (end < arrivals.size() && arrivals[end] < arrivals[begin] + std::chrono::seconds(60)) {
      ++end;
    }
    if (end - begin > best) {
      best = end - begin;
      best_from = arrivals[begin];
    }
  }
  return ReplicasFor(Window(trace, best_from, std::chrono::seconds(60)), options);
}

Result<AutoscaleSimReport> RunAutoscaleSim(const std::vector<TraceRequest>& trace,
                                           const AutoscaleSimOptions& options) {
  RETURN_IF_ERROR(Validate(trace, options));
  std::unique_ptr<autoscaler::ScalingPolicy> policy;
  Duration interval = options.decision_interval;
  int initial = 0;
  switch (options.policy) {
    case AutoscalePolicy::kStrata: {
      autoscaler::RateOptions rate = autoscaler::RateDefaults(options.cold_start);
      rate.ttft_slo = options.ttft_slo;
      rate.headroom = options.headroom;
      rate.plan_in_prompt_tokens = options.plan_in_prompt_tokens;
      rate.target_busy_share = options.target_busy_share;
      rate.max_replicas = options.max_replicas;
      policy = std::make_unique<autoscaler::RatePolicy>(rate);
      break;
    }
    case AutoscalePolicy::kKpa: {
      autoscaler::WindowedOptions windowed = autoscaler::KnativeDefaults();
      windowed.target_load = options.target_load;
      windowed.max_replicas = options.max_replicas;
      policy = std::make_unique<autoscaler::WindowedPolicy>(windowed);
      interval = kKnativeTick;
      break;
    }
    case AutoscalePolicy::kKeda: {
      autoscaler::KedaOptions keda;
      keda.target_waiting = options.keda_target_waiting;
      keda.max_replicas = options.max_replicas;
      policy = std::make_unique<autoscaler::KedaPolicy>(keda);
      break;
    }
    case AutoscalePolicy::kStaticPeak: {
      initial = options.static_replicas;
      if (initial == 0) {
        ASSIGN_OR_RETURN(initial, PeakMinuteReplicas(trace, options));
      }
      policy = std::make_unique<autoscaler::FixedPolicy>(initial);
      break;
    }
  }
  if (options.policy != AutoscalePolicy::kStaticPeak) {
    // No policy can change what serves the first cold start: every one starts with what that
    // stretch needs (at least a minute's worth), as a service already scaled for its load would.
    Duration first = trace.front().arrival;
    for (const TraceRequest& request : trace) first = std::min(first, request.arrival);
    initial = ReplicasFor(
        Window(trace, first, std::max<Duration>(options.cold_start, std::chrono::seconds(60))),
        options);
  }
  Replay replay(trace, options, std::move(policy), interval, initial);
  AutoscaleSimReport report = replay.Run();
  report.policy = std::string(AutoscalePolicyName(options.policy));
  return report;
}

}  // namespace strata::sim
