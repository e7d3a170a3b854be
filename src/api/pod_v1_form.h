#pragma once

#include <nlohmann/json.hpp>

#include "common/status.h"

namespace strata::api {

// strata's Pod (strata.dev/v1alpha1, as stored) as Kubernetes' v1 Pod, the shape every
// Kubernetes client reads from /api/v1 (the REST API's served form, ServedForm::kKubernetes) and
// what strata writes on a Kubernetes cluster (kubestore): one container "main" made of the
// process template (image, command, args, env, workingDir; whole GPUs as nvidia.com/gpu, cpu and
// memory as limits), the phase, reason, message and the pod's address in the status, the
// container's state, restarts and exit code, and the Ready condition. Pure; thread-safe.

// The image of a process that strata's node agent runs itself: a container runtime never sees
// it, but Kubernetes requires one.
inline constexpr char kProcessImage[] = "strata.dev/process";

// The v1 spec of a pod whose strata spec is `spec` (schedulerName strata, the one container,
// restartPolicy, nodeName, tolerations, non-root security context).
Result<nlohmann::json> V1PodSpec(const nlohmann::json& spec);

// Whether the pod serves, as a v1 Ready condition says: Running, and for the leader of a
// Service's replica, or a pod with a readiness probe, while its readiness probe passes (the
// node agent's api::kReadyAtAnnotation); never while draining. `body` as stored.
bool PodServes(const nlohmann::json& body);

// The v1 status of strata's `status`, over `current` (the v1 status a server holds, or null: its
// other fields are kept), with the Ready condition `ready`. A status that is only Pending keeps
// `current` as it is.
nlohmann::json V1PodStatus(const nlohmann::json& status, const nlohmann::json& current, bool ready);

// The ownerReferences of a pod whose strata spec.owner is `owner`: its Job or Service as the
// pod's controller, as a Kubernetes controller's pods name theirs (kubectl drain evicts such pods
// without --force; a cluster's garbage collector deletes them with their owner). Null for a
// standalone pod, and for one whose owner's uid was not recorded.
nlohmann::json PodOwnerReferences(const nlohmann::json& owner);

// The v1 Pod a client of /api/v1 is served for `stored`: strata's metadata as it is, with its
// owner's reference, the v1 spec and status.
Result<nlohmann::json> ServedV1Pod(const nlohmann::json& stored);

// Whether `document` is a Pod in Kubernetes' shape (spec.containers), not strata's.
bool IsV1PodShape(const nlohmann::json& document);

// The pod to store for `served`, a v1 Pod a client sends back (a PUT, or a patched served pod) to
// replace `current` (as stored): its metadata (labels, annotations, resourceVersion,
// managedFields) is taken;
// its ownerReferences must be those served (they follow spec.owner), else InvalidArgument;
// its spec must be the one served, since a pod's spec does not change once it is created (in
// Kubernetes neither), else InvalidArgument naming the first field that differs; the status is
// `current`'s (it changes through the status subresource).
Result<nlohmann::json> StoredPodFromV1(const nlohmann::json& served, const nlohmann::json& current);

}  // namespace strata::api
