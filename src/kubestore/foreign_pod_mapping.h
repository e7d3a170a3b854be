#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "common/status.h"
#include "store/object.h"

// Pods that strata did not make (a Deployment's ReplicaSet's, a batch Job's, kubectl run's), as
// a virtual kubelet's store reads and writes them (KubeStoreOptions::kubelet_node): the node agent
// runs any v1 Pod bound to its Node, as a kubelet with a container runtime would, within what
// local processes can honour. Such a pod reads as a strata Pod with no owner, marked with
// api::kForeignPodAnnotation (its container's name), that the agent runs like a standalone pod:
//  - its one container's command + args (the image cannot run: ignored, one warning), env
//    (valueFrom included), envFrom, workingDir, securityContext's user and group, probes;
//    cpu and memory limits; spec.restartPolicy;
//  - what it cannot run is said in api::kCannotRunAnnotation, naming the container: no command
//    (an image's entrypoint only), several containers, init containers;
//  - its status reads back from the v1 status the agent wrote (phase, reason, message, podIP,
//    restartCount and exit code; startTime, the Ready condition's and the container's
//    terminated times as the agent's started-at, ready-at and finished-at annotations);
//  - a pod deleted with a grace period reads as one to stop within it
//    (api::kForeignDeletingAnnotation), which the agent then deletes for good.
// Writing one (ForeignPodToKube) writes its status only, in a kubelet's words; its metadata and
// spec are its owner's.
// Pure functions over values; thread-safe.

namespace strata::kubestore {

using Json = nlohmann::json;

// Whether `object`, a v1 Pod the server sent, is foreign: not labelled as strata's.
bool IsForeignPod(const Json& object);

// strata's body (apiVersion strata.dev/v1alpha1) of the foreign v1 Pod `object` (see above).
// Never fails on a pod the server accepted: what strata cannot run is said on the pod.
Result<Json> ForeignPodFromKube(const Json& object);

// The v1 Pod to write for the foreign pod `object` (a store object as the node agent leaves it)
// over `current`, the server's: `current` as it is, its status made of strata's the way a kubelet
// reports it: phase, reason, message, podIP/podIPs, startTime; the conditions
// PodReadyToStartContainers, Initialized, ContainersReady and Ready (while it serves:
// api::PodServes); one containerStatuses entry (name, image, ready, started, restartCount, state
// waiting/running/terminated with its times and exit code). The resourceVersion is
// object.resource_version when set, else current's.
Result<Json> ForeignPodToKube(const store::Object& object, const Json& current);

}  // namespace strata::kubestore
