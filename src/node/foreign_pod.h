#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "api/pod.h"
#include "common/clock.h"

// The node agent's rules for pods strata did not make (a Deployment's, a batch Job's, kubectl
// run's), which a virtual kubelet's store reads with api::kForeignPodAnnotation
// (kubestore/foreign_pod_mapping.h) and the agent runs as a kubelet would. Pure functions;
// thread-safe.

namespace strata::node {

// Whether `pod` is one strata did not make.
bool IsForeignPod(const api::Pod& pod);

// The name of the pod's container, which its process and log are named after: a foreign pod's
// own, else api::kPodContainerName.
std::string ContainerNameOf(const api::Pod& pod);

// The names the pod's template may not set because strata sets them (api::IsReservedEnvName);
// none for a foreign pod, whose environment strata adds nothing to.
using ReservedEnvNamesFn = bool (*)(std::string_view name);
ReservedEnvNamesFn ReservedEnvNames(const api::Pod& pod);

// Whether a foreign pod whose processes ended (`succeeded`: every one with 0) starts them again
// in place, as the kubelet restarts a container under the pod's restartPolicy: Always, or
// OnFailure after a failure; never once it is asked to stop. False for strata's pods, whose
// workloads replace them.
bool RestartsInPlace(const api::Pod& pod, bool succeeded);

// The kubelet's back-off before a container starts again after `restarts` restarts: 10 s,
// doubling, at most 5 minutes.
Duration RestartBackoff(int64_t restarts);

}  // namespace strata::node
