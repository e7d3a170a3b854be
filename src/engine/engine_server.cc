#include "engine/engine_server.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <random>

#include "metrics/prometheus_text.h"

namespace strata::engine {
namespace {

// 16 hex digits drawn once per server: completion ids must differ between replicas (clients and
// logs key on them), and counters alone start at 1 in every process.
std::string RandomIdTag() {
  std::random_device device;
  const uint64_t tag = (static_cast<uint64_t>(device()) << 32) ^ device();
  return fmt::format("{:016x}", tag);
}

using nlohmann::json;

// vLLM's bucket bounds for these histograms.
std::vector<double> TtftBuckets() {
  return {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1,  0.25,  0.5,   0.75,
          1.0,   2.5,   5.0,  7.5,  10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0};
}
std::vector<double> ItlBuckets() {
  return {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2,  0.3,  0.4, 0.5,
          0.75, 1.0,   2.5,  5.0,   7.5, 10.0, 20.0, 40.0, 80.0};
}
// How late a step's outputs reach the clients, in real seconds.
std::vector<double> LatenessBuckets() {
  return {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0};
}
std::vector<double> E2eBuckets() {
  return {0.3,  0.5,  0.8,  1.0,  1.5,   2.0,   2.5,   5.0,   10.0,   15.0,  20.0,
          30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0};
}

net::HttpResponse JsonResponse(int status, std::string body) {
  return net::HttpResponse::Text(status, "application/json", std::move(body));
}

net::HttpResponse ErrorResponse(const Status& status) {
  int code = HttpStatusFor(status.code());
  std::string type = code == 404   ? "NotFoundError"
                     : code == 503 ? "ServiceUnavailableError"
                                   : "BadRequestError";
  return JsonResponse(code, ErrorBody(status.message(), type, ParamOf(status.message()), code));
}

std::string Join(const std::vector<std::string>& values) {
  std::string out;
  for (const std::string& value : values) out += (out.empty() ? "" : ",") + value;
  return out;
}

}  // namespace

struct EngineServer::ActiveRequest {
  uint64_t id = 0;  // the engine's request id, and this request's key in active_
  net::ResponseWriter writer;
  CompletionIdentity identity;
  bool stream = false;
  std::string text;  // non-streaming: the completion so far
  int completion_tokens = 0;
};

struct EngineServer::Metrics {
  Metrics(metrics::Registry& registry, const std::vector<std::string>& labels)
      : running(registry.AddGauge("vllm:num_requests_running",
                                  "Number of requests in model execution batches.", labels)),
        waiting(registry.AddGauge("vllm:num_requests_waiting",
                                  "Number of requests waiting to be processed.", labels)),
        kv_usage(registry.AddGauge("vllm:kv_cache_usage_perc",
                                   "KV-cache usage. 1 means 100 percent usage.", labels)),
        prefix_queries(registry.AddCounter(
            "vllm:prefix_cache_queries_total",
            "Prefix cache queries, in terms of number of queried tokens.", labels)),
        prefix_hits(registry.AddCounter("vllm:prefix_cache_hits_total",
                                        "Prefix cache hits, in terms of number of cached tokens.",
                                        labels)),
        prompt_tokens(registry.AddCounter("vllm:prompt_tokens_total",
                                          "Number of prefill tokens processed.", labels)),
        generation_tokens(registry.AddCounter("vllm:generation_tokens_total",
                                              "Number of generation tokens processed.", labels)),
        preemptions(registry.AddCounter("vllm:num_preemptions_total",
                                        "Cumulative number of preemption from the engine.",
                                        labels)),
        ttft(registry.AddHistogram("vllm:time_to_first_token_seconds",
                                   "Histogram of time to first token in seconds.", labels,
                                   TtftBuckets())),
        itl(registry.AddHistogram("vllm:inter_token_latency_seconds",
                                  "Histogram of inter-token latency in seconds.", labels,
                                  ItlBuckets())),
        e2e(registry.AddHistogram("vllm:e2e_request_latency_seconds",
                                  "Histogram of e2e request latency in seconds.", labels,
                                  E2eBuckets())),
        success(registry.AddCounter("vllm:request_success_total",
                                    "Count of successfully processed requests.",
                                    {"model_name", "engine", "finished_reason"})),
        cache_config(
            registry.AddGauge("vllm:cache_config_info", "Information of the LLMEngine CacheConfig",
                              {"engine", "block_size", "num_gpu_blocks", "enable_prefix_caching",
                               "cache_dtype", "gpu_memory_utilization"})),
        step_lateness(registry.AddHistogram(
            "strata_engine_step_lateness_seconds",
            "Real time by which a step's outputs were delivered after the modelled end of the "
            "step.",
            labels, LatenessBuckets())),
        lora_info(
            registry.AddGauge("vllm:lora_requests_info", "Running stats on lora requests.",
                              {"max_lora", "running_lora_adapters", "waiting_lora_adapters"})),
        label_values(labels) {}

