#include "sim/stepping_engine.h"

#include <algorithm>

namespace strata::sim {

void SteppingEngine::StartStep(TimePoint now) {
  pending = model.Step(now);
  step_end = now + std::max<Duration>(pending.duration, std::chrono::milliseconds(1));
  busy = true;
  work_time += pending.duration;
}

void SteppingEngine::Scrape(gateway::EndpointState& endpoint, TimePoint now) const {
  const engine::EngineStats stats = model.Stats();
  endpoint.waiting = stats.waiting;
  endpoint.running = stats.running;
  endpoint.kv_usage = stats.kv_usage;
  endpoint.metrics_at = now;
}

}  // namespace strata::sim
