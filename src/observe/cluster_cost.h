#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "api/annotations.h"
#include "common/clock.h"
#include "common/status.h"
#include "metrics/metrics.h"
#include "observe/cluster_gpus.h"
#include "observe/cluster_objects_cache.h"
#include "observe/cost.h"
#include "observe/cost_ledger.h"

// Cost and GPU figures of the whole cluster, computed from the store's objects at each request
// or scrape: the bridge between the store's Pods and Nodes and the pure accounting in cost.h and
// gpu_metrics.h.

namespace strata::observe {

// The allocation of every pod bound to a node that the cluster holds: requests from its spec,
// GPUs (fractional shares summed) and their model from its node, its bound-at (else its
// started-at, else its creation) as start and, once finished, its finished-at as end; a
// finished pod without a finished-at is left out (the ledger closes its record when it sees it
// go). What CostLedger::Sync reads; the prices are left for the ledger (or PriceAll) to set.
std::vector<CostPod> CostPodsOf(const ClusterObjects& cluster);

// Sets each pod's prices to what `prices` charges it.
void PriceAll(const PriceTable& prices, std::vector<CostPod>& pods);

// Where the cluster's figures come from, besides the store.
struct ClusterMetricsOptions {
  const Clock* clock = &RealClock::Instance();
  // Where the cost families come from: the durable ledger (what the cost API reads too); null:
  // the pods the cluster holds now, at `prices` (a reader without a data dir: a tool, a bench).
  std::shared_ptr<const CostLedger> ledger;
  PriceTable prices = DefaultPriceTable();
  // The window of strata_cost_accrued.
  Duration cost_window = std::chrono::hours(24);
  // Measured readings of real GPUs (NVML); empty: none, only simulated GPUs report.
  std::function<GpuReadingsByUuid()> measured_gpus;
  // Tokens served per service over the cost window (the gateway's counts); empty: unknown.
  std::function<std::map<std::string, double>()> service_tokens;
};

// Adds a collector to `registry` that renders, at each scrape, RenderGpuMetrics over every GPU
// of the store's nodes and RenderCostMetrics by team, project, queue, job and service (the
// families of GpuMetricFamilies and CostMetricFamilies; a scrape that asks for GPU families only
// computes no cost, and the other way round). The Nodes, Pods and Queues come from `cluster`
// (shared with the cluster's other readers, so each write is decoded once): the first read lists
// the store, the later ones decode only what was written since. A store read that fails renders
// nothing (the scrape still answers).
void AddClusterMetrics(metrics::Registry& registry, std::shared_ptr<ClusterObjectsCache> cluster,
                       ClusterMetricsOptions options);

}  // namespace strata::observe
