#pragma once

// One engine replica of a virtual-time replay (`strata sim serve`, `strata sim autoscale`): the
// engine model and the step it is in.

#include <cstddef>

#include "common/clock.h"
#include "engine/engine_model.h"
#include "gateway/picker.h"

namespace strata::sim {

// An engine model stepping in virtual time: at most one step under way, which ends at
// `step_end` with `pending`. Plain data with its helpers; owned by one replay, single-threaded.
struct SteppingEngine {
  explicit SteppingEngine(const engine::EngineOptions& options) : model(options) {}

  engine::EngineModel model;
  bool busy = false;  // a step is under way
  TimePoint step_end{};
  engine::StepResult pending;  // what the step under way produces when it ends
  Duration work_time{0};       // the steps' own durations, summed

  // Starts the model's next step at `now`. A step that can do nothing yet (every KV block held)
  // still lets time pass.
  void StartStep(TimePoint now);
  // Sets `endpoint`'s scraped figures (queue, running, KV usage) to the model's, as read at
  // `now`.
  void Scrape(gateway::EndpointState& endpoint, TimePoint now) const;
};

// The index of the busy engine whose step ends first (the lowest index among equals) of
// `engines(0)` ... `engines(count - 1)`, or `count` when none is busy.
template <typename EngineAt>
size_t FirstStepToEnd(size_t count, EngineAt engines) {
  size_t first = count;
  for (size_t i = 0; i < count; ++i) {
    const SteppingEngine& engine = engines(i);
    if (engine.busy && (first == count || engine.step_end < engines(first).step_end)) first = i;
  }
  return first;
}

}  // namespace strata::sim
