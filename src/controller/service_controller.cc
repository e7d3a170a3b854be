#include "controller/service_controller.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "cluster/indexes.h"
#include "controller/object_writer.h"
#include "controller/training_pod.h"

namespace strata::controller {

using api::kDrainingAnnotation;
using api::kStopReplaced;
using api::kStopScaledDown;
using api::kStopServiceDeleted;

// One service's pass: its writes and what it needs to move replicas along.
struct ServiceController::Pass {
  ObjectWriter batch;
  TimePoint now;
  const ServiceControllerOptions& options;
  const ReplicaTraffic* traffic;
  // The writes this pass may make (what the controller's pass has left); a replica is moved
  // along whole or left for the next pass.
  int64_t allowed = 0;

  bool Full() const { return batch.writes() >= allowed; }
  int64_t Room() const { return std::max<int64_t>(0, allowed - batch.writes()); }

  // Starts draining a live replica: its pods are marked, so the gateway sends it nothing new. A
  // replica none of whose pods got a node runs nothing: its pods are deleted at once.
  void Drain(const Replica& replica, const std::string& why) {
    if (Full()) return;
    const bool bound = std::any_of(replica.pods.begin(), replica.pods.end(), [](const auto& pod) {
      return !pod.value.spec.node_name.empty() && !api::PodTerminal(pod.value);
    });
    if (!bound) {
      for (const auto& pod : replica.pods) batch.Delete(pod);
      return;
    }
    batch.Event("Normal", "Draining",
                fmt::format("replica {} ({}) drains: {}", replica.index, replica.version, why));
    MarkDraining(replica, FormatRfc3339(now));
  }

  // Marks every live pod of the replica not marked yet, with `since`: a drain a crash left
  // half marked is marked whole.
  void MarkDraining(const Replica& replica, const std::string& since) {
    for (const auto& pod : replica.pods) {
      if (api::PodTerminal(pod.value) ||
          api::PodAnnotation(pod.value, kDrainingAnnotation) != nullptr) {
        continue;
      }
      api::Pod marked = pod.value;
      marked.metadata.annotations[kDrainingAnnotation] = since;
      batch.Update(pod, std::move(marked));
    }
  }

  // Moves a replica that is out of service along: a terminal one's pods are deleted; a broken
  // one's other pods are stopped; a draining one stops once its last request ended (or the
  // grace passed), with `stop_reason`.
  void Retire(const Replica& replica, std::string_view stop_reason) {
    if (Full()) return;
    const bool broken = replica.Broken() && !replica.Stopping() && !replica.Draining();
    if (broken) {
      batch.Event("Warning", "ReplicaFailed",
                  fmt::format("replica {} ({}) failed: {}; replacing it", replica.index,
                              replica.version, DescribeBreak(replica)));
      for (const auto& pod : replica.pods) {
        batch.StopPod(pod, api::kStopGroupRestart, "another pod of the replica failed");
      }
    }
    if (replica.Terminal()) {
      for (const auto& pod : replica.pods) batch.Delete(pod);
      return;
    }
    if (replica.Stopping() && !broken) {
      // A stop a crash left half asked for is asked of every pod.
      for (const auto& pod : replica.pods) {
        const std::string reason = api::StopRequested(pod.value);
        if (reason.empty()) continue;
        const std::string* why = api::PodAnnotation(pod.value, api::kStopMessageAnnotation);
        for (const auto& other : replica.pods) {
          batch.StopPod(other, reason, why != nullptr ? *why : reason);
        }
        break;
      }
    }
    if (broken || replica.Stopping()) return;
    std::optional<TimePoint> started = replica.DrainStarted();
    if (!started) return;
    MarkDraining(replica, FormatRfc3339(*started));
    const Duration elapsed = now - *started;
    const std::string endpoint = replica.Endpoint();
    const int64_t in_flight =
        traffic != nullptr && !endpoint.empty() ? traffic->InFlight(endpoint) : 0;
    std::string message;
    if (elapsed >= options.route_settle && in_flight == 0) {
      message = "drained: no request in flight";
    } else if (elapsed >= options.drain_grace) {
      message = fmt::format("drain grace passed with {} request(s) in flight", in_flight);
    } else {
      return;
    }
    for (const auto& pod : replica.pods) batch.StopPod(pod, stop_reason, message);
  }

