#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "common/clock.h"
#include "common/status.h"
#include "engine/engine_model.h"
#include "engine/openai_protocol.h"
#include "engine/step_pacer.h"
#include "metrics/metrics.h"
#include "net/http_server.h"

namespace strata::engine {

struct EngineServerOptions {
  std::string host = "127.0.0.1";
  int port = 0;
  std::string model;  // the served model name; LoRA adapters are served under their own names
  EngineOptions engine;
  // /health (and every API call) answers 503 until this much real time has passed since Start,
  // as a replica loading its weights.
  Duration startup_delay{0};
  // Simulated time runs this many times faster than real time; 0: no latency at all (steps run
  // back to back, for measuring the serving overhead).
  double time_scale = 1.0;
  std::string engine_label = "0";  // the `engine` label of the metrics
  // The share of the GPU's memory the engine may use (vLLM's --gpu-memory-utilization): sizes
  // the KV cache (EngineProfile::GpuBlocksAt) unless engine.num_kv_blocks is set.
  double gpu_memory_utilization = kDefaultGpuMemoryUtilization;
};

// `strata engine-sim`: an HTTP server that behaves like one vLLM replica. It serves
// POST /v1/completions and /v1/chat/completions (JSON or SSE streams, with vLLM's and OpenAI's
// shapes), GET /v1/models, /health and /metrics (vLLM's metric names and labels), and drives an
// EngineModel in real time: one step at a time on the server's event loop, each step's tokens
// delivered when its simulated duration has passed, steps back to back on the model's own
// timeline (StepPacer), so a late wake-up delays one delivery and never the steps after it
// (how late: strata_engine_step_lateness_seconds on /metrics). A client that disconnects
// aborts its request in the engine. The KV cache's size (vllm:cache_config_info's
// num_gpu_blocks) follows the share of the GPU's memory it is given. Drain is vLLM's graceful
// shutdown: no new work, the work in progress finishes.
//
// Owned by the command that runs it. Start, Drain and Stop from one thread; everything else
// happens on the server's single event-loop thread.
class EngineServer {
 public:
  // `clock` (real time in production) must outlive the server.
  EngineServer(EngineServerOptions options, const Clock& clock);
  ~EngineServer();

  // InvalidArgument for bad options (naming them, e.g. a memory share too small for the model);
  // Unavailable when the port cannot be bound.
  Status Start();
  int port() const { return http_.port(); }
  // Stops taking work: every request that reaches the server from now on (/health included)
  // answers 503, while the requests and streams in progress go on. Returns at once.
  // REQUIRES: Start succeeded.
  void BeginDrain();
  // After BeginDrain: returns once no request is in progress (true) or after `timeout` (false).
  bool WaitDrained(Duration timeout);
  void Stop();

 private:
  struct ActiveRequest;
  struct Metrics;

  void HandleCompletion(net::HttpRequest request, net::ResponseWriter writer, bool chat);
  void HandleModels(net::ResponseWriter writer);
  void HandleHealth(net::ResponseWriter writer);
  void HandleMetrics(net::ResponseWriter writer);
  bool Ready() const;

  // The engine's time: scaled real time, or with time_scale 0 the sum of step durations.
  TimePoint EngineNow() const;
  void ScheduleStep();
  void RunStep();
  // Delivers a step's outputs and schedules the next step.
  void FinishStep(const StepResult& result);
  void Deliver(const StepResult& result);
  void Finish(ActiveRequest& active, int prompt_tokens);
  void RefreshMetrics();
  // Drops a request that ended or whose client went away; the last one ends a drain.
  void Forget(uint64_t id);
  void EndDrainIfIdle();

  EngineServerOptions options_;
  const Clock& clock_;
  TimePoint started_at_{};
  TimePoint virtual_now_{};         // time_scale 0 only
  std::optional<StepPacer> pacer_;  // time_scale > 0 only; set by Start
  net::HttpServer http_;
  std::unique_ptr<EngineModel> engine_;  // created by Start once the options are valid
  metrics::Registry registry_;
  std::unique_ptr<Metrics> metrics_;
  std::unordered_map<uint64_t, std::unique_ptr<ActiveRequest>> active_;
  const std::string id_tag_;  // random per server: the first half of every completion id
  uint64_t next_id_ = 1;
  bool step_pending_ = false;
  bool stopped_ = false;
  bool draining_ = false;  // event-loop thread only
  std::mutex drain_mu_;
  std::condition_variable drained_cv_;
  bool drained_ = false;  // guarded by drain_mu_
};

}  // namespace strata::engine
