#include "sim/openb_replay.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <tuple>

#include "common/check.h"

namespace strata::sim {
namespace {

using scheduler::GpuPodRequest;

GpuPodRequest RequestOf(const OpenbPod& pod) {
  GpuPodRequest request;
  request.cpu_milli = pod.cpu_milli;
  request.memory_mib = pod.memory_mib;
  request.gpu_count = pod.gpu_count;
  request.gpu_milli_each = pod.gpu_milli_each;
  request.allowed_gpu_models = pod.allowed_gpu_models;
  return request;
}

// The pods as the placer sees them, with equal CPU/GPU/model shapes sharing an id.
std::vector<OpenbSimPod> SimPods(const std::vector<OpenbPod>& pods, int* shape_count) {
  using ShapeKey = std::tuple<int64_t, int32_t, int32_t, std::vector<std::string>>;
  std::map<ShapeKey, int> ids;
  std::vector<OpenbSimPod> sim_pods;
  sim_pods.reserve(pods.size());
  for (const OpenbPod& pod : pods) {
    const ShapeKey key(pod.cpu_milli, pod.gpu_count, pod.gpu_milli_each, pod.allowed_gpu_models);
    const auto [it, inserted] = ids.emplace(key, static_cast<int>(ids.size()));
    sim_pods.push_back({RequestOf(pod), it->second});
  }
  *shape_count = static_cast<int>(ids.size());
  return sim_pods;
}

std::vector<OpenbSimNode> SimNodes(const std::vector<OpenbNode>& nodes) {
  std::vector<OpenbSimNode> sim_nodes(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    scheduler::GpuNodeFree& free = sim_nodes[i].node.free;
    free.gpu_model = nodes[i].gpu_model;
    free.cpu_milli = nodes[i].cpu_milli;
    free.memory_mib = nodes[i].memory_mib;
    free.gpu_milli.assign(nodes[i].gpu_count, scheduler::kMilliGpuPerGpu);
  }
  return sim_nodes;
}

void Shuffle(std::vector<size_t>& items, OpenbRng& rng) {
  for (size_t i = items.size(); i > 1; --i) {
    std::swap(items[i - 1], items[scheduler::DrawBelow(rng, i)]);
  }
}

// Python's round() of numerator / denominator to an integer: halves go to the even neighbour.
int64_t RoundHalfEven(int64_t numerator, int64_t denominator) {
  const int64_t quotient = numerator / denominator;
  const int64_t twice_remainder = 2 * (numerator % denominator);
  if (twice_remainder > denominator) return quotient + 1;
  if (twice_remainder == denominator) return quotient + (quotient % 2);
  return quotient;
}

void Place(OpenbSimNode& sim_node, const GpuPodRequest& pod, const std::vector<int>& gpu_indices) {
  scheduler::PlacementNode& node = sim_node.node;
  node.free.cpu_milli -= pod.cpu_milli;
  node.free.memory_mib -= pod.memory_mib;
  for (int index : gpu_indices) {
    node.free.gpu_milli[index] -= pod.gpu_milli_each;
    STRATA_CHECK(node.free.gpu_milli[index] >= 0);
  }
  STRATA_CHECK(node.free.cpu_milli >= 0 && node.free.memory_mib >= 0);
  if (pod.gpu_count > 0) node.gpu_pod_tags.insert(scheduler::GpuPodTag(pod));
  ++sim_node.version;
}

}  // namespace

OpenbAllocationCurve::OpenbAllocationCurve(int64_t capacity_milli)
    : milli_per_pct_(capacity_milli / 100) {
  STRATA_CHECK(capacity_milli > 0 && capacity_milli % 100 == 0);
}

void OpenbAllocationCurve::Record(int64_t arrived_milli, int64_t used_milli) {
  const size_t column = static_cast<size_t>(RoundHalfEven(arrived_milli, milli_per_pct_));
  if (column >= sum_.size()) {
    sum_.resize(column + 1, 0);
    count_.resize(column + 1, 0);
  }
  const double used_pct = static_cast<double>(used_milli) / static_cast<double>(milli_per_pct_);
  sum_[column] += std::nearbyint(used_pct * 100) / 100;
  ++count_[column];
}

std::optional<double> OpenbAllocationCurve::AllocPctAt(int load_pct) const {
  const auto mean_over = [&](int from, int to) -> std::optional<double> {
    double sum = 0;
    int64_t count = 0;
    for (int column = std::max(from, 0); column <= to; ++column) {
      if (static_cast<size_t>(column) >= count_.size()) break;
      sum += sum_[column];
      count += count_[column];
    }
    if (count == 0) return std::nullopt;
    return sum / static_cast<double>(count);
  };
  if (auto exact = mean_over(load_pct, load_pct)) return exact;
  return mean_over(load_pct - 1, load_pct + 1);
}

std::vector<size_t> OpenbArrivals(const std::vector<OpenbPod>& pods, int64_t target_milli,
                                  OpenbRng& rng) {
  std::vector<size_t> order(pods.size());
  std::iota(order.begin(), order.end(), 0);
  // Sorting by name first makes the run independent of the CSV's row order.
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return pods[a].name < pods[b].name; });
  Shuffle(order, rng);
  int64_t arrived = 0;
  for (const OpenbPod& pod : pods) arrived += int64_t{pod.gpu_count} * pod.gpu_milli_each;
  while (arrived < target_milli && !pods.empty()) {
    const size_t drawn = scheduler::DrawBelow(rng, pods.size());
    if (arrived + pods[drawn].gpu_milli_each > target_milli) break;
    order.push_back(drawn);
    arrived += int64_t{pods[drawn].gpu_count} * pods[drawn].gpu_milli_each;
  }
  return order;
}