  metrics::GaugeFamily& running;
  metrics::GaugeFamily& waiting;
  metrics::GaugeFamily& kv_usage;
  metrics::CounterFamily& prefix_queries;
  metrics::CounterFamily& prefix_hits;
  metrics::CounterFamily& prompt_tokens;
  metrics::CounterFamily& generation_tokens;
  metrics::CounterFamily& preemptions;
  metrics::HistogramFamily& ttft;
  metrics::HistogramFamily& itl;
  metrics::HistogramFamily& e2e;
  metrics::CounterFamily& success;
  metrics::GaugeFamily& cache_config;
  metrics::HistogramFamily& step_lateness;
  metrics::GaugeFamily& lora_info;
  std::vector<std::string> label_values;
  EngineStats exported;  // counters already added to the registry
};

EngineServer::EngineServer(EngineServerOptions options, const Clock& clock)
    : options_(std::move(options)),
      clock_(clock),
      http_(net::HttpServerOptions{.host = options_.host, .port = options_.port, .threads = 1}),
      id_tag_(RandomIdTag()) {}

EngineServer::~EngineServer() { Stop(); }

Status EngineServer::Start() {
  if (options_.model.empty()) return InvalidArgumentError("--model: must not be empty");
  if (!std::isfinite(options_.time_scale) || options_.time_scale < 0) {
    return InvalidArgumentError("--time-scale: must be a number >= 0");
  }
  if (options_.startup_delay < Duration{0}) {
    return InvalidArgumentError("--startup-delay: must not be negative");
  }
  if (options_.engine.num_kv_blocks == 0) {
    Result<int> blocks = options_.engine.profile.GpuBlocksAt(options_.gpu_memory_utilization,
                                                             options_.engine.block_size);
    if (!blocks) return blocks.error().WithPrefix("--gpu-memory-utilization");
    options_.engine.num_kv_blocks = *blocks;
  }
  Status valid = EngineModel::Validate(options_.engine);
  if (!valid.ok()) return valid;
  engine_ = std::make_unique<EngineModel>(options_.engine);
  metrics_ = std::make_unique<Metrics>(registry_, std::vector<std::string>{"model_name", "engine"});
  metrics_->label_values = {options_.model, options_.engine_label};
  metrics_->cache_config
      .With({options_.engine_label, std::to_string(engine_->block_size()),
             std::to_string(engine_->num_kv_blocks()), "True", "auto",
             fmt::format("{}", options_.gpu_memory_utilization)})
      .Set(1);
  http_.Route("POST", "/v1/completions", [this](net::HttpRequest request, net::ResponseWriter w) {
    HandleCompletion(std::move(request), std::move(w), /*chat=*/false);
  });
  http_.Route("POST", "/v1/chat/completions",
              [this](net::HttpRequest request, net::ResponseWriter w) {
                HandleCompletion(std::move(request), std::move(w), /*chat=*/true);
              });
  http_.Route("GET", "/v1/models",
              [this](net::HttpRequest, net::ResponseWriter w) { HandleModels(std::move(w)); });
  http_.Route("GET", "/health",
              [this](net::HttpRequest, net::ResponseWriter w) { HandleHealth(std::move(w)); });
  http_.Route("GET", "/metrics",
              [this](net::HttpRequest, net::ResponseWriter w) { HandleMetrics(std::move(w)); });
  started_at_ = clock_.Now();
  virtual_now_ = started_at_;
  if (options_.time_scale > 0) pacer_.emplace(started_at_, options_.time_scale);
  return http_.Start();
}

void EngineServer::BeginDrain() {
  // Queued before any request that arrives later, on the one event loop.
  http_.Post([this] {
    draining_ = true;
    EndDrainIfIdle();
  });
}

bool EngineServer::WaitDrained(Duration timeout) {
  std::unique_lock<std::mutex> lock(drain_mu_);
  return drained_cv_.wait_for(lock, timeout, [this] { return drained_; });
}

void EngineServer::Forget(uint64_t id) {
  active_.erase(id);
  EndDrainIfIdle();
}

void EngineServer::EndDrainIfIdle() {
  if (!draining_ || !active_.empty()) return;
  std::lock_guard<std::mutex> lock(drain_mu_);
  drained_ = true;
  drained_cv_.notify_all();
}

void EngineServer::Stop() {
  if (stopped_) return;
  stopped_ = true;
  http_.Stop(std::chrono::seconds(1));
}

bool EngineServer::Ready() const { return clock_.Now() - started_at_ >= options_.startup_delay; }

TimePoint EngineServer::EngineNow() const {
  return pacer_ ? pacer_->EngineTime(clock_.Now()) : virtual_now_;
}

void EngineServer::HandleCompletion(net::HttpRequest request, net::ResponseWriter writer,
                                    bool chat) {
  Result<CompletionRequest> parsed = ParseCompletionRequest(request.body, chat);
  if (!parsed) {
    writer.Respond(ErrorResponse(parsed.error()));
    return;
  }
  if (draining_) {
    writer.Respond(ErrorResponse(UnavailableError("the engine is shutting down")));
    return;
  }
  if (!Ready()) {
    writer.Respond(ErrorResponse(UnavailableError("the engine is still starting")));
    return;
  }
  std::string adapter;
  if (parsed->model != options_.model) {
    const std::vector<std::string>& loras = options_.engine.lora_adapters;
    if (std::find(loras.begin(), loras.end(), parsed->model) == loras.end()) {
      writer.Respond(
          ErrorResponse(NotFoundError("model: The model `" + parsed->model + "` does not exist.")));
      return;
    }
    adapter = parsed->model;
  }
  uint64_t id = next_id_++;
  EngineRequest engine_request;
  engine_request.id = id;
  engine_request.prompt = Tokenize(parsed->prompt_text);
  engine_request.max_tokens = parsed->max_tokens;
  engine_request.adapter = adapter;
  Status added = engine_->Add(std::move(engine_request), EngineNow());
  if (!added.ok()) {
    writer.Respond(ErrorResponse(added));
    return;
  }
  auto active = std::make_unique<ActiveRequest>(ActiveRequest{.id = id,
                                                              .writer = writer,
                                                              .identity = {},
                                                              .stream = false,
                                                              .text = {},
                                                              .completion_tokens = 0});
  // 32 hex digits like vLLM's uuid4 ids: this server's random tag, then its request number, so
  // that replicas behind one gateway never answer with the same id.
  active->identity =
      CompletionIdentity{.id = fmt::format("{}-{}{:016x}", chat ? "chatcmpl" : "cmpl", id_tag_, id),
                         .created = static_cast<int64_t>(ToSeconds(clock_.Now())),
                         .model = parsed->model,
                         .chat = chat,
                         .include_usage = parsed->include_usage};
  active->stream = parsed->stream;
  if (active->stream) {
    writer.StartStream(200, {{"Content-Type", "text/event-stream"}, {"Cache-Control", "no-cache"}});
    if (chat) writer.WriteChunk("data: " + ChatRoleChunk(active->identity) + "\n\n");
  }
  writer.OnClientGone([this, id] {
    engine_->Abort(id);
    Forget(id);
  });
  active_.emplace(id, std::move(active));
  ScheduleStep();
}

void EngineServer::ScheduleStep() {
  if (step_pending_ || !engine_->HasWork()) return;
  step_pending_ = true;
  http_.Post([this] { RunStep(); });
}

void EngineServer::RunStep() {
  if (!pacer_) {
    StepResult result = engine_->Step(virtual_now_);
    virtual_now_ += result.duration;
    FinishStep(result);
    return;
  }
  const TimePoint start = pacer_->NextStart(clock_.Now());
  StepResult result = engine_->Step(start);
  const TimePoint due = pacer_->Began(start, result.duration);
  http_.PostAfter(std::max(Duration{0}, due - clock_.Now()),
                  [this, result = std::move(result)] { FinishStep(result); });
}

void EngineServer::FinishStep(const StepResult& result) {
  if (pacer_) {
    // A step that did nothing (its only requests arrived after its start) lets real time pass
    // instead of starting the next one at the same instant.
    const bool back_to_back = engine_->HasWork() && result.duration > Duration{0};
    metrics_->step_lateness.With(metrics_->label_values)
        .Observe(ToSeconds(pacer_->Delivered(clock_.Now(), back_to_back)));
  }
  Deliver(result);
  step_pending_ = false;
  ScheduleStep();
}

void EngineServer::Deliver(const StepResult& result) {
  const std::vector<std::string>& labels = metrics_->label_values;
  for (const TokenOutput& output : result.outputs) {
    (output.index == 0 ? metrics_->ttft : metrics_->itl)
        .With(labels)
        .Observe(ToSeconds(output.latency));
    if (output.finished) {
      metrics_->e2e.With(labels).Observe(ToSeconds(output.e2e));
      metrics_->success.With({labels[0], labels[1], "length"}).Increment();
    }
    auto it = active_.find(output.request_id);
    if (it == active_.end()) continue;  // its client went away
    ActiveRequest& active = *it->second;
    std::string_view text = GeneratedTokenText(output.token);
    ++active.completion_tokens;
    if (active.stream) {
      active.writer.WriteChunk(
          "data: " + StreamChunk(active.identity, text, output.finished ? "length" : "") + "\n\n");
    } else {
      active.text += text;
    }
    if (output.finished) Finish(active, output.prompt_tokens);
  }
}

void EngineServer::Finish(ActiveRequest& active, int prompt_tokens) {
  if (active.stream) {
    if (active.identity.include_usage) {
      active.writer.WriteChunk(
          "data: " + UsageChunk(active.identity, prompt_tokens, active.completion_tokens) + "\n\n");
    }
    active.writer.WriteChunk("data: [DONE]\n\n");
    active.writer.EndStream();
  } else {
    active.writer.Respond(JsonResponse(200, FullResponse(active.identity, active.text, "length",
                                                         prompt_tokens, active.completion_tokens)));
  }
  Forget(active.id);
}

void EngineServer::HandleModels(net::ResponseWriter writer) {
  int64_t created = static_cast<int64_t>(ToSeconds(started_at_));
  int64_t max_model_len = static_cast<int64_t>(engine_->num_kv_blocks()) * engine_->block_size();
  json data = json::array();
  data.push_back({{"id", options_.model},
                  {"object", "model"},
                  {"created", created},
                  {"owned_by", "vllm"},
                  {"root", options_.model},
                  {"parent", nullptr},
                  {"max_model_len", max_model_len}});
  for (const std::string& adapter : options_.engine.lora_adapters) {
    data.push_back({{"id", adapter},
                    {"object", "model"},
                    {"created", created},
                    {"owned_by", "vllm"},
                    {"root", adapter},
                    {"parent", options_.model},
                    {"max_model_len", max_model_len}});
  }
  json body = {{"object", "list"}, {"data", data}};
  writer.Respond(JsonResponse(200, body.dump(-1, ' ', false, json::error_handler_t::replace)));
}

void EngineServer::HandleHealth(net::ResponseWriter writer) {
  if (draining_) {
    writer.Respond(ErrorResponse(UnavailableError("the engine is shutting down")));
  } else {
    writer.Respond(Ready() ? net::HttpResponse::Text(200, "text/plain", "")
                           : ErrorResponse(UnavailableError("the engine is still starting")));
  }
}

void EngineServer::HandleMetrics(net::ResponseWriter writer) {
  RefreshMetrics();
  writer.Respond(net::HttpResponse::Text(200, std::string(metrics::kPrometheusContentType),
                                         registry_.RenderText()));
}

void EngineServer::RefreshMetrics() {
  EngineStats stats = engine_->Stats();
  const std::vector<std::string>& labels = metrics_->label_values;
  metrics_->running.With(labels).Set(static_cast<double>(stats.running));
  metrics_->waiting.With(labels).Set(static_cast<double>(stats.waiting));
  metrics_->kv_usage.With(labels).Set(stats.kv_usage);
  EngineStats& exported = metrics_->exported;
  auto add = [&labels](metrics::CounterFamily& family, int64_t now, int64_t& before) {
    family.With(labels).Increment(static_cast<double>(now - before));
    before = now;
  };
  add(metrics_->prefix_queries, stats.prefix_cache_queries, exported.prefix_cache_queries);
  add(metrics_->prefix_hits, stats.prefix_cache_hits, exported.prefix_cache_hits);
  add(metrics_->prompt_tokens, stats.prompt_tokens, exported.prompt_tokens);
  add(metrics_->generation_tokens, stats.generation_tokens, exported.generation_tokens);
  add(metrics_->preemptions, stats.preemptions, exported.preemptions);
  std::vector<std::string> lora_labels = {std::to_string(options_.engine.lora_adapters.size()),
                                          Join(stats.running_adapters),
                                          Join(stats.waiting_adapters)};
  // As vLLM does: the label set of the moment is set to the time, and the ones before stay on
  // the page with the time they were last set (readers take the newest; docs/engines.md).
  metrics_->lora_info.With(lora_labels).Set(ToSeconds(clock_.Now()));
}

}  // namespace strata::engine
