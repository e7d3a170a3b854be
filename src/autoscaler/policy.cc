#include "autoscaler/policy.h"

#include <algorithm>

#include "common/check.h"
#include "fmt/format.h"

namespace strata::autoscaler {

FixedPolicy::FixedPolicy(int replicas) : replicas_(replicas) { STRATA_CHECK(replicas >= 0); }

Decision FixedPolicy::Decide(const LoadSample& /*sample*/, TimePoint /*now*/) {
  return Decision{replicas_, false, fmt::format("fixed at {} replicas", replicas_)};
}

int ApplyIdleAndBounds(int desired, const LoadSample& sample, bool idle, std::string_view keeping,
                       int min_replicas, int max_replicas, std::string& why) {
  if (desired == 0 && sample.ready_replicas + sample.starting_replicas > 0) {
    if (!idle) {
      desired = 1;
      why += fmt::format("; keeping 1 {}", keeping);
    } else {
      why += "; idle: scaling to zero";
    }
  }
  if (desired < min_replicas) why += fmt::format("; min {}", min_replicas);
  if (desired > max_replicas) why += fmt::format("; max {}", max_replicas);
  return std::clamp(desired, min_replicas, max_replicas);
}

Status ValidateReplicaBounds(int min_replicas, int max_replicas) {
  if (min_replicas < 0) return InvalidArgumentError("minReplicas: must be >= 0");
  if (max_replicas < 1) return InvalidArgumentError("maxReplicas: must be >= 1");
  if (min_replicas > max_replicas) {
    return InvalidArgumentError(
        fmt::format("minReplicas: {} is more than maxReplicas {}", min_replicas, max_replicas));
  }
  return Status::Ok();
}

}  // namespace strata::autoscaler