Result<OpenbSeedRun> ReplayOpenbSeed(const std::vector<OpenbNode>& nodes,
                                     const std::vector<OpenbPod>& pods, std::string_view policy,
                                     uint64_t seed) {
  int64_t capacity_milli = 0;
  for (const OpenbNode& node : nodes) capacity_milli += int64_t{node.gpu_count} * 1000;
  if (capacity_milli == 0) {
    return Err(InvalidArgumentError("openb replay: the node list has no GPU"));
  }
  if (pods.empty()) return Err(InvalidArgumentError("openb replay: the pod list is empty"));

  OpenbRng rng(seed);
  const std::vector<size_t> arrivals =
      OpenbArrivals(pods, capacity_milli * kOpenbTargetLoadPct / 100, rng);
  std::vector<uint32_t> node_rank(nodes.size());
  {
    std::vector<size_t> permutation(nodes.size());
    std::iota(permutation.begin(), permutation.end(), 0);
    Shuffle(permutation, rng);
    for (size_t rank = 0; rank < permutation.size(); ++rank) {
      node_rank[permutation[rank]] = static_cast<uint32_t>(rank);
    }
  }
  int shape_count = 0;
  const std::vector<OpenbSimPod> sim_pods = SimPods(pods, &shape_count);
  std::vector<GpuPodRequest> observed;
  observed.reserve(sim_pods.size());
  for (const OpenbSimPod& pod : sim_pods) observed.push_back(pod.request);
  // FGD and strata score against the mix of the trace's own pods (FGD's target workload).
  const scheduler::WorkloadMix mix = scheduler::EstimateWorkloadMix(observed);
  ASSIGN_OR_RETURN(std::unique_ptr<scheduler::PlacementPolicy> placement,
                   scheduler::MakePlacementPolicy(policy, &mix, &rng));
  std::vector<OpenbSimNode> sim_nodes = SimNodes(nodes);
  std::vector<scheduler::GpuNodeFree> empty_nodes;
  empty_nodes.reserve(sim_nodes.size());
  for (const OpenbSimNode& node : sim_nodes) empty_nodes.push_back(node.node.free);
  OpenbPlacer placer(std::move(placement), std::move(node_rank), shape_count,
                     scheduler::PoolReserve(observed, empty_nodes));

  OpenbSeedRun run{.seed = seed, .failed_early = {}, .curve = OpenbAllocationCurve(capacity_milli)};
  int64_t arrived_milli = 0;
  int64_t used_milli = 0;
  for (size_t index : arrivals) {
    const OpenbSimPod& pod = sim_pods[index];
    arrived_milli += pod.request.TotalGpuMilli();
    ++run.pods_arrived;
    if (const std::optional<OpenbChoice> choice = placer.Choose(sim_nodes, pod)) {
      Place(sim_nodes[choice->node], pod.request, choice->gpu_indices);
      used_milli += pod.request.TotalGpuMilli();
      ++run.pods_placed;
    } else if (arrived_milli * 100 < capacity_milli * kOpenbEarlyLoadPct) {
      run.failed_early.push_back(run.pods_arrived - 1);
    }
    run.curve.Record(arrived_milli, used_milli);
  }
  return run;
}

Result<OpenbSummary> ReplayOpenb(const std::vector<OpenbNode>& nodes,
                                 const std::vector<OpenbPod>& pods, std::string_view policy,
                                 const std::vector<uint64_t>& seeds,
                                 const std::vector<int>& loads_pct) {
  if (seeds.empty()) return Err(InvalidArgumentError("openb replay: no seed given"));
  std::vector<OpenbSeedRun> runs;
  for (uint64_t seed : seeds) {
    ASSIGN_OR_RETURN(OpenbSeedRun run, ReplayOpenbSeed(nodes, pods, policy, seed));
    runs.push_back(std::move(run));
  }
  OpenbSummary summary;
  summary.policy = std::string(policy);
  summary.seeds = seeds;
  for (const OpenbSeedRun& run : runs) summary.failed_early.push_back(run.failed_early);
  for (int load : loads_pct) {
    double sum = 0;
    int count = 0;
    for (const OpenbSeedRun& run : runs) {
      if (const std::optional<double> alloc = run.curve.AllocPctAt(load)) {
        sum += *alloc;
        ++count;
      }
    }
    summary.alloc_pct.emplace_back(load,
                                   count == 0 ? std::nullopt : std::optional<double>(sum / count));
  }
  return summary;
}

}  // namespace strata::sim
