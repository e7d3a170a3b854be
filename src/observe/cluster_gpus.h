#pragma once

#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "api/annotations.h"
#include "api/node.h"
#include "api/pod.h"
#include "api/queue_names.h"
#include "common/clock.h"
#include "common/status.h"
#include "observe/gpu_metrics.h"
#include "observe/shared_chunks.h"

// The cluster's GPUs as the observe module sees them: the Node and Pod objects turned into one
// GpuSample per GPU, with its holders and its reading (measured, or derived for simulated
// nodes). Pure functions over plain values, plus one store read; thread-safe.

namespace strata::observe {

// The annotation's text for `share` ("0.07"; two decimals, clamped to [0, 1]), and the share
// that text holds: nullopt for anything but a number in [0, 1].
std::string FormatGpuActivity(double share);
std::optional<double> ParseGpuActivity(std::string_view text);

// A pod as stored, with the store's bookkeeping that cost accrual needs.
struct StoredPod {
  api::Pod pod;
  TimePoint created{};
};

// Every Node and Pod of the store, decoded, and the Queues' names: as in Kueue, where kueue_*
// series carry the ClusterQueue, every queue label of the GPU and cost series names the Queue
// a pod's spec.queue resolves to (api::QueueNames), never the local name a job wrote. The
// decoded objects are immutable and shared, and so are the chunks that hold them, so that a
// cache of them (ClusterObjectsCache) hands out a cluster after a change by copying only the
// chunks the change falls in.
struct ClusterQueues {
  std::vector<api::Queue> objects;  // annotations, local queues; in the store's list order
  api::QueueNames names;            // what the objects resolve
};
struct ClusterObjects {
  SharedChunks<api::Node> nodes;
  SharedChunks<StoredPod> pods;
  // Shared by every cluster a cache hands out until a Queue changes. Never null.
  std::shared_ptr<const ClusterQueues> queues = std::make_shared<const ClusterQueues>();
  int undecodable = 0;  // stored objects that did not decode (left out)
};

// Decodes Nodes and Pods as the REST API serves them, each pod's `created` from its
// metadata.creationTimestamp (the epoch when absent); an item that does not decode is counted in
// `undecodable` and left out.
ClusterObjects DecodeClusterObjects(const std::vector<nlohmann::json>& nodes,
                                    const std::vector<nlohmann::json>& pods);

// Whether `node` is labelled api::kSimulatedLabel "true": its GPUs are simulated.
bool HasSimulatedGpus(const api::Node& node);

// Whether the pod holds what it was bound to: bound to a node and not finished.
bool HoldsResources(const api::Pod& pod);

// The holder record for `pod`'s claim on `gpu`; its queue is the Queue `queues` resolves, its
// activity the pod's api::kGpuActivityAnnotation (left unmeasured when the value does not parse).
GpuHolder HolderOf(const api::Pod& pod, const api::AssignedGpu& gpu, const api::QueueNames& queues);

// The queue label of `pod`'s series: the Queue its spec.queue resolves to, or the name as
// written when it resolves to none (the scheduler reports it unknown).
std::string QueueLabelOf(const api::Pod& pod, const api::QueueNames& queues);

// Measured readings of real GPUs, by UUID (what the node agents read through NVML).
using GpuReadingsByUuid = std::map<std::string, GpuReading>;
// Where the latest readings come from (empty: nowhere).
using GpuReadingSource = std::function<GpuReadingsByUuid()>;

// One sample per GPU of every node, in node then GPU order, with the holders from the pods
// that hold resources. GPUs of nodes labelled simulated get SimulatedGpuReading (following
// their holders' measured activity where recorded); the others take `measured[uuid]`, or an
// unknown reading (their DCGM series are left out) when absent.
std::vector<GpuSample> ClusterGpuSamples(const ClusterObjects& cluster,
                                         const GpuReadingsByUuid& measured);

}  // namespace strata::observe
