#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "metrics/metrics.h"

// Per-GPU figures under the DCGM exporter's metric names and labels, so that dashboards and
// alerts written for dcgm-exporter work on strata unchanged, plus who holds each GPU and the
// roll-ups of allocation against use. Plain data and pure functions; thread-safe.

namespace strata::observe {

// A workload holding a GPU, or a share of one.
struct GpuHolder {
  std::string pod;
  std::string namespace_name;
  std::string job;           // the owning Job, when the pod belongs to one
  std::string service;       // the owning Service, when the pod belongs to one
  std::string queue;         // the Queue its queue field resolves to (api::QueueNames)
  std::string team;          // the pod's `team` label
  double share = 1.0;        // of this GPU, in GPUs (a whole GPU is 1, "500m" is 0.5)
  int64_t memory_bytes = 0;  // GPU memory reserved for a fractional share; 0 when not bounded
  bool running = false;      // the pod's processes run (a bound pod may not have started yet)
  // The share of its GPUs the pod's processes were measured to keep busy, in [0, 1]
  // (api::kGpuActivityAnnotation); nullopt: not measured yet.
  std::optional<double> activity;
};

// What a GPU reports, in DCGM's units. NaN means "not read" (the driver does not support it):
// that GPU's series is left out rather than reported as zero.
struct GpuReading {
  static constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();

  double utilization_percent = kUnknown;  // DCGM_FI_DEV_GPU_UTIL
  double fb_used_mib = kUnknown;          // DCGM_FI_DEV_FB_USED
  double fb_free_mib = kUnknown;          // DCGM_FI_DEV_FB_FREE
  double power_watts = kUnknown;          // DCGM_FI_DEV_POWER_USAGE
  double temperature_celsius = kUnknown;  // DCGM_FI_DEV_GPU_TEMP
  double sm_clock_mhz = kUnknown;         // DCGM_FI_DEV_SM_CLOCK
  double last_xid = kUnknown;             // DCGM_FI_DEV_XID_ERRORS: the last Xid seen, 0: none
  double ecc_sbe_volatile = kUnknown;     // DCGM_FI_DEV_ECC_SBE_VOL_TOTAL
  double ecc_dbe_volatile = kUnknown;     // DCGM_FI_DEV_ECC_DBE_VOL_TOTAL
};

// One GPU of one node, as exported.
struct GpuSample {
  std::string hostname;    // the node's name (label Hostname)
  int64_t gpu = 0;         // the index (label gpu; device is "nvidia<gpu>")
  std::string uuid;        // label UUID
  std::string model_name;  // label modelName
  bool simulated = false;  // label simulated="true": the reading is derived, not measured
  GpuReading reading;
  std::vector<GpuHolder> holders;  // empty: free
};

// Derives a plausible reading for a simulated GPU from what holds it: each running holder keeps
// its share busy as measured (its `activity`), or, before a measurement, as its kind typically
// does (training near-saturated, inference less so); memory follows the reserved or allocated
// share, power, temperature and SM clock follow utilisation after the model's published
// figures (`model` as strata names it, "H100-80GB"; unknown models get generic figures). No
// Xid and no ECC errors. Deterministic.
GpuReading SimulatedGpuReading(std::string_view model, int64_t memory_bytes,
                               const std::vector<GpuHolder>& holders);

// One GPU's allocation against its use, each in [0, 1]: the share held (holders' shares summed,
// at most 1) and the utilisation reading / 100 (0 when unknown; `busy_known` says which).
struct GpuUse {
  double allocated = 0;
  double busy = 0;
  bool busy_known = false;
};
GpuUse UseOf(const GpuSample& sample);

// Calls `visit(holder, allocated, busy)` for each holder of `sample` with a share > 0, passing
// its part of UseOf(sample)'s allocation and busy share, split in proportion to the shares.
void SplitUseByHolder(
    const GpuSample& sample,
    const std::function<void(const GpuHolder& holder, double allocated, double busy)>& visit);

// Allocation against use for one scope: the whole cluster, a node, a queue or a team.
struct GpuUsage {
  std::string scope;     // "cluster", "node", "queue", "team"
  std::string name;      // "" for the cluster
  double capacity = 0;   // GPUs (cluster and node only; 0 for queues and teams)
  double allocated = 0;  // GPUs held, summing fractional shares
  double busy = 0;       // GPUs' worth of utilisation: sum of util/100, split by share
};

// Rolls samples up per cluster, node, queue and team, in that order, each scope's rows sorted
// by name. A GPU whose utilisation is unknown counts as allocated but not busy. Holders without
// a queue or team are left out of those scopes.
std::vector<GpuUsage> SummariseGpuUsage(const std::vector<GpuSample>& samples);

// The shares of `row` (a row of SummariseGpuUsage) in [0, 1]: allocated / capacity and busy /
// capacity, where the capacity is the row's own GPUs for the cluster and a node, and the
// cluster's GPUs (`cluster_capacity`) for a queue or a team: "team ml holds 25 % of the
// cluster and keeps 20 % busy". 0 when there is no capacity.
double AllocatedRatio(const GpuUsage& row, double cluster_capacity);
double BusyRatio(const GpuUsage& row, double cluster_capacity);

// Appends, in Prometheus text, the DCGM families (DCGM_FI_DEV_GPU_UTIL, _FB_USED, _FB_FREE,
// _POWER_USAGE, _GPU_TEMP, _SM_CLOCK, _XID_ERRORS, _ECC_SBE_VOL_TOTAL, _ECC_DBE_VOL_TOTAL) with
// one series per GPU, labelled gpu, UUID, device, modelName, Hostname, simulated and the holder
// (namespace, pod, strata_job, service, queue; several holders of one GPU are joined with ','),
// then strata_gpu_capacity_gpus, strata_gpu_allocated_gpus and strata_gpu_busy_gpus per scope. Then
// strata_gpu_allocated_ratio and strata_gpu_busy_ratio {scope, name}: per GPU (scope "gpu",
// name "HOSTNAME/INDEX", from UseOf; a GPU of unknown utilisation has no busy row), then per
// scope (AllocatedRatio, BusyRatio). Only the families `wanted` includes are rendered (and
// only their figures computed).
void RenderGpuMetrics(const std::vector<GpuSample>& samples, std::string& out,
                      const metrics::FamilySelection& wanted = metrics::FamilySelection());

// The names of the families RenderGpuMetrics renders, in its order.
std::vector<std::string> GpuMetricFamilies();

}  // namespace strata::observe
