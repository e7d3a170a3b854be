#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "api/queue.h"
#include "cluster/cache.h"
#include "common/clock.h"
#include "controller/workload_conversion.h"
#include "scheduler/held_capacity.h"
#include "scheduler/model.h"

namespace strata::controller {

struct ClusterViewOptions {
  // Node label keys that are topology levels, outermost first. A job's topology level "nvlink"
  // or "kubernetes.io/hostname" means one node.
  std::vector<std::string> topology_levels = {"topology.strata.dev/block",
                                              "topology.strata.dev/rack"};
};

// Names that live pods hold (counted by the reader), plus those handed out during one pass, so
// that a bind never hands one out twice: MIG instance UUIDs, (address, port) rendezvous pairs.
template <typename T>
class NamesInUse {
 public:
  explicit NamesInUse(const std::map<T, int>& held) : held_(&held) {}

  bool Contains(const T& name) const { return held_->count(name) > 0 || taken_.count(name) > 0; }
  // Takes `name` for this pass; false if it is in use already.
  bool Take(const T& name) {
    if (Contains(name)) return false;
    taken_.insert(name);
    return true;
  }

 private:
  const std::map<T, int>* held_;
  std::set<T> taken_;
};

// What the running workloads of each queue are charged (QuotaLedger::ChargeFor, by queue name
// and flavor index) and how many there are, by the scheduler's own charging rules.
struct QueueCharges {
  std::map<std::pair<std::string, int>, scheduler::ResourceVector> charged;
  std::map<std::string, int64_t> admitted;
};

// What the scheduler adapter reads for one cycle: the scheduler's Snapshot and pending
// workloads, and the way back from scheduler names and indices to stored objects. Built by
// ClusterViewReader::Read; the references are the reader's, good until its next Read, and the
// objects they point to are the cache's, shared and immutable.
struct ClusterView {
  const scheduler::Snapshot& snapshot;  // running workloads in name order
  std::vector<scheduler::Workload> pending;
  // Workloads that cannot go to the scheduler (a field that does not convert, an incomplete
  // gang), explained like the scheduler's pending ones.
  std::vector<scheduler::Pending> held;
  const std::vector<cluster::ObjectRef>& nodes;   // index = scheduler node index
  const std::vector<cluster::ObjectRef>& queues;  // the Queues that convert
  // By workload name, pending and running.
  const std::map<std::string, WorkloadObjects>& workloads;
  // The pod groups (workloads without a Job) of which some pod is being stopped as preempted.
  const std::set<std::string>& preempted_groups;
  const QueueCharges& charges;
  NamesInUse<std::string> mig_instances_in_use;
  NamesInUse<std::pair<std::string, int>> master_ports_in_use;  // of live jobs
  std::vector<UnfinishedBind> unfinished;
};

// Reads nodes, queues, flavors, jobs and pods from the cache into a ClusterView, keeping what it
// read between calls so that a Read costs what changed since the last one, not the size of the
// cluster: it follows the cache's change log (cluster::Cache::ChangesSince) and converts again
// only the workloads whose Job or pods changed (workload_conversion.h), and every workload only
// when the set of nodes or the queues' and flavors' specs changed. A node whose Ready condition
// is not True gets kube's node.kubernetes.io/not-ready taint. Objects that do not decode are
// left out (the cache keeps them with their error).
//
// Owned by the scheduler adapter; not thread-safe. The cache must be Synced before each Read.
class ClusterViewReader {
 public:
  explicit ClusterViewReader(ClusterViewOptions options = {});

  // The cluster at `now` as the cache holds it. Workloads named in `nominated` are marked so
  // (their victims are being evicted).
  ClusterView Read(const cluster::Cache& cache, const std::set<std::string>& nominated,
                   TimePoint now);

 private:
  struct Members {
    cluster::ObjectRef job;
    std::map<store::ObjectKey, cluster::ObjectRef> pods;
  };

  void Forget();
  void ApplyJobOrPod(const cluster::Change& change);
  // Converts the queues and flavors again; true if their specs changed (or `force`), and with
  // them the snapshot's cluster.
  bool ReadQuota(const cluster::Cache& cache, bool force);
  // Numbers the nodes again (in name order) and converts them all.
  void IndexNodes();
  // Converts the `changed` nodes again; the cluster is copied only if the scheduler's view of
  // one changed.
  void UpdateNodes(const std::set<std::string>& changed);
  // Converts workload `name` again from its members, after dropping what it was unless
  // `append_running` (ReconvertAll: nothing is held, and its running part goes last).
  void Reconvert(const std::string& name, bool append_running);
  // Forgets what workload `name` was: its parts, what it held and what it was charged.
  void Drop(const std::string& name);
  void ReconvertAll();
  // Adds (sign 1) or removes (-1) a running workload's charge to its queue, and holds or frees
  // what it holds. Adding is refused (false, nothing held or charged, a warning logged) when
  // its pods do not fit what is left: pods bound by hand to GPUs taken or not there, which the
  // scheduler then neither counts nor preempts, rather than crash.
  bool Charge(const scheduler::RunningWorkload& running, int sign);
  // Adds (1) or removes (-1) a running workload's charge to its queue in charges_.
  void CountCharge(const scheduler::RunningWorkload& running, int sign);
  // Holds every running workload again on the snapshot's cluster (it was replaced); one that
  // no longer fits (its node lost the GPUs it holds) leaves the snapshot, as Charge refuses it.
  void HoldAgain();

  ClusterViewOptions options_;
  uint64_t cursor_ = 0;

  std::map<std::string, cluster::ObjectRef> node_refs_;  // decodable Nodes by name
  std::vector<cluster::ObjectRef> nodes_;
  std::map<std::string, int> node_index_;
  std::vector<std::pair<std::string, api::QueueSpec>> queue_specs_;
  std::vector<std::pair<std::string, api::ResourceFlavorSpec>> flavor_specs_;
  QuotaModel quota_;
  scheduler::Snapshot snapshot_;
  std::shared_ptr<scheduler::HeldCapacity> held_;  // snapshot_.held

  std::map<store::ObjectKey, std::string> workload_of_;  // each decodable Job and Pod
  std::map<std::string, Members> members_;
  std::set<std::string> dirty_;
  // What each workload is, its running part and its objects moved out (to snapshot_.running and
  // objects_).
  std::map<std::string, WorkloadRead> reads_;
  std::set<std::string> waiting_;  // with a pending, held or unfinished part
  std::map<std::string, WorkloadObjects> objects_;
  std::set<std::string> preempted_groups_;
  QueueCharges charges_;
  std::map<std::string, int> mig_in_use_;
  std::map<std::pair<std::string, int>, int> ports_in_use_;
};

}  // namespace strata::controller
