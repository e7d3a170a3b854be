#include "node/gpu_activity.h"

#include <algorithm>
#include <cmath>

#include "common/check.h"

namespace strata::node {

double GpuBusyShare(Duration cpu_used, Duration elapsed, double gpus) {
  if (elapsed <= Duration::zero() || gpus <= 0 || cpu_used <= Duration::zero()) return 0;
  double cores = ToSeconds(cpu_used) / ToSeconds(elapsed);
  return std::min(1.0, cores / gpus);
}

bool GpuActivityWorthRecording(std::optional<double> recorded, double measured) {
  // 0.35 - 0.25 is a hair under 0.1 in floating point, and is a step.
  return !recorded || std::abs(measured - *recorded) >= kGpuActivityStep - 1e-9;
}

GpuActivityMeter::GpuActivityMeter(Duration window) : window_(window) {
  STRATA_CHECK(window > Duration::zero());
}

bool GpuActivityMeter::Due(const std::string& uid, TimePoint now) const {
  auto found = window_start_.find(uid);
  return found == window_start_.end() || now - found->second.at >= window_;
}

std::optional<double> GpuActivityMeter::Record(const std::string& uid, Duration cpu_time,
                                               double gpus, TimePoint now) {
  auto [it, first] = window_start_.try_emplace(uid, Reading{cpu_time, now});
  if (first) return std::nullopt;
  double share = GpuBusyShare(cpu_time - it->second.cpu_time, now - it->second.at, gpus);
  it->second = Reading{cpu_time, now};
  return share;
}

void GpuActivityMeter::Retain(const std::set<std::string>& uids) {
  std::erase_if(window_start_, [&](const auto& entry) { return uids.count(entry.first) == 0; });
}

}  // namespace strata::node
