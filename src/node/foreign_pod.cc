#include "node/foreign_pod.h"

#include <algorithm>

#include "api/annotations.h"
#include "api/pod_contract.h"
#include "api/torchrun_env.h"

namespace strata::node {
namespace {

bool NoneReserved(std::string_view) { return false; }

}  // namespace

bool IsForeignPod(const api::Pod& pod) {
  return api::PodAnnotation(pod, api::kForeignPodAnnotation) != nullptr;
}

std::string ContainerNameOf(const api::Pod& pod) {
  const std::string* name = api::PodAnnotation(pod, api::kForeignPodAnnotation);
  return name != nullptr ? *name : std::string(api::kPodContainerName);
}

ReservedEnvNamesFn ReservedEnvNames(const api::Pod& pod) {
  return IsForeignPod(pod) ? NoneReserved : api::IsReservedEnvName;
}

bool RestartsInPlace(const api::Pod& pod, bool succeeded) {
  return IsForeignPod(pod) && api::StopRequested(pod).empty() &&
         (pod.spec.restart_policy == "Always" ||
          (pod.spec.restart_policy == "OnFailure" && !succeeded));
}

Duration RestartBackoff(int64_t restarts) {
  constexpr int64_t kMostSeconds = 300;
  int64_t seconds = 10;
  for (int64_t i = 0; i < restarts && seconds < kMostSeconds; ++i) seconds *= 2;
  return std::chrono::seconds(std::min(seconds, kMostSeconds));
}

}  // namespace strata::node
