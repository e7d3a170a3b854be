#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

namespace strata::gateway::testing {

// A tiny OpenAI-speaking replica for gateway tests, on its own thread and loopback port 0:
// POST /v1/chat/completions and /v1/completions answer with the words of `reply` (as SSE chunks
// when the body asks for a stream) and a usage object; GET /metrics serves vLLM gauges. Every
// answer carries `x-served-by: <name>`. Thread-safe; stops on destruction.
class FakeEngine {
 public:
  FakeEngine(std::string name, std::string reply = "hello from the fake engine");
  ~FakeEngine();

  uint16_t port() const { return port_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  const std::string& name() const { return name_; }
  int64_t requests() const { return requests_.load(); }
  // Streams abandoned by their client (a write to it failed).
  int64_t cancelled_streams() const { return cancelled_.load(); }
  // Gauges served on /metrics: `waiting` may be any double (NaN, +Inf), as a broken engine's.
  void SetWaiting(double waiting) { waiting_.store(waiting); }
  // Delay between streamed chunks.
  void SetChunkDelayMs(int64_t ms) { chunk_delay_ms_.store(ms); }
  // While true, a stream stops after its first chunk until it is set back to false.
  void HoldStreams(bool hold) { hold_streams_.store(hold); }
  // Streams whose first chunk has been written.
  int64_t streams_started() const { return streams_started_.load(); }
  // Used by the serving loop.
  bool streams_held() const { return hold_streams_.load(); }
  void StreamStarted() { ++streams_started_; }
  // While true, completions are answered 503 with an OpenAI-shaped error, as
  // llm-d-inference-sim and strata engine-sim answer while they shut down (gracefully: the
  // port stays open and streams in progress finish).
  void SetShuttingDown(bool shutting_down) { shutting_down_.store(shutting_down); }
  bool shutting_down() const { return shutting_down_.load(); }
  // Stops serving and closes the port: the replica is dead.
  void Kill();

  struct Impl;

 private:
  std::string name_;
  std::string reply_;
  uint16_t port_ = 0;
  std::atomic<int64_t> requests_{0};
  std::atomic<int64_t> cancelled_{0};
  std::atomic<double> waiting_{0};
  std::atomic<int64_t> chunk_delay_ms_{0};
  std::atomic<bool> hold_streams_{false};
  std::atomic<bool> shutting_down_{false};
  std::atomic<int64_t> streams_started_{0};
  std::unique_ptr<Impl> impl_;
};

}  // namespace strata::gateway::testing
