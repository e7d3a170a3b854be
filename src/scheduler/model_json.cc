#include "scheduler/model_json.h"

#include <fmt/format.h>

#include <chrono>
#include <initializer_list>
#include <string_view>

#include "common/quantity.h"
#include "scheduler/mig.h"

namespace strata::scheduler {
namespace {

using nlohmann::json;

Status FieldError(const std::string& path, std::string_view what) {
  return InvalidArgumentError(fmt::format("{}: {}", path, what));
}

Status RequireObject(const json& j, const std::string& path,
                     std::initializer_list<std::string_view> allowed) {
  if (!j.is_object()) return FieldError(path, "expected a mapping");
  for (const auto& [key, value] : j.items()) {
    bool known = false;
    for (std::string_view a : allowed) known = known || a == key;
    if (!known) return FieldError(path + "." + key, "unknown field");
  }
  return Status::Ok();
}

Result<std::string> String(const json& j, const std::string& key, const std::string& path,
                           std::string fallback = "") {
  if (!j.contains(key)) return fallback;
  if (!j[key].is_string()) return Err(FieldError(path + "." + key, "expected a string"));
  return j[key].get<std::string>();
}

Result<int64_t> Integer(const json& j, const std::string& key, const std::string& path,
                        int64_t fallback = 0) {
  if (!j.contains(key)) return fallback;
  if (!j[key].is_number_integer()) return Err(FieldError(path + "." + key, "expected an integer"));
  return j[key].get<int64_t>();
}

Result<double> Number(const json& j, const std::string& key, const std::string& path,
                      double fallback) {
  if (!j.contains(key)) return fallback;
  if (!j[key].is_number()) return Err(FieldError(path + "." + key, "expected a number"));
  return j[key].get<double>();
}

Result<bool> Boolean(const json& j, const std::string& key, const std::string& path) {
  if (!j.contains(key)) return false;
  if (!j[key].is_boolean()) return Err(FieldError(path + "." + key, "expected true or false"));
  return j[key].get<bool>();
}

// A quantity's milli-units; nullopt when the key is absent.
Result<std::optional<int64_t>> QuantityMilli(const json& j, const std::string& key,
                                             const std::string& path) {
  if (!j.contains(key)) return std::optional<int64_t>();
  const json& v = j[key];
  std::string text;
  if (v.is_number_integer()) {
    text = std::to_string(v.get<int64_t>());
  } else if (v.is_number()) {
    text = fmt::format("{}", v.get<double>());
  } else if (v.is_string()) {
    text = v.get<std::string>();
  } else {
    return Err(FieldError(path + "." + key, "expected a quantity"));
  }
  auto q = Quantity::Parse(text);
  if (!q) return Err(q.error().WithPrefix(path + "." + key));
  if (q->milli() < 0) return Err(FieldError(path + "." + key, "must not be negative"));
  return std::optional<int64_t>(q->milli());
}

Result<int64_t> Bytes(const json& j, const std::string& key, const std::string& path) {
  ASSIGN_OR_RETURN(auto milli, QuantityMilli(j, key, path));
  return milli ? *milli / 1000 : 0;
}

Result<Labels> DecodeLabels(const json& j, const std::string& key, const std::string& path) {
  Labels labels;
  if (!j.contains(key)) return labels;
  if (!j[key].is_object()) return Err(FieldError(path + "." + key, "expected a mapping"));
  for (const auto& [k, v] : j[key].items()) {
    if (!v.is_string()) return Err(FieldError(path + "." + key + "." + k, "expected a string"));
    labels.emplace(k, v.get<std::string>());
  }
  return labels;
}

Result<std::vector<std::string>> Strings(const json& j, const std::string& key,
                                         const std::string& path) {
  std::vector<std::string> out;
  if (!j.contains(key)) return out;
  if (!j[key].is_array()) return Err(FieldError(path + "." + key, "expected a list"));
  for (size_t i = 0; i < j[key].size(); ++i) {
    if (!j[key][i].is_string()) {
      return Err(FieldError(fmt::format("{}.{}[{}]", path, key, i), "expected a string"));
    }
    out.push_back(j[key][i].get<std::string>());
  }
  return out;
}

Result<TaintEffect> Effect(const std::string& text, const std::string& path) {
  if (text == "NoSchedule") return TaintEffect::kNoSchedule;
  if (text == "PreferNoSchedule") return TaintEffect::kPreferNoSchedule;
  if (text == "NoExecute") return TaintEffect::kNoExecute;
  return Err(FieldError(path, fmt::format("unknown effect \"{}\"", text)));
}

Result<Node> DecodeNode(const json& j, const std::string& path, int* count) {
  RETURN_IF_ERROR(RequireObject(
      j, path, {"name", "count", "labels", "taints", "unschedulable", "cpu", "memory", "gpus"}));
  Node node;
  ASSIGN_OR_RETURN(node.name, String(j, "name", path));
  if (node.name.empty()) return Err(FieldError(path + ".name", "required"));
  ASSIGN_OR_RETURN(int64_t n, Integer(j, "count", path, 0));
  if (n < 0) return Err(FieldError(path + ".count", "must not be negative"));
  *count = static_cast<int>(n);
  ASSIGN_OR_RETURN(node.labels, DecodeLabels(j, "labels", path));
  ASSIGN_OR_RETURN(node.unschedulable, Boolean(j, "unschedulable", path));
  ASSIGN_OR_RETURN(auto cpu, QuantityMilli(j, "cpu", path));
  node.cpu_milli = cpu.value_or(0);
  ASSIGN_OR_RETURN(node.memory_bytes, Bytes(j, "memory", path));
  if (j.contains("taints")) {
    if (!j["taints"].is_array()) return Err(FieldError(path + ".taints", "expected a list"));
    for (size_t i = 0; i < j["taints"].size(); ++i) {
      const std::string p = fmt::format("{}.taints[{}]", path, i);
      const json& t = j["taints"][i];
      RETURN_IF_ERROR(RequireObject(t, p, {"key", "value", "effect"}));
      Taint taint;
      ASSIGN_OR_RETURN(taint.key, String(t, "key", p));
      ASSIGN_OR_RETURN(taint.value, String(t, "value", p));
      ASSIGN_OR_RETURN(std::string effect, String(t, "effect", p, "NoSchedule"));
      ASSIGN_OR_RETURN(taint.effect, Effect(effect, p + ".effect"));
      node.taints.push_back(std::move(taint));
    }
  }
  if (j.contains("gpus")) {
    const std::string p = path + ".gpus";
    const json& g = j["gpus"];
    RETURN_IF_ERROR(RequireObject(g, p, {"count", "model", "memory", "islands", "mig"}));
    ASSIGN_OR_RETURN(int64_t gpus, Integer(g, "count", p, 0));
    ASSIGN_OR_RETURN(int64_t islands, Integer(g, "islands", p, 1));
    if (gpus < 0 || gpus > 64) return Err(FieldError(p + ".count", "must be 0..64"));
    if (islands < 1 || islands > 16) return Err(FieldError(p + ".islands", "must be 1..16"));
    Gpu gpu;
    ASSIGN_OR_RETURN(gpu.model, String(g, "model", p));
    ASSIGN_OR_RETURN(int64_t memory, Bytes(g, "memory", p));
    gpu.memory_mib = memory >> 20;
    ASSIGN_OR_RETURN(gpu.mig_enabled, Boolean(g, "mig", p));
    const int64_t per_island = (gpus + islands - 1) / islands;
    for (int64_t i = 0; i < gpus; ++i) {
      gpu.island = static_cast<int>(i / per_island);
      node.gpus.push_back(gpu);
    }
  }
  return node;
}

Result<Queue> DecodeQueue(const json& j, const std::string& path, const Cluster& cluster) {
  RETURN_IF_ERROR(
      RequireObject(j, path, {"name", "cohort", "weight", "strategy", "preemption", "quota"}));
  Queue queue;
  ASSIGN_OR_RETURN(queue.name, String(j, "name", path));
  if (queue.name.empty()) return Err(FieldError(path + ".name", "required"));
  ASSIGN_OR_RETURN(queue.cohort, String(j, "cohort", path));
  ASSIGN_OR_RETURN(queue.weight, Number(j, "weight", path, 1.0));
  if (queue.weight <= 0) return Err(FieldError(path + ".weight", "must be positive"));
  ASSIGN_OR_RETURN(std::string strategy, String(j, "strategy", path, "BestEffortFIFO"));
  if (strategy == "StrictFIFO") {
    queue.strategy = QueueingStrategy::kStrictFifo;
  } else if (strategy != "BestEffortFIFO") {
    return Err(FieldError(path + ".strategy", "expected BestEffortFIFO or StrictFIFO"));
  }
  if (j.contains("preemption")) {
    const std::string p = path + ".preemption";
    RETURN_IF_ERROR(RequireObject(j["preemption"], p, {"withinQueue", "reclaimWithinCohort"}));
    ASSIGN_OR_RETURN(std::string within,
                     String(j["preemption"], "withinQueue", p, "LowerPriority"));
    ASSIGN_OR_RETURN(std::string reclaim, String(j["preemption"], "reclaimWithinCohort", p, "Any"));
    if (within != "LowerPriority" && within != "Never") {
      return Err(FieldError(p + ".withinQueue", "expected LowerPriority or Never"));
    }
    if (reclaim != "Any" && reclaim != "Never") {
      return Err(FieldError(p + ".reclaimWithinCohort", "expected Any or Never"));
    }
    queue.preempt_lower_priority = within == "LowerPriority";
    queue.reclaim_within_cohort = reclaim == "Any";
  }
  if (!j.contains("quota")) return queue;
  if (!j["quota"].is_array()) return Err(FieldError(path + ".quota", "expected a list"));
  for (size_t i = 0; i < j["quota"].size(); ++i) {
    const std::string p = fmt::format("{}.quota[{}]", path, i);
    const json& fq = j["quota"][i];
    RETURN_IF_ERROR(RequireObject(fq, p, {"flavor", "resources"}));
    FlavorQuota quota;
    ASSIGN_OR_RETURN(std::string flavor, String(fq, "flavor", p));
    quota.flavor = -1;
    for (size_t f = 0; f < cluster.flavors.size(); ++f) {
      if (cluster.flavors[f].name == flavor) quota.flavor = static_cast<int>(f);
    }
    if (quota.flavor < 0) {
      return Err(FieldError(p + ".flavor", fmt::format("unknown flavor \"{}\"", flavor)));
    }
    if (fq.contains("resources")) {
      RETURN_IF_ERROR(RequireObject(fq["resources"], p + ".resources",
                                    {"nvidia.com/gpu", "strata.dev/gpu-memory", "cpu", "memory"}));
      for (int r = 0; r < kNumResources; ++r) {
        const std::string name(ResourceName(static_cast<Resource>(r)));
        if (!fq["resources"].contains(name)) continue;
        const std::string rp = p + ".resources." + name;
        const json& rq = fq["resources"][name];
        RETURN_IF_ERROR(RequireObject(rq, rp, {"nominal", "borrowingLimit", "lendingLimit"}));
        // GPUs and CPU count in milli-units, GPU memory in MiB, memory in bytes.
        auto scale = [&](int64_t milli) {
          if (r == static_cast<int>(Resource::kGpuMemory)) return (milli / 1000) >> 20;
          if (r == static_cast<int>(Resource::kMemory)) return milli / 1000;
          return milli;
        };
        ResourceQuota q;
        ASSIGN_OR_RETURN(auto nominal, QuantityMilli(rq, "nominal", rp));
        ASSIGN_OR_RETURN(auto borrowing, QuantityMilli(rq, "borrowingLimit", rp));
        ASSIGN_OR_RETURN(auto lending, QuantityMilli(rq, "lendingLimit", rp));
        q.nominal = scale(nominal.value_or(0));
        if (borrowing) q.borrowing_limit = scale(*borrowing);
        if (lending) q.lending_limit = scale(*lending);
        quota.resources[r] = q;
      }
    }
    queue.flavors.push_back(quota);
  }
  return queue;
}

Result<std::vector<Toleration>> DecodeTolerations(const json& j, const std::string& path) {
  std::vector<Toleration> out;
  if (!j.is_array()) return Err(FieldError(path, "expected a list"));
  for (size_t i = 0; i < j.size(); ++i) {
    const std::string p = fmt::format("{}[{}]", path, i);
    RETURN_IF_ERROR(RequireObject(j[i], p, {"key", "operator", "value", "effect"}));
    Toleration t;
    ASSIGN_OR_RETURN(t.key, String(j[i], "key", p));
    ASSIGN_OR_RETURN(std::string op, String(j[i], "operator", p, "Equal"));
    if (op != "Equal" && op != "Exists") {
      return Err(FieldError(p + ".operator", "expected Equal or Exists"));
    }
    t.exists = op == "Exists";
    ASSIGN_OR_RETURN(t.value, String(j[i], "value", p));
    if (j[i].contains("effect")) {
      ASSIGN_OR_RETURN(std::string effect, String(j[i], "effect", p));
      ASSIGN_OR_RETURN(t.effect, Effect(effect, p + ".effect"));
    }
    out.push_back(std::move(t));
  }
  return out;
}

Result<std::vector<NodeAffinityTerm>> DecodeAffinity(const json& j, const std::string& path) {
  std::vector<NodeAffinityTerm> terms;
  if (!j.is_array()) return Err(FieldError(path, "expected a list"));
  for (size_t i = 0; i < j.size(); ++i) {
    const std::string p = fmt::format("{}[{}]", path, i);
    RETURN_IF_ERROR(RequireObject(j[i], p, {"matchExpressions"}));
    NodeAffinityTerm term;
    const json& exprs = j[i].value("matchExpressions", json::array());
    if (!exprs.is_array()) return Err(FieldError(p + ".matchExpressions", "expected a list"));
    for (size_t e = 0; e < exprs.size(); ++e) {
      const std::string ep = fmt::format("{}.matchExpressions[{}]", p, e);
      RETURN_IF_ERROR(RequireObject(exprs[e], ep, {"key", "operator", "values"}));
      LabelRequirement r;
      ASSIGN_OR_RETURN(r.key, String(exprs[e], "key", ep));
      ASSIGN_OR_RETURN(std::string op, String(exprs[e], "operator", ep));
      static const std::pair<std::string_view, SelectorOperator> kOps[] = {
          {"In", SelectorOperator::kIn},         {"NotIn", SelectorOperator::kNotIn},
          {"Exists", SelectorOperator::kExists}, {"DoesNotExist", SelectorOperator::kDoesNotExist},
          {"Gt", SelectorOperator::kGt},         {"Lt", SelectorOperator::kLt}};
      bool known = false;
      for (const auto& [name, value] : kOps) {
        if (name == op) {
          r.op = value;
          known = true;
        }
      }
      if (!known) return Err(FieldError(ep + ".operator", fmt::format("unknown \"{}\"", op)));
      ASSIGN_OR_RETURN(r.values, Strings(exprs[e], "values", ep));
      term.requirements.push_back(std::move(r));
    }
    terms.push_back(std::move(term));
  }
  return terms;
}

Result<GpuRequest> DecodeGpu(const json& j, const std::string& path) {
  GpuRequest gpu;
  if (j.is_number_integer()) {
    if (j.get<int64_t>() < 0 || j.get<int64_t>() > 64)
      return Err(FieldError(path, "must be 0..64"));
    gpu.count = static_cast<int>(j.get<int64_t>());
    return gpu;
  }
  RETURN_IF_ERROR(RequireObject(j, path, {"count", "milli", "memory", "mig"}));
  ASSIGN_OR_RETURN(int64_t count, Integer(j, "count", path, 0));
  ASSIGN_OR_RETURN(int64_t milli, Integer(j, "milli", path, 0));
  ASSIGN_OR_RETURN(int64_t memory, Bytes(j, "memory", path));
  ASSIGN_OR_RETURN(gpu.mig_profile, String(j, "mig", path));
  if (count < 0 || count > 64) return Err(FieldError(path + ".count", "must be 0..64"));
  if (milli < 0 || milli > 999) return Err(FieldError(path + ".milli", "must be 0..999"));
  gpu.count = static_cast<int>(count);
  gpu.milli = milli;
  gpu.memory_mib = memory >> 20;
  const int kinds = (count > 0) + (milli > 0 || memory > 0) + !gpu.mig_profile.empty();
  if (kinds > 1) {
    return Err(FieldError(path,
                          "ask for whole GPUs (count), a share (milli/memory) or a MIG "
                          "profile (mig), not several"));
  }
  if (!gpu.mig_profile.empty() && !IsKnownMigProfile(gpu.mig_profile)) {
    return Err(
        FieldError(path + ".mig", fmt::format("unknown MIG profile \"{}\"", gpu.mig_profile)));
  }
  return gpu;
}

Result<PodSet> DecodePodSet(const json& j, const std::string& path) {
  RETURN_IF_ERROR(RequireObject(j, path,
                                {"name", "count", "cpu", "memory", "gpu", "gpuModels",
                                 "gpuMinMemory", "nodeSelector", "affinity", "tolerations"}));
  PodSet ps;
  ASSIGN_OR_RETURN(ps.name, String(j, "name", path, "main"));
  ASSIGN_OR_RETURN(int64_t count, Integer(j, "count", path, 1));
  if (count < 1 || count > 100000) return Err(FieldError(path + ".count", "must be 1..100000"));
  ps.count = static_cast<int>(count);
  ASSIGN_OR_RETURN(auto cpu, QuantityMilli(j, "cpu", path));
  ps.cpu_milli = cpu.value_or(0);
  ASSIGN_OR_RETURN(ps.memory_bytes, Bytes(j, "memory", path));
  if (j.contains("gpu")) {
    ASSIGN_OR_RETURN(ps.gpu, DecodeGpu(j["gpu"], path + ".gpu"));
  }
  ASSIGN_OR_RETURN(ps.gpu.models, Strings(j, "gpuModels", path));
  ASSIGN_OR_RETURN(int64_t min_memory, Bytes(j, "gpuMinMemory", path));
  ps.gpu.min_memory_mib = min_memory >> 20;
  ASSIGN_OR_RETURN(ps.node_selector, DecodeLabels(j, "nodeSelector", path));
  if (j.contains("affinity")) {
    ASSIGN_OR_RETURN(ps.affinity, DecodeAffinity(j["affinity"], path + ".affinity"));
  }
  if (j.contains("tolerations")) {
    ASSIGN_OR_RETURN(ps.tolerations, DecodeTolerations(j["tolerations"], path + ".tolerations"));
  }
  return ps;
}

}  // namespace

Result<Cluster> DecodeCluster(const json& j, const std::string& path) {
  RETURN_IF_ERROR(RequireObject(j, path, {"topology", "nodes", "flavors", "queues"}));
  Cluster cluster;
  ASSIGN_OR_RETURN(cluster.topology_levels, Strings(j, "topology", path));
  const json& nodes = j.value("nodes", json::array());
  if (!nodes.is_array()) return Err(FieldError(path + ".nodes", "expected a list"));
  for (size_t i = 0; i < nodes.size(); ++i) {
    int count = 0;
    ASSIGN_OR_RETURN(Node node, DecodeNode(nodes[i], fmt::format("{}.nodes[{}]", path, i), &count));
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
  const json& flavors = j.value("flavors", json::array());
  if (!flavors.is_array()) return Err(FieldError(path + ".flavors", "expected a list"));
  for (size_t i = 0; i < flavors.size(); ++i) {
    const std::string p = fmt::format("{}.flavors[{}]", path, i);
    RETURN_IF_ERROR(RequireObject(flavors[i], p, {"name", "nodeLabels", "gpuMemory"}));
    Flavor flavor;
    ASSIGN_OR_RETURN(flavor.name, String(flavors[i], "name", p));
    ASSIGN_OR_RETURN(flavor.node_labels, DecodeLabels(flavors[i], "nodeLabels", p));
    ASSIGN_OR_RETURN(int64_t memory, Bytes(flavors[i], "gpuMemory", p));
    if (memory > 0) flavor.gpu_memory_mib = memory >> 20;
    cluster.flavors.push_back(std::move(flavor));
  }
  const json& queues = j.value("queues", json::array());
  if (!queues.is_array()) return Err(FieldError(path + ".queues", "expected a list"));
  for (size_t i = 0; i < queues.size(); ++i) {
    ASSIGN_OR_RETURN(Queue queue,
                     DecodeQueue(queues[i], fmt::format("{}.queues[{}]", path, i), cluster));
    cluster.queues.push_back(std::move(queue));
  }
  return cluster;
}

Result<Workload> DecodeWorkload(const json& j, const std::string& path, TimePoint epoch) {
  RETURN_IF_ERROR(RequireObject(
      j, path, {"name", "queue", "priority", "submitted", "runtimeLimit", "topology", "podSets"}));
  Workload w;
  ASSIGN_OR_RETURN(w.name, String(j, "name", path));
  if (w.name.empty()) return Err(FieldError(path + ".name", "required"));
  ASSIGN_OR_RETURN(w.queue, String(j, "queue", path));
  ASSIGN_OR_RETURN(int64_t priority, Integer(j, "priority", path, 0));
  w.priority = static_cast<int>(priority);
  ASSIGN_OR_RETURN(double submitted, Number(j, "submitted", path, 0));
  w.submitted =
      epoch + std::chrono::duration_cast<Duration>(std::chrono::duration<double>(submitted));
  if (j.contains("runtimeLimit")) {
    ASSIGN_OR_RETURN(double limit, Number(j, "runtimeLimit", path, 0));
    if (limit <= 0) return Err(FieldError(path + ".runtimeLimit", "must be positive"));
    w.runtime_limit = std::chrono::duration_cast<Duration>(std::chrono::duration<double>(limit));
  }
  if (j.contains("topology")) {
    const std::string p = path + ".topology";
    RETURN_IF_ERROR(RequireObject(j["topology"], p, {"level", "mode"}));
    ASSIGN_OR_RETURN(w.topology.level, String(j["topology"], "level", p));
    ASSIGN_OR_RETURN(std::string mode, String(j["topology"], "mode", p, "Required"));
    if (mode == "Required") {
      w.topology.mode = TopologyMode::kRequired;
    } else if (mode == "Preferred") {
      w.topology.mode = TopologyMode::kPreferred;
    } else {
      return Err(FieldError(p + ".mode", "expected Required or Preferred"));
    }
  }
  if (!j.contains("podSets") || !j["podSets"].is_array() || j["podSets"].empty()) {
    return Err(FieldError(path + ".podSets", "expected a non-empty list"));
  }
  for (size_t i = 0; i < j["podSets"].size(); ++i) {
    ASSIGN_OR_RETURN(PodSet ps,
                     DecodePodSet(j["podSets"][i], fmt::format("{}.podSets[{}]", path, i)));
    w.pod_sets.push_back(std::move(ps));
  }
  return w;
}

}  // namespace strata::scheduler