  static std::string DescribeBreak(const Replica& replica) {
    for (const auto& pod : replica.pods) {
      const api::Pod& p = pod.value;
      if (!api::PodTerminal(p) || !api::StopRequested(p).empty()) continue;
      std::string out =
          fmt::format("pod {} {}", p.metadata.name, api::PodPhaseName(p.status.phase));
      if (p.status.exit_code) out += fmt::format(" with exit code {}", *p.status.exit_code);
      if (!p.status.reason.empty()) out += fmt::format(" ({})", p.status.reason);
      return out;
    }
    return fmt::format("{} of its {} pods exist", replica.pods.size(), replica.group_size);
  }
};

ServiceController::ServiceController(store::Store& store, cluster::Cache& cache, const Clock& clock,
                                     ServiceControllerOptions options,
                                     const ReplicaTraffic* traffic, ReplicaScaler* scaler)
    : store_(store),
      cache_(cache),
      clock_(clock),
      options_(options),
      traffic_(traffic),
      scaler_(scaler),
      events_(store, clock, options.event_repeat_interval) {}

Status ServiceController::RunOnce() {
  if (Status synced = cache_.Sync(); !synced.ok()) return synced;
  // Pods whose service is gone: the services deleted since the last pass, and the owners of the
  // pods that changed (every pod, the first time), followed until none of their pods is left.
  cluster::Changes changes = cache_.ChangesSince(cursor_, {"Pod", "Service"});
  cursor_ = changes.cursor;
  writes_left_ = options_.max_pod_writes_per_pass;
  for (const cluster::Change& change : changes.changes) {
    if (change.key.kind == "Service") {
      if (!change.current) orphaned_.insert({change.key.namespace_name, change.key.name});
      continue;
    }
    const cluster::ObjectRef& state = change.current ? change.current : change.last;
    const api::Pod* pod = state ? state->As<api::Pod>() : nullptr;
    if (pod != nullptr && pod->spec.owner.kind == "Service") {
      orphaned_.insert({pod->metadata.namespace_name, pod->spec.owner.name});
    }
  }
  Status first;
  for (const cluster::ObjectRef& ref : cache_.List("Service")) {
    std::optional<cluster::Stored<api::Service>> service = cluster::StoredOf<api::Service>(ref);
    if (!service) continue;
    const std::string& ns = service->value.metadata.namespace_name;
    const std::string& name = service->value.metadata.name;
    orphaned_.erase({ns, name});
    Status status = Reconcile(
        *service, GroupReplicas(cluster::StoredOf<api::Pod>(cache_.Indexed(
                      cluster::kPodsByOwner, cluster::OwnerIndexValue("Service", ns, name)))));
    if (first.ok()) first = status;
  }
  for (auto it = orphaned_.begin(); it != orphaned_.end();) {
    const auto& [ns, name] = *it;
    std::vector<cluster::Stored<api::Pod>> pods = cluster::StoredOf<api::Pod>(
        cache_.Indexed(cluster::kPodsByOwner, cluster::OwnerIndexValue("Service", ns, name)));
    if (pods.empty()) {
      it = orphaned_.erase(it);
      continue;
    }
    Status status = RemoveOrphans(ns, name, GroupReplicas(std::move(pods)));
    if (first.ok()) first = status;
    ++it;
  }
  return first;
}

namespace {

// Drain order: replicas that serve nothing yet first, then the highest index.
bool DrainFirst(const Replica* a, const Replica* b) {
  if (a->Ready() != b->Ready()) return !a->Ready();
  return a->index > b->index;
}

// Takes the lowest index not in `used`, searching from `*from` (every index below it is used),
// and moves `*from` past it: a pass's creations walk the used indices once, not once each.
int64_t TakeLowestFreeIndex(std::set<int64_t>& used, int64_t* from) {
  int64_t index = *from;
  for (auto it = used.lower_bound(index); it != used.end() && *it == index; ++it) ++index;
  used.insert(index);
  *from = index + 1;
  return index;
}

// "created replica(s) 0, 1 of v1"; a long list is cut after its first indices.
std::string DescribeCreated(const std::vector<int64_t>& created, const std::string& version) {
  constexpr size_t kListed = 10;
  if (created.size() <= kListed) {
    return fmt::format("created replica(s) {} of {}", fmt::join(created, ", "), version);
  }
  return fmt::format("created {} replicas of {}: {}, ...", created.size(), version,
                     fmt::join(created.begin(), created.begin() + kListed, ", "));
}

}  // namespace

Status ServiceController::Reconcile(const cluster::Stored<api::Service>& stored,
                                    std::vector<Replica> replicas) {
  const api::Service& service = stored.value;
  const api::ServiceSpec& spec = service.spec;
  const TimePoint now = clock_.Now();
  const api::ServiceStatus& before = service.status;
  api::ServiceStatus status;
  status.decisions = before.decisions;
  status.cold_start_seconds = before.cold_start_seconds;
  status.cold_starts_measured = before.cold_starts_measured;
  Pass pass{
      ObjectWriter(store_, events_,
                   {"Service", stored.raw.key.namespace_name, stored.raw.key.name, stored.raw.uid}),
      now, options_, traffic_, writes_left_};

  // The cold start, measured over the replicas ready now.
  double cold_sum = 0;
  int64_t cold_count = 0;
  std::set<int64_t> used;
  int64_t lowest_free = 0;  // every index below it is used
  std::map<std::string, int64_t> draining_by_version;
  for (const Replica& replica : replicas) {
    used.insert(replica.index);
    if (std::optional<TimePoint> ready = replica.ReadyAt(); ready && replica.Ready()) {
      cold_sum += std::chrono::duration<double>(*ready - replica.Created()).count();
      ++cold_count;
    }
  }
  if (cold_count > 0) {
    status.cold_start_seconds = cold_sum / static_cast<double>(cold_count);
    status.cold_starts_measured = cold_count;
  }

  // Each version's template hash, computed once per pass (it encodes the whole service).
  std::map<std::string, std::string> hashes;
  for (const api::ServiceVersion& version : spec.versions) {
    hashes[version.name] = ServiceTemplateHash(service, version);
  }
  std::map<std::string, std::vector<const Replica*>> live_by_version;
  for (const Replica& replica : replicas) {
    auto version = hashes.find(replica.version);
    const bool stale = version == hashes.end() || replica.template_hash != version->second;
    if (!replica.Live()) {
      if (replica.Draining() && !replica.Terminal()) ++draining_by_version[replica.version];
      pass.Retire(replica, stale ? kStopReplaced : kStopScaledDown);
    } else if (version == hashes.end()) {
      pass.Drain(replica, "its version is no longer in the service");
      ++draining_by_version[replica.version];
    } else {
      live_by_version[replica.version].push_back(&replica);
    }
  }

  for (const api::ServiceVersion& version : spec.versions) {
    const std::string& hash = hashes[version.name];
    std::vector<const Replica*>& live = live_by_version[version.name];
    VersionReplicas counts;
    counts.cold_start_seconds = status.cold_start_seconds;
    for (const Replica* replica : live) ++(replica->Ready() ? counts.ready : counts.starting);
    ScaleAdvice advice = scaler_ != nullptr ? scaler_->Advise(service, version, counts)
                                            : ScaleAdvice{static_cast<int>(spec.min_replicas),
                                                          "minReplicas (no autoscaler)"};
    const int64_t desired = std::clamp<int64_t>(advice.desired, 0, spec.max_replicas);

    api::ServiceVersionStatus& version_status = status.Version(version.name);
    version_status.desired_replicas = desired;
    const api::ServiceVersionStatus* previous = before.FindVersion(version.name);
    const int64_t was = previous != nullptr ? previous->desired_replicas : 0;
    // The reason is the one given when the count last changed: the autoscaler's words change
    // with every sample, and rewriting the status at each pass would churn the store.
    version_status.reason = previous != nullptr ? previous->reason : advice.reason;
    if (desired != was || previous == nullptr) {
      version_status.reason = advice.reason;
      status.Record({FormatRfc3339(now), version.name, was, desired, advice.reason});
      pass.batch.Event(
          "Normal", desired >= was ? "ScaledUp" : "ScaledDown",
          fmt::format("{}: {} -> {} replicas: {}", version.name, was, desired, advice.reason));
    }

    // Drains: every replica when the count is 0; otherwise the old template's replicas, ready
    // ones while the ready ones still cover the count less maxUnavailable without them, then
    // whatever is beyond the count (plus maxSurge replicas while old ones remain).
    std::set<const Replica*> drained;
    auto drain = [&](const Replica* replica, const std::string& why) {
      pass.Drain(*replica, why);
      drained.insert(replica);
    };
    std::sort(live.begin(), live.end(), DrainFirst);
    if (desired == 0) {
      for (const Replica* replica : live) drain(replica, "scaled to zero");
    } else {
      // Surging, the new replicas take over one ready replica per pass; without a surge,
      // maxUnavailable of them go at once (the native decoder refuses both bounds at 0).
      int64_t ready = counts.ready;
      const int64_t floor = desired - std::max<int64_t>(spec.max_unavailable, 0);
      int64_t ready_drains = spec.max_surge > 0 ? 1 : std::max<int64_t>(1, spec.max_unavailable);
      for (const Replica* replica : live) {
        if (replica->template_hash == hash) continue;
        if (!replica->Ready()) {
          drain(replica, "replaced by the new template");
        } else if (ready_drains > 0 && ready - 1 >= floor) {
          drain(replica, "replaced by the new template");
          --ready;
          --ready_drains;
        }
      }
    }
    int64_t current = 0;
    int64_t stale = 0;
    for (const Replica* replica : live) {
      if (drained.count(replica) > 0) continue;
      ++(replica->template_hash == hash ? current : stale);
    }
    // Beyond the count: old replicas before current ones, each in drain order.
    std::vector<const Replica*> surplus;
    for (bool old : {true, false}) {
      for (const Replica* replica : live) {
        if (drained.count(replica) == 0 && (replica->template_hash != hash) == old) {
          surplus.push_back(replica);
        }
      }
    }
    const int64_t surge = std::max<int64_t>(spec.max_surge, 0);
    for (const Replica* replica : surplus) {
      if (current + stale <= desired + (stale > 0 ? surge : 0)) break;
      drain(replica, fmt::format("scaled down to {}", desired));
      --(replica->template_hash != hash ? stale : current);
    }
    const int64_t allowed = desired + (stale > 0 ? surge : 0);

    // Creates: up to the count with the current template, within the surge allowance.
    const int64_t create =
        std::max<int64_t>(0, std::min(desired - current, allowed - (current + stale)));
    // A replica a crash left with some of its pods not created, none bound yet, gets them.
    for (const Replica* replica : live) {
      if (static_cast<int64_t>(replica->pods.size()) >= replica->group_size ||
          replica->template_hash != hash || pass.Full()) {
        continue;
      }
      std::set<int64_t> ranks;
      for (const auto& pod : replica->pods) ranks.insert(pod.value.spec.owner.rank);
      for (api::Pod& pod : MakeReplicaPods(service, version, replica->index)) {
        if (ranks.count(pod.spec.owner.rank) == 0) pass.batch.Create(api::Object(std::move(pod)));
      }
    }
    // Whole replicas only, within what is left of this pass's creations: the rest next pass.
    const int64_t pods_per_replica = std::max<int64_t>(1, spec.nodes_per_replica);
    int64_t creating = std::min(create, pass.Room() / pods_per_replica);
    if (spec.ordered_start) {
      // A StatefulSet's OrderedReady: the next replica (the lowest free index) only once every
      // live one runs.
      const bool all_run = std::all_of(live.begin(), live.end(), [&](const Replica* replica) {
        return drained.count(replica) > 0 || replica->Running();
      });
      creating = all_run ? std::min<int64_t>(creating, 1) : 0;
    }
    std::vector<int64_t> created;
    for (int64_t i = 0; i < creating; ++i) {
      const int64_t index = TakeLowestFreeIndex(used, &lowest_free);
      // A StatefulSet's successor takes its predecessor's name: it waits for the ordinal.
      if (spec.ordinal_names && index >= allowed) {
        creating = i;
        break;
      }
      for (api::Pod& pod : MakeReplicaPods(service, version, index)) {
        pass.batch.Create(api::Object(std::move(pod)));
      }
      created.push_back(index);
    }
    if (!created.empty()) {
      pass.batch.Event("Normal", "SuccessfulCreate", DescribeCreated(created, version.name));
    }

    version_status.replicas = current + stale + creating;
    version_status.ready_replicas = 0;
    for (const Replica* replica : live) {
      if (drained.count(replica) == 0 && replica->Ready()) ++version_status.ready_replicas;
    }
    version_status.starting_replicas = version_status.replicas - version_status.ready_replicas;
    version_status.draining_replicas =
        draining_by_version[version.name] + static_cast<int64_t>(drained.size());
    version_status.updated_replicas = current + creating;
  }

  // Last: the status says what this pass saw and did.
  if (status != before) {
    pass.batch.Update(stored, api::Service{service.metadata, service.spec, status});
  }
  writes_left_ -= pass.batch.writes();
  return pass.batch.status();
}

Status ServiceController::RemoveOrphans(const std::string& namespace_name,
                                        const std::string& service, std::vector<Replica> replicas) {
  Pass pass{ObjectWriter(store_, events_, {"Service", namespace_name, service, ""}), clock_.Now(),
            options_, traffic_, writes_left_};
  for (const Replica& replica : replicas) {
    if (replica.Live()) {
      pass.Drain(replica, "its service was deleted");
    } else {
      pass.Retire(replica, kStopServiceDeleted);
    }
  }
  writes_left_ -= pass.batch.writes();
  return pass.batch.status();
}

}  // namespace strata::controller
