#pragma once

#include <optional>
#include <string>
#include <vector>

#include "api/annotations.h"
#include "api/pod.h"
#include "api/service.h"
#include "cluster/stored_object.h"
#include "common/clock.h"

// How the service controller makes, groups and reads the pods of a Service's replicas, on top
// of the pod contract with the node agent (node/pod_contract.h). Pure functions and plain
// values; thread-safe.
namespace strata::controller {

// One replica of a service: the pods sharing one owner.replica index (one pod, or
// nodesPerReplica pods when the replica spans nodes, rank 0 the leader).
struct Replica {
  int64_t index = 0;
  std::string version;
  std::string template_hash;
  std::vector<cluster::Stored<api::Pod>> pods;  // by rank
  int64_t group_size = 1;                       // pods the replica should have

  // A pod carries kDrainingAnnotation: the gateway sends it nothing new.
  bool Draining() const;
  // When the drain began (the earliest mark), if draining.
  std::optional<TimePoint> DrainStarted() const;
  // A controller asked a pod to stop.
  bool Stopping() const;
  // A pod failed on its own (not asked to stop), or a pod of the group is missing while others
  // run: the replica cannot serve and is replaced.
  bool Broken() const;
  // Every pod is terminal: nothing holds resources, the pods can go.
  bool Terminal() const;
  // Every pod runs, the leader's readiness probe passed, and nothing drains or stops it.
  bool Ready() const;
  // Every pod of the group exists and runs, and the replica is live (readiness aside).
  bool Running() const;
  // In service or on its way: not draining, stopping, broken or terminal.
  bool Live() const;
  // The leader's "host:port" (empty until its engine started).
  std::string Endpoint() const;
  // When the leader became ready, if it did.
  std::optional<TimePoint> ReadyAt() const;
  // When the replica's first pod was created.
  TimePoint Created() const;
};

// The replicas of one service from its pods (any order), sorted by index.
std::vector<Replica> GroupReplicas(std::vector<cluster::Stored<api::Pod>> pods);

// A digest of what a replica's pods run: the version's engine (or the service's), resources,
// GPU selector, tolerations, tensor parallelism, nodes per replica, queue and priority. A
// replica whose hash differs from the service's is replaced by a rolling update.
std::string ServiceTemplateHash(const api::Service& service, const api::ServiceVersion& version);

// "<service>-<version>-<index>" ("<service>-<index>" with ordinalNames), with "-<rank>" added
// when a replica spans nodes.
std::string ReplicaPodName(const api::Service& service, const api::ServiceVersion& version,
                           int64_t index, int64_t rank);

// The unbound pods of replica `index` serving `version` (nodesPerReplica of them, one per
// rank): owner {Service, name, index, rank}, the service's queue, priority, resources, GPU
// selector and tolerations, the version's engine (rank 0: the service's leader template when it
// has one), restart policy Never (a broken replica is replaced whole), the replica annotations
// of the pod contract, and LeaderWorkerSet's group and worker labels when the service carries
// its name label.
std::vector<api::Pod> MakeReplicaPods(const api::Service& service,
                                      const api::ServiceVersion& version, int64_t index);

}  // namespace strata::controller
