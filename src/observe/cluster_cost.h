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

// Cost and GPU figures of the whole cluster, computed from the store's objects at each request
// or scrape: the bridge between the store's Pods and Nodes and the pure accounting in cost.h and
// gpu_metrics.h.

namespace strata::observe {

struct CostPods {
  std::vector<CostPod> pods;
  int unknown_end = 0;  // finished pods without api::kFinishedAtAnnotation, left out
};

// The allocation of every pod that was ever bound to a node: requests from its spec, GPUs
// (fractional shares summed) and their model from its node, times from the annotations above.
CostPods CostPodsOf(const ClusterObjects& cluster);

// Where the cluster's figures come from, besides the store.
struct ClusterMetricsOptions {
  const Clock* clock = &RealClock::Instance();
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
