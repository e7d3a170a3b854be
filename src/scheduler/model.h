#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"

// The scheduler's own model of a cluster and its work: plain value types, independent of the
// api module's objects (a controller translates those into these). Everything here is
// thread-compatible data with no behaviour beyond small predicates.
namespace strata::scheduler {

// The resources quota is charged in. Amounts are integers in base units: GPU in milli-GPUs (so
// whole and fractional requests share one quota), GPU memory in MiB, CPU in milli-cores, memory
// in bytes.
enum class Resource : int { kGpu = 0, kGpuMemory = 1, kCpu = 2, kMemory = 3 };
inline constexpr int kNumResources = 4;

// "nvidia.com/gpu", "strata.dev/gpu-memory", "cpu", "memory".
std::string_view ResourceName(Resource resource);

// One amount per Resource.
struct ResourceVector {
  std::array<int64_t, kNumResources> amount{};

  int64_t& operator[](Resource r) { return amount[static_cast<int>(r)]; }
  int64_t operator[](Resource r) const { return amount[static_cast<int>(r)]; }
  ResourceVector& operator+=(const ResourceVector& other);
  ResourceVector& operator-=(const ResourceVector& other);
  bool operator==(const ResourceVector& other) const = default;
};

using Labels = std::map<std::string, std::string, std::less<>>;

enum class TaintEffect { kNoSchedule, kPreferNoSchedule, kNoExecute };

struct Taint {
  std::string key;
  std::string value;
  TaintEffect effect = TaintEffect::kNoSchedule;

  bool operator==(const Taint&) const = default;
};

// Kubernetes' toleration: operator Exists (any value) or Equal; an empty key with Exists
// tolerates every taint; no effect means every effect.
struct Toleration {
  std::string key;
  bool exists = false;
  std::string value;
  std::optional<TaintEffect> effect;
};

// True if some toleration in `tolerations` tolerates `taint`.
bool Tolerates(const std::vector<Toleration>& tolerations, const Taint& taint);

enum class SelectorOperator { kIn, kNotIn, kExists, kDoesNotExist, kGt, kLt };

// One matchExpression of a node affinity term.
struct LabelRequirement {
  std::string key;
  SelectorOperator op = SelectorOperator::kIn;
  std::vector<std::string> values;
};

// A nodeSelectorTerm: every requirement must hold.
struct NodeAffinityTerm {
  std::vector<LabelRequirement> requirements;
};

// True if `labels` satisfy `requirement` (Gt/Lt compare integers; a non-integer never matches).
bool Matches(const Labels& labels, const LabelRequirement& requirement);

// One GPU of a node as the inventory reports it.
struct Gpu {
  std::string model;         // "H100-80GB", "A100-40GB"
  int64_t memory_mib = 0;    // total device memory
  int island = 0;            // NVLink island within the node
  bool mig_enabled = false;  // MIG mode: serves only MIG-profile requests

  bool operator==(const Gpu&) const = default;
};

struct Node {
  std::string name;
  Labels labels;
  std::vector<Taint> taints;
  bool unschedulable = false;
  int64_t cpu_milli = 0;
  int64_t memory_bytes = 0;
  std::vector<Gpu> gpus;

  bool operator==(const Node&) const = default;
};

// What one pod asks of GPUs: N whole GPUs, or a share of one GPU (milli-GPU and/or GPU memory),
// or one MIG instance; plus attribute selectors every GPU used must satisfy.
struct GpuRequest {
  int count = 0;                    // whole GPUs
  int64_t milli = 0;                // share of one GPU, 1..999, when count == 0
  int64_t memory_mib = 0;           // GPU memory of a share, when count == 0
  std::string mig_profile;          // "3g.40gb", when set the pod takes one MIG instance
  std::vector<std::string> models;  // allowed models; empty: any
  int64_t min_memory_mib = 0;       // every GPU used has at least this much memory

