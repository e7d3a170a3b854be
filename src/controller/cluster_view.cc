#include "controller/cluster_view.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "api/pod.h"
#include "scheduler/quota_ledger.h"

namespace strata::controller {
namespace {

namespace sched = scheduler;

// The position of workload `name` in running workloads sorted by name.
std::vector<sched::RunningWorkload>::iterator RunningSlot(
    std::vector<sched::RunningWorkload>& running, const std::string& name) {
  return std::lower_bound(
      running.begin(), running.end(), name,
      [](const sched::RunningWorkload& r, const std::string& n) { return r.workload.name < n; });
}

template <typename T>
void Release(std::map<T, int>& counts, const T& name) {
  auto it = counts.find(name);
  if (it != counts.end() && --it->second <= 0) counts.erase(it);
}

bool StoppedAsPreempted(const WorkloadObjects& objects) {
  if (objects.job != nullptr) return false;  // the job controller stops the rest of a job
  return std::any_of(objects.pods.begin(), objects.pods.end(), [](const cluster::ObjectRef& ref) {
    return api::StopRequested(*ref->As<api::Pod>()) == api::kStopPreempted;
  });
}

}  // namespace

ClusterViewReader::ClusterViewReader(ClusterViewOptions options) : options_(std::move(options)) {
  auto cluster = std::make_shared<sched::Cluster>();
  cluster->topology_levels = options_.topology_levels;
  snapshot_.cluster = std::move(cluster);
}

ClusterView ClusterViewReader::Read(const cluster::Cache& cache,
                                    const std::set<std::string>& nominated, TimePoint now) {
  cluster::Changes changes =
      cache.ChangesSince(cursor_, {"Node", "Queue", "ResourceFlavor", "Job", "Pod"});
  cursor_ = changes.cursor;
  bool everything = changes.resync;
  bool nodes_added_or_gone = changes.resync;
  bool quota_changed = changes.resync;
  if (changes.resync) Forget();
  std::set<std::string> nodes_changed;
  for (const cluster::Change& change : changes.changes) {
    const std::string& kind = change.key.kind;
    if (kind == "Queue" || kind == "ResourceFlavor") {
      quota_changed = true;
    } else if (kind != "Node") {
      ApplyJobOrPod(change);
    } else if (change.current == nullptr || change.current->As<api::Node>() == nullptr) {
      nodes_added_or_gone |= node_refs_.erase(change.key.name) > 0;
    } else if (auto [held, added] = node_refs_.try_emplace(change.key.name, change.current);
               added) {
      nodes_added_or_gone = true;
    } else {
      held->second = change.current;
      nodes_changed.insert(change.key.name);
    }
  }
  // Workloads know queues, flavors and nodes by index.
  if (quota_changed && ReadQuota(cache, changes.resync)) everything = true;
  if (nodes_added_or_gone) {
    IndexNodes();
    everything = true;
  } else if (!nodes_changed.empty()) {
    UpdateNodes(nodes_changed);
  }
  if (everything) {
    ReconvertAll();
  } else {
    for (const std::string& name : dirty_) Reconvert(name, false);
  }
  dirty_.clear();
  snapshot_.now = now;

  ClusterView view{snapshot_,
                   {},
                   {},
                   nodes_,
                   quota_.converted,
                   objects_,
                   preempted_groups_,
                   charges_,
                   NamesInUse<std::string>(mig_in_use_),
                   NamesInUse<std::pair<std::string, int>>(ports_in_use_),
                   {}};
  for (const std::string& name : waiting_) {
    const WorkloadRead& read = reads_.at(name);
    view.unfinished.insert(view.unfinished.end(), read.unfinished.begin(), read.unfinished.end());
    if (read.pending) {
      view.pending.push_back(*read.pending);
      view.pending.back().nominated = nominated.count(name) > 0;
    }
    if (read.held) view.held.push_back(*read.held);
  }
  return view;
}

void ClusterViewReader::Forget() {
  node_refs_.clear();
  workload_of_.clear();
  members_.clear();
  dirty_.clear();
}

void ClusterViewReader::ApplyJobOrPod(const cluster::Change& change) {
  const bool is_job = change.key.kind == "Job";
  if (auto old = workload_of_.find(change.key); old != workload_of_.end()) {
    Members& members = members_[old->second];
    if (is_job) {
      members.job = nullptr;
    } else {
      members.pods.erase(change.key);
    }
    dirty_.insert(old->second);
    workload_of_.erase(old);
  }
  if (change.current == nullptr) return;
  std::string name;
  if (is_job) {
    const api::Job* job = change.current->As<api::Job>();
    if (job == nullptr) return;
    name = JobWorkloadName(*job);
    members_[name].job = change.current;
  } else {
    const api::Pod* pod = change.current->As<api::Pod>();
    if (pod == nullptr) return;
    name = PodWorkloadName(*pod);
    members_[name].pods[change.key] = change.current;
  }
  dirty_.insert(name);
  workload_of_.emplace(change.key, std::move(name));
}

bool ClusterViewReader::ReadQuota(const cluster::Cache& cache, bool force) {
  std::vector<cluster::ObjectRef> queues = cache.List("Queue");
  std::vector<cluster::ObjectRef> flavors = cache.List("ResourceFlavor");
  std::vector<std::pair<std::string, api::QueueSpec>> queue_specs;
  for (const cluster::ObjectRef& ref : queues) {
    if (const api::Queue* queue = ref->As<api::Queue>()) {
      queue_specs.emplace_back(queue->metadata.name, queue->spec);
    }
  }
  std::vector<std::pair<std::string, api::ResourceFlavorSpec>> flavor_specs;
  for (const cluster::ObjectRef& ref : flavors) {
    if (const api::ResourceFlavor* flavor = ref->As<api::ResourceFlavor>()) {
      flavor_specs.emplace_back(flavor->metadata.name, flavor->spec);
    }
  }
  // Written statuses change the Queues the view hands out, not the model.
  quota_ = ConvertQuota(queues, flavors);
  if (!force && queue_specs == queue_specs_ && flavor_specs == flavor_specs_) return false;
  queue_specs_ = std::move(queue_specs);
  flavor_specs_ = std::move(flavor_specs);
  auto cluster = std::make_shared<sched::Cluster>(*snapshot_.cluster);
  cluster->flavors = quota_.scheduler_flavors;
  cluster->queues = quota_.scheduler_queues;
  snapshot_.cluster = std::move(cluster);
  return true;
}

void ClusterViewReader::IndexNodes() {
  auto cluster = std::make_shared<sched::Cluster>();
  cluster->topology_levels = snapshot_.cluster->topology_levels;
  cluster->flavors = snapshot_.cluster->flavors;
  cluster->queues = snapshot_.cluster->queues;
  nodes_.clear();
  node_index_.clear();
  for (const auto& [name, ref] : node_refs_) {
    node_index_[name] = static_cast<int>(nodes_.size());
    cluster->nodes.push_back(ConvertNode(*ref->As<api::Node>()));
    nodes_.push_back(ref);
  }
  snapshot_.cluster = std::move(cluster);
}

void ClusterViewReader::UpdateNodes(const std::set<std::string>& changed) {
  std::shared_ptr<sched::Cluster> next;
  for (const std::string& name : changed) {
    const int index = node_index_.at(name);
    nodes_[index] = node_refs_.at(name);
    sched::Node converted = ConvertNode(*nodes_[index]->As<api::Node>());
    // A heartbeat changes the stored Node, not what the scheduler sees of it.
    if (converted == snapshot_.cluster->nodes[index]) continue;
    if (next == nullptr) next = std::make_shared<sched::Cluster>(*snapshot_.cluster);
    next->nodes[index] = std::move(converted);
  }
  if (next == nullptr) return;
  snapshot_.cluster = std::move(next);
  HoldAgain();
}

void ClusterViewReader::HoldAgain() {
  held_ = std::make_shared<sched::HeldCapacity>(snapshot_.cluster);
  std::erase_if(snapshot_.running, [&](const sched::RunningWorkload& running) {
    if (held_->Hold(running)) return false;
    spdlog::warn("workload {} no longer fits the node its pods are bound to; not counted",
                 running.workload.name);
    CountCharge(running, -1);
    return true;
  });
  snapshot_.held = held_;
}

void ClusterViewReader::Reconvert(const std::string& name, bool append_running) {
  if (!append_running) Drop(name);
  auto members = members_.find(name);
  if (members == members_.end()) return;
  if (members->second.job == nullptr && members->second.pods.empty()) {
    members_.erase(members);
    return;
  }
  std::vector<cluster::ObjectRef> pods;
  pods.reserve(members->second.pods.size());
  for (const auto& [key, ref] : members->second.pods) pods.push_back(ref);
  WorkloadRead read =
      ReadWorkload(name, members->second.job, pods, WorkloadContext{node_index_, quota_});
  for (const std::string& instance : read.mig_instances) ++mig_in_use_[instance];
  for (const std::pair<std::string, int>& port : read.master_ports) ++ports_in_use_[port];
  if (read.objects) {
    if (StoppedAsPreempted(*read.objects)) preempted_groups_.insert(name);
    objects_[name] = std::move(*read.objects);  // one copy: the view's, not also the read's
    read.objects.reset();
  }
  if (read.running) {
    if (Charge(*read.running, 1)) {
      auto slot = append_running ? snapshot_.running.end() : RunningSlot(snapshot_.running, name);
      snapshot_.running.insert(slot, std::move(*read.running));
    }
    read.running.reset();
  }
  if (read.pending || read.held || !read.unfinished.empty()) waiting_.insert(name);
  reads_[name] = std::move(read);
}

void ClusterViewReader::Drop(const std::string& name) {
  auto read = reads_.find(name);
  if (read == reads_.end()) return;
  for (const std::string& instance : read->second.mig_instances) Release(mig_in_use_, instance);
  for (const std::pair<std::string, int>& port : read->second.master_ports) {
    Release(ports_in_use_, port);
  }
  reads_.erase(read);
  waiting_.erase(name);
  objects_.erase(name);
  preempted_groups_.erase(name);
  auto slot = RunningSlot(snapshot_.running, name);
  if (slot != snapshot_.running.end() && slot->workload.name == name) {
    Charge(*slot, -1);
    snapshot_.running.erase(slot);
  }
}

void ClusterViewReader::ReconvertAll() {
  snapshot_.running.clear();
  HoldAgain();
  reads_.clear();
  waiting_.clear();
  objects_.clear();
  preempted_groups_.clear();
  charges_ = {};
  mig_in_use_.clear();
  ports_in_use_.clear();
  std::erase_if(members_, [](const auto& entry) {
    return entry.second.job == nullptr && entry.second.pods.empty();
  });
  // In name order, so each running workload is appended in its place.
  for (const auto& [name, members] : members_) Reconvert(name, true);
}

bool ClusterViewReader::Charge(const sched::RunningWorkload& running, int sign) {
  if (sign > 0) {
    if (!held_->Hold(running)) {
      spdlog::warn(
          "workload {}: its pods are bound to GPUs that are taken or not on their node; the "
          "scheduler does not count them",
          running.workload.name);
      return false;
    }
  } else {
    held_->Free(running);
  }
  CountCharge(running, sign);
  return true;
}

void ClusterViewReader::CountCharge(const sched::RunningWorkload& running, int sign) {
  const sched::Flavor* flavor =
      running.flavor >= 0 ? &snapshot_.cluster->flavors[running.flavor] : nullptr;
  const sched::ResourceVector charge = sched::QuotaLedger::ChargeFor(running.workload, flavor);
  const std::string& queue = running.workload.queue;
  if (sign > 0) {
    charges_.charged[{queue, running.flavor}] += charge;
    ++charges_.admitted[queue];
    return;
  }
  auto charged = charges_.charged.find({queue, running.flavor});
  charged->second -= charge;
  if (charged->second == sched::ResourceVector{}) charges_.charged.erase(charged);
  auto admitted = charges_.admitted.find(queue);
  if (--admitted->second == 0) charges_.admitted.erase(admitted);
}

}  // namespace strata::controller
