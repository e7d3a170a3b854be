// The node agent's GPU work (node_agent.h): the device plugin's part for foreign pods (their
// nvidia.com/gpu allocated at admission, visible to their processes, reported, restored after a
// restart) and the busy share of the simulated GPUs strata's pods hold.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "api/annotations.h"
#include "api/pod_contract.h"
#include "node/foreign_pod.h"
#include "node/gpu_allocator.h"
#include "node/node_agent.h"
#include "node/node_agent_pass.h"
#include "observe/cluster_gpus.h"

namespace strata::node {

void NodeAgent::RestoreGpus(Pass& pass) {
  for (const auto& [raw, pod] : pass.pods) {
    if (!IsForeignPod(pod) || api::PodTerminal(pod) || gpus_.HeldBy(raw.uid) != nullptr) continue;
    // What its running (adopted) processes were started with is what they use.
    Result<PodStatus> status = known_.count(raw.uid) > 0 ? runtime_.GetStatus(raw.uid)
                                                         : Err(NotFoundError("not started here"));
    if (status && !status->gpu_indices.empty()) {
      gpus_.Restore(raw.uid, pod.spec.node_name,
                    std::vector<int64_t>(status->gpu_indices.begin(), status->gpu_indices.end()));
      pass.gpus_to_report.insert(raw.uid);
      continue;
    }
    const std::string* reported = api::PodAnnotation(pod, api::kAllocatedGpusAnnotation);
    const api::Node* node = FindNode(pass, pod.spec.node_name);
    if (reported == nullptr || node == nullptr) continue;
    Result<std::vector<int64_t>> indices = ParseAllocatedGpus(*node, *reported);
    if (indices) {
      gpus_.Restore(raw.uid, pod.spec.node_name, std::move(*indices));
    } else {
      spdlog::warn("node agent: pod {}/{}: {}", pod.metadata.namespace_name, pod.metadata.name,
                   indices.error().ToString());
    }
  }
}

Status NodeAgent::AdmitGpus(Pass& pass, const std::string& uid, const api::Pod& pod,
                            api::Pod& after) {
  if (!IsForeignPod(pod)) return Status::Ok();  // strata's control plane assigned its GPUs
  Result<int64_t> requested = RequestedGpus(pod);
  if (!requested) return requested.error();
  const int64_t count = *requested;
  if (count == 0 && gpus_.HeldBy(uid) == nullptr) return Status::Ok();
  api::Node unknown;  // a node not in the store has no GPUs to give
  unknown.metadata.name = pod.spec.node_name;
  const api::Node* found = FindNode(pass, pod.spec.node_name);
  const api::Node& node = found != nullptr ? *found : unknown;
  // What strata's control plane assigned to its own pods on the node is theirs.
  std::set<int64_t> strata_held;
  for (const auto& [raw, other] : pass.pods) {
    if (IsForeignPod(other) || api::PodTerminal(other) ||
        other.spec.node_name != node.metadata.name)
      continue;
    for (const api::AssignedGpu& gpu : other.spec.assigned_gpus) strata_held.insert(gpu.index);
  }
  Result<std::vector<int64_t>> indices = gpus_.Allocate(uid, node, count, strata_held);
  if (!indices) return indices.error();
  if (!indices->empty()) {
    after.metadata.annotations[api::kAllocatedGpusAnnotation] =
        AllocatedGpusAnnotation(node, *indices);
  }
  return Status::Ok();
}

void NodeAgent::SetGpuVisibility(Pass& pass, const std::string& uid, const api::Pod& pod,
                                 api::Environment& env, PodSpec& spec) {
  // The device plugin's values win over the pod's own: a foreign pod sees the GPUs it was
  // given at admission (AdmitGpus) and no other.
  const std::vector<int64_t>* held = gpus_.HeldBy(uid);
  const std::vector<int64_t> indices = held != nullptr ? *held : std::vector<int64_t>();
  spec.gpu_indices.assign(indices.begin(), indices.end());
  for (auto& [name, value] : GpuVisibilityEnv(FindNode(pass, pod.spec.node_name), indices)) {
    auto own = env.find(name);
    if (own != env.end() && own->second != value) {
      (void)events_.Record(
          {"Pod", pod.metadata.namespace_name, pod.metadata.name, uid}, "Warning",
          "GpuEnvOverridden",
          fmt::format("{}=\"{}\" from the pod's env replaced by \"{}\": the GPUs allocated to it "
                      "for {}, as a device plugin sets them",
                      name, own->second, value, api::kGpuResourceName));
    }
    env[name] = value;
  }
}

void NodeAgent::ReportGpuActivity(Pass& pass, const std::string& uid, const api::Pod& pod,
                                  api::Pod& after) {
  double gpus = 0;
  for (const api::AssignedGpu& gpu : pod.spec.assigned_gpus) {
    gpus += static_cast<double>(gpu.share.milli()) / 1000.0;
  }
  const TimePoint now = clock_.Now();
  if (gpus <= 0 || api::PodAnnotation(pod, api::kEngineAnnotation) != nullptr ||
      !gpu_activity_.Due(uid, now)) {
    return;
  }
  // Real GPUs report their own utilisation; only simulated ones need the pod's word.
  const api::Node* node = FindNode(pass, pod.spec.node_name);
  if (node == nullptr || !observe::HasSimulatedGpus(*node)) return;
  Result<Duration> cpu_time = runtime_.CpuTime(uid);
  if (!cpu_time) return;  // it ended since GetStatus: the next pass reports that
  std::optional<double> share = gpu_activity_.Record(uid, *cpu_time, gpus, now);
  if (!share) return;
  const std::string* recorded = api::PodAnnotation(pod, api::kGpuActivityAnnotation);
  if (GpuActivityWorthRecording(
          recorded != nullptr ? observe::ParseGpuActivity(*recorded) : std::nullopt, *share)) {
    after.metadata.annotations[api::kGpuActivityAnnotation] = observe::FormatGpuActivity(*share);
  }
}

}  // namespace strata::node
