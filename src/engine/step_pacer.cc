#include "engine/step_pacer.h"

#include <algorithm>
#include <cmath>

#include "common/check.h"

namespace strata::engine {

StepPacer::StepPacer(TimePoint origin, double time_scale)
    : origin_(origin), time_scale_(time_scale) {
  STRATA_CHECK(time_scale > 0);
}

TimePoint StepPacer::EngineTime(TimePoint real) const {
  const double elapsed = static_cast<double>((real - origin_).count());
  return origin_ + Duration(std::llround(elapsed * time_scale_));
}

TimePoint StepPacer::RealTime(TimePoint engine) const {
  const double elapsed = static_cast<double>((engine - origin_).count());
  return origin_ + Duration(std::llround(elapsed / time_scale_));
}

TimePoint StepPacer::NextStart(TimePoint now) const {
  return chained_ ? step_end_ : EngineTime(now);
}

TimePoint StepPacer::Began(TimePoint start, Duration duration) {
  step_end_ = start + duration;
  chained_ = false;
  return RealTime(step_end_);
}

Duration StepPacer::Delivered(TimePoint now, bool more_work) {
  chained_ = more_work;
  return std::max(Duration{0}, now - RealTime(step_end_));
}

}  // namespace strata::engine
