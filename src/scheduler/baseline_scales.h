#pragma once

#include <cstdint>

namespace strata::scheduler {

// The FGD artifact's baselines normalise CPU and GPU by the largest node they were written for
// (128 cores, 8 GPUs) and score nodes 0..100.
inline constexpr double kBaselineCpuScale = 128000;
inline constexpr double kBaselineGpuScale = 8000;
inline constexpr int64_t kBaselineMaxScore = 100;

}  // namespace strata::scheduler