  bool IsWhole() const { return count > 0; }
  bool IsMig() const { return !mig_profile.empty(); }
  bool IsShare() const {
    return count == 0 && mig_profile.empty() && (milli > 0 || memory_mib > 0);
  }
  bool Any() const { return IsWhole() || IsMig() || IsShare(); }
};

// A group of identical pods of a workload.
struct PodSet {
  std::string name;
  int count = 1;
  int64_t cpu_milli = 0;
  int64_t memory_bytes = 0;
  GpuRequest gpu;
  Labels node_selector;
  std::vector<NodeAffinityTerm> affinity;  // required terms, OR-ed; empty: any node
  std::vector<Toleration> tolerations;
};

enum class TopologyMode { kNone, kRequired, kPreferred };

// Where a gang's pods must (or should) land together: within one domain of `level`, a label key
// of Cluster::topology_levels or kHostLevel.
struct TopologyRequest {
  TopologyMode mode = TopologyMode::kNone;
  std::string level;
};
inline constexpr std::string_view kHostLevel = "kubernetes.io/hostname";

// A unit of admission: placed whole (every pod of every pod set) or not at all.
struct Workload {
  std::string name;
  std::string queue;  // empty: no quota applies
  int priority = 0;
  TimePoint submitted;
  std::vector<PodSet> pod_sets;
  TopologyRequest topology;
  std::optional<Duration> runtime_limit;  // none: runs until it ends, never backfills
  // Set by the caller while victims preempted for this workload are being evicted: it is
  // considered before every other workload, so that what was freed for it goes to it.
  bool nominated = false;
};

// Where one pod runs and which GPUs (node-local indices) it holds. A share or MIG instance
// holds exactly one GPU.
struct PodPlacement {
  int pod_set = 0;
  int pod_index = 0;
  int node = 0;  // index into Cluster::nodes
  std::vector<int> gpus;
};

// A workload that holds resources.
struct RunningWorkload {
  Workload workload;
  int flavor = -1;  // index into Cluster::flavors; -1 when its queue has no flavors
  std::vector<PodPlacement> pods;
  TimePoint started;
  TimePoint last_checkpoint;  // equals `started` when it never checkpointed
  int times_preempted = 0;
  // Its GPUs have idled under its queue's threshold and the queue lets idle work be reclaimed:
  // any workload of its queue or cohort with at least its priority may preempt it, before
  // anything else.
  bool reclaimable = false;
};

// A class of nodes (a GPU class) selected by node labels, as Kueue's ResourceFlavor.
struct Flavor {
  std::string name;
  Labels node_labels;
  std::optional<int64_t> gpu_memory_mib;  // charged per whole GPU when set
};

// Quota of one resource in one flavor of a queue (Kueue's semantics): `nominal` is guaranteed;
// up to `borrowing_limit` more may be borrowed from the cohort (none: unlimited); at most
// `lending_limit` of the nominal is lent to the cohort (none: all of it).
struct ResourceQuota {
  int64_t nominal = 0;
  std::optional<int64_t> borrowing_limit;
  std::optional<int64_t> lending_limit;
};

// A queue's quota in one flavor. A resource without a quota is not limited by the queue.
struct FlavorQuota {
  int flavor = 0;  // index into Cluster::flavors
  std::array<std::optional<ResourceQuota>, kNumResources> resources;
};

enum class QueueingStrategy { kBestEffortFifo, kStrictFifo };

struct Queue {
  std::string name;
  std::string cohort;   // empty: borrows and lends nothing
  double weight = 1.0;  // fair-sharing weight
  QueueingStrategy strategy = QueueingStrategy::kBestEffortFifo;
  std::vector<FlavorQuota> flavors;  // tried in order; empty: no quota, any node
  bool preempt_lower_priority = true;
  bool reclaim_within_cohort = true;
  // false: the queue only holds quota its cohort lends (a Kueue Cohort's own quota, which its
  // ClusterQueues borrow) and admits no workload of its own.
  bool admits_workloads = true;
};

// The static part of a cluster: nodes, topology, flavors, queues.
struct Cluster {
  std::vector<Node> nodes;
  std::vector<std::string> topology_levels;  // node label keys, outermost first: block, rack
  std::vector<Flavor> flavors;
  std::vector<Queue> queues;
};

class HeldCapacity;  // held_capacity.h

// What a scheduling cycle sees: the cluster, what runs on it, and the time.
struct Snapshot {
  std::shared_ptr<const Cluster> cluster;
  std::vector<RunningWorkload> running;
  TimePoint now;
  // When set: `cluster`'s capacity and quota with exactly `running` held, kept by the caller
  // between cycles; a cycle starts from a copy of it (its node sets in node order) instead of
  // holding each running workload.
  std::shared_ptr<const HeldCapacity> held;
};

// Why a workload still waits, in tiers a user can act on.
enum class PendingTier {
  kWaitingForQuota,
  kTopologyPlacementFailed,
  kGangIncomplete,
  kPreemptionPending,
  kReserved,
  kUnschedulable,
  kBlockedByStrictFifo,
  kInvalid,
  // More than the whole cluster holds with nothing else running: no wait or preemption helps.
  kExceedsClusterCapacity,
};

// "WaitingForQuota", "TopologyPlacementFailed", ...
std::string_view PendingTierName(PendingTier tier);

struct Binding {
  std::string workload;
  int flavor = -1;
  std::vector<PodPlacement> pods;
};

struct Preemption {
  std::string victim;
  std::string preemptor;
  std::string reason;  // "InQueuePriority", "CohortReclaim" or "IdleReclaim"
};

struct Pending {
  std::string workload;
  PendingTier tier = PendingTier::kUnschedulable;
  std::string message;  // kube-scheduler's FitError text, when placement was tried
  std::string detail;   // the tier's numbers: quota use, victims, reservation
};

// The head-of-line gang's claim: it starts on `nodes` at `start` (none: not before a workload
// without a runtime limit ends).
struct Reservation {
  std::string workload;
  std::optional<TimePoint> start;
  std::vector<int> nodes;
};

// The outcome of one cycle. Bindings hold every pod of the workload.
struct Decisions {
  std::vector<Binding> bindings;
  std::vector<Preemption> preemptions;
  std::vector<Pending> pending;
  std::optional<Reservation> reservation;
};

}  // namespace strata::scheduler
