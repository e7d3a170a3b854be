#include "scheduler/model_json.h"

#include <fmt/format.h>

#include <chrono>
#include <limits>
#include <string_view>

#include "common/field_decoder.h"
#include "common/quantity.h"
#include "scheduler/mig.h"

namespace strata::scheduler {
namespace {

using nlohmann::json;

// A quantity's milli-units; nullopt when the field is absent.
Result<std::optional<int64_t>> QuantityMilli(const FieldDecoder& j, std::string_view key) {
  ASSIGN_OR_RETURN(std::optional<Quantity> quantity, j.OptionalQuantity(key));
  if (!quantity) return std::optional<int64_t>();
  return std::optional<int64_t>(quantity->milli());
}

// A quantity of bytes; 0 when the field is absent.
Result<int64_t> Bytes(const FieldDecoder& j, std::string_view key) {
  ASSIGN_OR_RETURN(auto milli, QuantityMilli(j, key));
  return milli ? *milli / 1000 : 0;
}

// A duration in seconds, which may have a fraction.
Duration Seconds(double seconds) {
  return std::chrono::duration_cast<Duration>(std::chrono::duration<double>(seconds));
}

Result<TaintEffect> Effect(const FieldDecoder& j, std::string_view key) {
  ASSIGN_OR_RETURN(std::string effect,
                   j.Choice(key, {"NoSchedule", "PreferNoSchedule", "NoExecute"}, "NoSchedule"));
  if (effect == "PreferNoSchedule") return TaintEffect::kPreferNoSchedule;
  if (effect == "NoExecute") return TaintEffect::kNoExecute;
  return TaintEffect::kNoSchedule;
}

Result<std::vector<Taint>> DecodeTaints(const FieldDecoder& node) {
  std::vector<Taint> taints;
  ASSIGN_OR_RETURN(std::vector<FieldDecoder> items,
                   node.ObjectList("taints", {"key", "value", "effect"}));
  for (const FieldDecoder& item : items) {
    Taint taint;
    ASSIGN_OR_RETURN(taint.key, item.String("key"));
    ASSIGN_OR_RETURN(taint.value, item.String("value"));
    ASSIGN_OR_RETURN(taint.effect, Effect(item, "effect"));
    taints.push_back(std::move(taint));
  }
  return taints;
}

Result<Node> DecodeNode(const FieldDecoder& j, int* count) {
  Node node;
  ASSIGN_OR_RETURN(node.name, j.RequiredString("name"));
  ASSIGN_OR_RETURN(int64_t n, j.Integer("count", 0, 0, 100000));
  *count = static_cast<int>(n);
  ASSIGN_OR_RETURN(node.labels, j.StringMap("labels"));
  ASSIGN_OR_RETURN(node.unschedulable, j.Bool("unschedulable", false));
  ASSIGN_OR_RETURN(auto cpu, QuantityMilli(j, "cpu"));
  node.cpu_milli = cpu.value_or(0);
  ASSIGN_OR_RETURN(node.memory_bytes, Bytes(j, "memory"));
  ASSIGN_OR_RETURN(node.taints, DecodeTaints(j));
  ASSIGN_OR_RETURN(FieldDecoder g,
                   j.Object("gpus", {"count", "model", "memory", "islands", "mig"}));
  ASSIGN_OR_RETURN(int64_t gpus, g.Integer("count", 0, 0, 64));
  ASSIGN_OR_RETURN(int64_t islands, g.Integer("islands", 1, 1, 16));
  Gpu gpu;
  ASSIGN_OR_RETURN(gpu.model, g.String("model"));
  ASSIGN_OR_RETURN(int64_t memory, Bytes(g, "memory"));
  gpu.memory_mib = memory >> 20;
  ASSIGN_OR_RETURN(gpu.mig_enabled, g.Bool("mig", false));
  const int64_t per_island = (gpus + islands - 1) / islands;
  for (int64_t i = 0; i < gpus; ++i) {
    gpu.island = static_cast<int>(i / per_island);
    node.gpus.push_back(gpu);
  }
  return node;
}

Result<Flavor> DecodeFlavor(const FieldDecoder& j) {
  Flavor flavor;
  ASSIGN_OR_RETURN(flavor.name, j.String("name"));
  ASSIGN_OR_RETURN(flavor.node_labels, j.StringMap("nodeLabels"));
  ASSIGN_OR_RETURN(int64_t memory, Bytes(j, "gpuMemory"));
  if (memory > 0) flavor.gpu_memory_mib = memory >> 20;
  return flavor;
}

Result<FlavorQuota> DecodeFlavorQuota(const FieldDecoder& fq, const Cluster& cluster) {
  FlavorQuota quota;
  ASSIGN_OR_RETURN(std::string flavor, fq.String("flavor"));
  quota.flavor = -1;
  for (size_t f = 0; f < cluster.flavors.size(); ++f) {
    if (cluster.flavors[f].name == flavor) quota.flavor = static_cast<int>(f);
  }
  if (quota.flavor < 0)
    return Err(fq.Error("flavor", fmt::format("unknown flavor \"{}\"", flavor)));
  ASSIGN_OR_RETURN(
      FieldDecoder resources,
      fq.Object("resources", {"nvidia.com/gpu", "strata.dev/gpu-memory", "cpu", "memory"}));
  for (int r = 0; r < kNumResources; ++r) {
    const std::string_view name = ResourceName(static_cast<Resource>(r));
    if (!resources.Has(name)) continue;
    ASSIGN_OR_RETURN(FieldDecoder rq,
                     resources.Object(name, {"nominal", "borrowingLimit", "lendingLimit"}));
    // GPUs and CPU count in milli-units, GPU memory in MiB, memory in bytes.
    auto scale = [&](int64_t milli) {
      if (r == static_cast<int>(Resource::kGpuMemory)) return (milli / 1000) >> 20;
      if (r == static_cast<int>(Resource::kMemory)) return milli / 1000;
      return milli;
    };
    ResourceQuota q;
    ASSIGN_OR_RETURN(auto nominal, QuantityMilli(rq, "nominal"));
    ASSIGN_OR_RETURN(auto borrowing, QuantityMilli(rq, "borrowingLimit"));
    ASSIGN_OR_RETURN(auto lending, QuantityMilli(rq, "lendingLimit"));
    q.nominal = scale(nominal.value_or(0));
    if (borrowing) q.borrowing_limit = scale(*borrowing);
    if (lending) q.lending_limit = scale(*lending);
    quota.resources[r] = q;
  }
  return quota;
}

Result<Queue> DecodeQueue(const FieldDecoder& j, const Cluster& cluster) {
  Queue queue;
  ASSIGN_OR_RETURN(queue.name, j.RequiredString("name"));
  ASSIGN_OR_RETURN(queue.cohort, j.String("cohort"));
  ASSIGN_OR_RETURN(queue.weight, j.Number("weight", 1.0, 0));
  if (queue.weight <= 0) return Err(j.Error("weight", "must be positive"));
  ASSIGN_OR_RETURN(std::string strategy,
                   j.Choice("strategy", {"BestEffortFIFO", "StrictFIFO"}, "BestEffortFIFO"));
  if (strategy == "StrictFIFO") queue.strategy = QueueingStrategy::kStrictFifo;
  ASSIGN_OR_RETURN(queue.admits_workloads, j.Bool("admitsWorkloads", true));
  ASSIGN_OR_RETURN(FieldDecoder preemption,
                   j.Object("preemption", {"withinQueue", "reclaimWithinCohort"}));
  ASSIGN_OR_RETURN(std::string within,
                   preemption.Choice("withinQueue", {"LowerPriority", "Never"}, "LowerPriority"));
  ASSIGN_OR_RETURN(std::string reclaim,
                   preemption.Choice("reclaimWithinCohort", {"Any", "Never"}, "Any"));
  queue.preempt_lower_priority = within == "LowerPriority";
  queue.reclaim_within_cohort = reclaim == "Any";
  ASSIGN_OR_RETURN(std::vector<FieldDecoder> quotas,
                   j.ObjectList("quota", {"flavor", "resources"}));
  for (const FieldDecoder& fq : quotas) {
    ASSIGN_OR_RETURN(FlavorQuota quota, DecodeFlavorQuota(fq, cluster));
    queue.flavors.push_back(std::move(quota));
  }
  return queue;
}

Result<std::vector<Toleration>> DecodeTolerations(const FieldDecoder& j) {
  std::vector<Toleration> out;
  ASSIGN_OR_RETURN(std::vector<FieldDecoder> items,
                   j.ObjectList("tolerations", {"key", "operator", "value", "effect"}));
  for (const FieldDecoder& item : items) {
    Toleration t;
    ASSIGN_OR_RETURN(t.key, item.String("key"));
    ASSIGN_OR_RETURN(std::string op, item.Choice("operator", {"Equal", "Exists"}, "Equal"));
    t.exists = op == "Exists";
    ASSIGN_OR_RETURN(t.value, item.String("value"));
    if (item.Has("effect")) {
      ASSIGN_OR_RETURN(t.effect, Effect(item, "effect"));
    }
    out.push_back(std::move(t));
  }
  return out;
}

Result<std::vector<NodeAffinityTerm>> DecodeAffinity(const FieldDecoder& j) {
  static const std::pair<std::string_view, SelectorOperator> kOps[] = {
      {"In", SelectorOperator::kIn},         {"NotIn", SelectorOperator::kNotIn},
      {"Exists", SelectorOperator::kExists}, {"DoesNotExist", SelectorOperator::kDoesNotExist},
      {"Gt", SelectorOperator::kGt},         {"Lt", SelectorOperator::kLt}};
  std::vector<NodeAffinityTerm> terms;
  ASSIGN_OR_RETURN(std::vector<FieldDecoder> items, j.ObjectList("affinity", {"matchExpressions"}));
  for (const FieldDecoder& item : items) {
    NodeAffinityTerm term;
    ASSIGN_OR_RETURN(std::vector<FieldDecoder> expressions,
                     item.ObjectList("matchExpressions", {"key", "operator", "values"}));
    for (const FieldDecoder& expression : expressions) {
      LabelRequirement r;
      ASSIGN_OR_RETURN(r.key, expression.String("key"));
      ASSIGN_OR_RETURN(
          std::string op,
          expression.Choice("operator", {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"},
                            "In"));
      for (const auto& [name, value] : kOps) {
        if (name == op) r.op = value;
      }
      ASSIGN_OR_RETURN(r.values, expression.StringList("values"));
      term.requirements.push_back(std::move(r));
    }
    terms.push_back(std::move(term));
  }
  return terms;
}

// `gpu: 8` (whole GPUs) or `gpu: {count | milli and memory | mig}`.
Result<GpuRequest> DecodeGpu(const FieldDecoder& pod_set) {
  GpuRequest gpu;
  if (pod_set.Raw("gpu").is_number_integer()) {
    ASSIGN_OR_RETURN(int64_t count, pod_set.Integer("gpu", 0, 0, 64));
    gpu.count = static_cast<int>(count);
    return gpu;
  }
  ASSIGN_OR_RETURN(FieldDecoder j, pod_set.Object("gpu", {"count", "milli", "memory", "mig"}));
  ASSIGN_OR_RETURN(int64_t count, j.Integer("count", 0, 0, 64));
  ASSIGN_OR_RETURN(gpu.milli, j.Integer("milli", 0, 0, 999));
  ASSIGN_OR_RETURN(int64_t memory, Bytes(j, "memory"));
  ASSIGN_OR_RETURN(gpu.mig_profile, j.String("mig"));
  gpu.count = static_cast<int>(count);
  gpu.memory_mib = memory >> 20;
  const int kinds = (count > 0) + (gpu.milli > 0 || memory > 0) + !gpu.mig_profile.empty();
  if (kinds > 1) {
    return Err(j.ObjectError(
        "ask for whole GPUs (count), a share (milli/memory) or a MIG profile (mig), not several"));
  }
  if (!gpu.mig_profile.empty() && !IsKnownMigProfile(gpu.mig_profile)) {
    return Err(j.Error("mig", fmt::format("unknown MIG profile \"{}\"", gpu.mig_profile)));
  }
  return gpu;
}

Result<PodSet> DecodePodSet(const FieldDecoder& j) {
  PodSet ps;
  ASSIGN_OR_RETURN(ps.name, j.String("name", "main"));
  ASSIGN_OR_RETURN(int64_t count, j.Integer("count", 1, 1, 100000));
  ps.count = static_cast<int>(count);
  ASSIGN_OR_RETURN(auto cpu, QuantityMilli(j, "cpu"));
  ps.cpu_milli = cpu.value_or(0);
  ASSIGN_OR_RETURN(ps.memory_bytes, Bytes(j, "memory"));
  ASSIGN_OR_RETURN(ps.gpu, DecodeGpu(j));
  ASSIGN_OR_RETURN(ps.gpu.models, j.StringList("gpuModels"));
  ASSIGN_OR_RETURN(int64_t min_memory, Bytes(j, "gpuMinMemory"));
  ps.gpu.min_memory_mib = min_memory >> 20;
  ASSIGN_OR_RETURN(ps.node_selector, j.StringMap("nodeSelector"));
  ASSIGN_OR_RETURN(ps.affinity, DecodeAffinity(j));
  ASSIGN_OR_RETURN(ps.tolerations, DecodeTolerations(j));
  return ps;
}

}  // namespace

Result<Cluster> DecodeCluster(const json& value, const std::string& path) {
  ASSIGN_OR_RETURN(FieldDecoder j,
                   FieldDecoder::Of(value, path, {"topology", "nodes", "flavors", "queues"}));
  Cluster cluster;
  ASSIGN_OR_RETURN(cluster.topology_levels, j.StringList("topology"));
  ASSIGN_OR_RETURN(std::vector<FieldDecoder> nodes,
                   j.ObjectList("nodes", {"name", "count", "labels", "taints", "unschedulable",
                                          "cpu", "memory", "gpus"}));
  for (const FieldDecoder& item : nodes) {
    int count = 0;
    ASSIGN_OR_RETURN(Node node, DecodeNode(item, &count));
    if (count == 0) {
      cluster.nodes.push_back(std::move(node));
      continue;
    }
    for (int n = 0; n < count; ++n) {
      Node copy = node;
      copy.name = fmt::format("{}-{}", node.name, n);
      cluster.nodes.push_back(std::move(copy));
    }
  }
  ASSIGN_OR_RETURN(std::vector<FieldDecoder> flavors,
                   j.ObjectList("flavors", {"name", "nodeLabels", "gpuMemory"}));
  for (const FieldDecoder& item : flavors) {
    ASSIGN_OR_RETURN(Flavor flavor, DecodeFlavor(item));
    cluster.flavors.push_back(std::move(flavor));
  }
  ASSIGN_OR_RETURN(std::vector<FieldDecoder> queues,
                   j.ObjectList("queues", {"name", "cohort", "weight", "strategy", "preemption",
                                           "quota", "admitsWorkloads"}));
  for (const FieldDecoder& item : queues) {
    ASSIGN_OR_RETURN(Queue queue, DecodeQueue(item, cluster));
    cluster.queues.push_back(std::move(queue));
  }
  return cluster;
}

Result<Workload> DecodeWorkload(const json& value, const std::string& path, TimePoint epoch) {
  ASSIGN_OR_RETURN(FieldDecoder j, FieldDecoder::Of(value, path,
                                                    {"name", "queue", "priority", "submitted",
                                                     "runtimeLimit", "topology", "podSets"}));
  Workload w;
  ASSIGN_OR_RETURN(w.name, j.RequiredString("name"));
  ASSIGN_OR_RETURN(w.queue, j.String("queue"));
  ASSIGN_OR_RETURN(int64_t priority, j.Integer("priority", 0, std::numeric_limits<int>::min(),
                                               std::numeric_limits<int>::max()));
  w.priority = static_cast<int>(priority);
  ASSIGN_OR_RETURN(double submitted, j.Number("submitted", 0));
  w.submitted = epoch + Seconds(submitted);
  if (j.Has("runtimeLimit")) {
    ASSIGN_OR_RETURN(double limit, j.Number("runtimeLimit", 0));
    if (limit <= 0) return Err(j.Error("runtimeLimit", "must be positive"));
    w.runtime_limit = Seconds(limit);
  }
  if (j.Has("topology")) {
    ASSIGN_OR_RETURN(FieldDecoder topology, j.Object("topology", {"level", "mode"}));
    ASSIGN_OR_RETURN(w.topology.level, topology.String("level"));
    ASSIGN_OR_RETURN(std::string mode,
                     topology.Choice("mode", {"Required", "Preferred"}, "Required"));
    w.topology.mode = mode == "Preferred" ? TopologyMode::kPreferred : TopologyMode::kRequired;
  }
  ASSIGN_OR_RETURN(std::vector<FieldDecoder> pod_sets,
                   j.ObjectList("podSets",
                                {"name", "count", "cpu", "memory", "gpu", "gpuModels",
                                 "gpuMinMemory", "nodeSelector", "affinity", "tolerations"},
                                Presence::kRequired));
  for (const FieldDecoder& item : pod_sets) {
    ASSIGN_OR_RETURN(PodSet ps, DecodePodSet(item));
    w.pod_sets.push_back(std::move(ps));
  }
  return w;
}

}  // namespace strata::scheduler
