#include "autoscaler/policy.h"

#include "common/check.h"
#include "fmt/format.h"

namespace strata::autoscaler {

FixedPolicy::FixedPolicy(int replicas) : replicas_(replicas) { STRATA_CHECK(replicas >= 0); }

Decision FixedPolicy::Decide(const LoadSample& /*sample*/, TimePoint /*now*/) {
  return Decision{replicas_, false, fmt::format("fixed at {} replicas", replicas_)};
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
