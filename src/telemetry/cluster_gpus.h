#pragma once

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "api/node.h"
#include "api/pod.h"
#include "api/queue.h"
#include "common/clock.h"
#include "common/status.h"
#include "store/store.h"
#include "telemetry/gpu_metrics.h"

// The cluster's GPUs as telemetry sees them: the Node and Pod objects of the store turned into
// one GpuSample per GPU, with its holders and its reading (measured, or derived for simulated
// nodes). Pure functions over plain values, plus one store read; thread-safe.

namespace strata::telemetry {

// The Node label that marks a node whose GPUs are simulated (set by node registration).
inline constexpr char kSimulatedNodeLabel[] = "strata.dev/simulated";
// The pod label that names the team a pod's cost and use roll up to.
inline constexpr char kTeamLabel[] = "team";
// The pod label that names the project a pod's cost rolls up to.
inline constexpr char kProjectLabel[] = "project";

// A pod as stored, with the store's bookkeeping that cost accrual needs.
struct StoredPod {
  api::Pod pod;
  TimePoint created{};
};

// Which Queue a pod's spec.queue names, for the queue label of the GPU and cost series: one of
// a Queue's localQueues in the pod's namespace (Kueue's LocalQueue), which wins, else a Queue by
// its name. As in Kueue, where kueue_* series carry the ClusterQueue, every queue label names
// the Queue, the one strata_queue_* series name, never the local name a job wrote. A plain value;
// thread-compatible.
class QueueNames {
 public:
  QueueNames() = default;
  explicit QueueNames(const std::vector<api::Queue>& queues);

  // The Queue `queue` names in `namespace_name`; a name that matches none is returned as written
  // (the scheduler reports it unknown).
  std::string Resolve(const std::string& namespace_name, const std::string& queue) const;

 private:
  std::map<std::pair<std::string, std::string>, std::string> local_;  // (ns, local) -> queue
};

// Every Node and Pod of the store, decoded, and the Queues' names.
struct ClusterObjects {
  std::vector<api::Node> nodes;
  std::vector<StoredPod> pods;
  QueueNames queues;
  int undecodable = 0;  // stored objects that did not decode (left out)
};

// Decodes Nodes and Pods as the REST API serves them, each pod's `created` from its
// metadata.creationTimestamp (the epoch when absent); an item that does not decode is counted in
// `undecodable` and left out.
ClusterObjects DecodeClusterObjects(const std::vector<nlohmann::json>& nodes,
                                    const std::vector<nlohmann::json>& pods);

// Reads every Node, Pod and Queue. Returns the store's error when a List fails; an object that does
// not decode is counted in `undecodable` and left out, so one bad object never hides the rest.
Result<ClusterObjects> LoadClusterObjects(const store::Store& store);

// Parses "2026-01-01T00:00:00Z" (UTC, whole seconds, as FormatRfc3339 writes it); nullopt for
// anything else.
std::optional<TimePoint> ParseUtcTimestamp(std::string_view text);

// Whether the pod holds what it was bound to: bound to a node and not finished.
bool HoldsResources(const api::Pod& pod);

// The holder record for `pod`'s claim on `gpu`; its queue is the Queue `queues` resolves.
GpuHolder HolderOf(const api::Pod& pod, const api::AssignedGpu& gpu, const QueueNames& queues);

// Measured readings of real GPUs, by UUID (what the node agents read through NVML).
using GpuReadingsByUuid = std::map<std::string, GpuReading>;
// Where the latest readings come from (empty: nowhere).
using GpuReadingSource = std::function<GpuReadingsByUuid()>;

// One sample per GPU of every node, in node then GPU order, with the holders from the pods
// that hold resources. GPUs of nodes labelled simulated get SimulatedGpuReading; the others
// take `measured[uuid]`, or an unknown reading (their DCGM series are left out) when absent.
std::vector<GpuSample> ClusterGpuSamples(const ClusterObjects& cluster,
                                         const GpuReadingsByUuid& measured);

}  // namespace strata::telemetry
