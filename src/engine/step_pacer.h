#pragma once

#include "common/clock.h"

namespace strata::engine {

// Keeps an engine's steps, run in real time, on the timeline its model computes. Engine time
// runs `time_scale` times faster than real time from a common origin. A step that follows the
// previous one back to back starts, in engine time, exactly where that one ended, and its
// outputs are due at the real time of its own modelled end: the schedule is a chain of absolute
// deadlines, so a timer that fires late (a busy host) delays that step's delivery only, never the
// steps after it. How late each delivery was is what Delivered returns.
//
// Owned by the engine server's event loop; not thread-safe.
class StepPacer {
 public:
  // REQUIRES: time_scale > 0.
  StepPacer(TimePoint origin, double time_scale);

  // The engine time at real time `real`, and the inverse.
  TimePoint EngineTime(TimePoint real) const;
  TimePoint RealTime(TimePoint engine) const;

  // Where the next step starts in engine time when it begins at real time `now`: the end of
  // the previous step when the engine still had work then (back to back), otherwise now.
  TimePoint NextStart(TimePoint now) const;

  // Records a step that starts at `start` (engine time, from NextStart) and lasts `duration`;
  // returns the real time its outputs are due.
  TimePoint Began(TimePoint start, Duration duration);

  // The outputs of the step last begun were delivered at real time `now`; `more_work`: the
  // engine had work left then, so the next step follows this one back to back. Returns how
  // late the delivery was in real time (zero when on time).
  Duration Delivered(TimePoint now, bool more_work);

 private:
  TimePoint origin_;
  double time_scale_;
  TimePoint step_end_{};  // engine time
  bool chained_ = false;
};

}  // namespace strata::engine
