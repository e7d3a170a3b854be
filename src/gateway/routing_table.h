#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "gateway/config.h"
#include "gateway/endpoint_registry.h"
#include "gateway/per_loop.h"
#include "gateway/request.h"

namespace strata::gateway {

// The request paths' counts for one model version (VersionCounters::counts).
struct VersionCounts {
  std::atomic<int64_t> arrivals{0};   // admitted requests (past parsing, routing and quota)
  std::atomic<int64_t> answered{0};   // arrivals whose outcome is known (see Signals)
  std::atomic<int64_t> late{0};       // of those, first token after the objective, or none
  std::atomic<int64_t> in_flight{0};  // sent to a replica, not finished
  std::atomic<int64_t> held{0};       // waiting for a replica (the activator)
  std::atomic<int64_t> tokens{0};     // prompt + completion tokens of the answered requests
  // Replica busy time (BusyMeter spells, in Duration ticks) ended by this version's requests.
  std::atomic<int64_t> busy_ticks{0};
};

// The gateway's own counts for one model version, read by the autoscaler in-process
// (GatewayServer::Signals). One object per (model, version) name for the gateway's life, so
// the counts never go back when the version leaves the routing table and returns. Lock-free:
// each event loop's request paths update their loop's copy of the counts.
struct VersionCounters {
  std::string model;
  std::string version;
  uint64_t serial = 0;  // unique for the gateway's life
  PerLoop<VersionCounts> counts;
};

// One model version in a routing table.
struct RoutedVersion {
  std::shared_ptr<VersionCounters> counters;
  std::vector<RoutedEndpoint> endpoints;  // empty: scaled to zero, or first replica starting
};

// What the gateway routes with at one moment: the served models, their versions and each
// version's replicas. Immutable once built; replaced whole when the routes change. Shared
// (shared_ptr) by the server, each event loop and the requests that started under it.
struct RoutingTable {
  explicit RoutingTable(std::vector<ModelConfig> models_in)
      : models(std::move(models_in)), router(models) {}
  RoutingTable(const RoutingTable&) = delete;
  RoutingTable& operator=(const RoutingTable&) = delete;

  uint64_t generation = 0;  // increases with each table the server publishes
  const std::vector<ModelConfig> models;
  const ModelRouter router;                                 // over `models`
  std::vector<std::vector<RoutedVersion>> versions;         // [model][version]
  std::vector<std::shared_ptr<EndpointRuntime>> endpoints;  // every replica, once each
};

// Builds successive routing tables, keeping each replica's EndpointRuntime (by id) and each
// version's VersionCounters (by model and version name) from one table to the next.
//
// Owned by the gateway server; not thread-safe (the server serialises Build under its routes
// mutex; the tables it returns are immutable and shared freely).
class RoutingTableBuilder {
 public:
  // The result of Build: the new table and the replicas it adds (their scrapers to start).
  struct Built {
    std::shared_ptr<const RoutingTable> table;
    std::vector<std::shared_ptr<EndpointRuntime>> added;
  };

  // Validates `models` (ValidateModels) and resolves the replicas not in the last table built.
  // On success, marks the replicas of the last table that `models` no longer names as unrouted
  // and returns the next table. Returns kInvalidArgument naming the field (including a replica
  // whose host does not resolve), and then changes nothing.
  Result<Built> Build(std::vector<ModelConfig> models);

  // Requests in flight on the replica `id` ("host:port"): on its runtime in the last table
  // built, plus on the runtimes of earlier tables that left with requests still running.
  int64_t InFlight(const std::string& id) const;

 private:
  uint64_t generation_ = 0;
  uint64_t next_serial_ = 1;
  std::map<std::string, std::shared_ptr<EndpointRuntime>> endpoints_;  // of the last table
  // Replicas that left, while a table or a request still holds them.
  std::map<std::string, std::vector<std::weak_ptr<EndpointRuntime>>> departed_;
  std::map<std::pair<std::string, std::string>, std::shared_ptr<VersionCounters>> versions_;
};

}  // namespace strata::gateway
