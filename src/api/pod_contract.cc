#include "api/pod_contract.h"

#include <fmt/format.h>

#include <charconv>
#include <nlohmann/json.hpp>

#include "api/field_reader.h"
#include "api/field_schema.h"
#include "api/native_schema.h"
#include "api/status_codec.h"
#include "common/field_errors.h"

namespace strata::api {
namespace {

Result<int64_t> IntegerAnnotation(const api::Pod& pod, const char* key) {
  const std::string* text = PodAnnotation(pod, key);
  if (text == nullptr) {
    return Err(InvalidArgumentError(fmt::format("metadata.annotations[{}]: missing", key)));
  }
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (ec != std::errc() || end != text->data() + text->size()) {
    return Err(InvalidArgumentError(
        fmt::format("metadata.annotations[{}]: expected an integer, got \"{}\"", key, *text)));
  }
  return value;
}

}  // namespace

const std::string* PodAnnotation(const api::Pod& pod, const char* key) {
  auto it = pod.metadata.annotations.find(key);
  return it == pod.metadata.annotations.end() ? nullptr : &it->second;
}

Result<TrainingPod> TrainingPodFromPod(const api::Pod& pod) {
  if (pod.spec.owner.kind != "Job") {
    return Err(
        InvalidArgumentError("spec.owner.kind: expected Job, got \"" + pod.spec.owner.kind + "\""));
  }
  TrainingPod out;
  out.job_name = pod.spec.owner.name;
  const std::string* run_id = PodAnnotation(pod, kRunIdAnnotation);
  const std::string* master_addr = PodAnnotation(pod, kMasterAddrAnnotation);
  if (run_id == nullptr || master_addr == nullptr) {
    return Err(InvalidArgumentError(
        fmt::format("metadata.annotations[{}]: missing",
                    run_id == nullptr ? kRunIdAnnotation : kMasterAddrAnnotation)));
  }
  out.run_id = *run_id;
  out.master_addr = *master_addr;
  ASSIGN_OR_RETURN(int64_t port, IntegerAnnotation(pod, kMasterPortAnnotation));
  ASSIGN_OR_RETURN(int64_t nodes, IntegerAnnotation(pod, kNumNodesAnnotation));
  ASSIGN_OR_RETURN(int64_t procs, IntegerAnnotation(pod, kProcPerNodeAnnotation));
  ASSIGN_OR_RETURN(int64_t restarts, IntegerAnnotation(pod, kRestartCountAnnotation));
  ASSIGN_OR_RETURN(int64_t max_restarts, IntegerAnnotation(pod, kMaxRestartsAnnotation));
  out.master_port = static_cast<int>(port);
  out.num_nodes = static_cast<int>(nodes);
  out.node_rank = static_cast<int>(pod.spec.owner.replica);
  out.proc_per_node = static_cast<int>(procs);
  out.restart_count = static_cast<int>(restarts);
  out.max_restarts = static_cast<int>(max_restarts);
  for (const api::AssignedGpu& gpu : pod.spec.assigned_gpus) {
    out.gpu_indices.push_back(static_cast<int>(gpu.index));
  }
  if (const std::string* dir = PodAnnotation(pod, kCheckpointDirAnnotation)) {
    out.checkpoint_dir = *dir;
  }
  if (const std::string* role = PodAnnotation(pod, kRoleAnnotation)) {
    TrainingPod::Role r;
    r.name = *role;
    ASSIGN_OR_RETURN(int64_t index, IntegerAnnotation(pod, kRoleIndexAnnotation));
    ASSIGN_OR_RETURN(int64_t pods, IntegerAnnotation(pod, kRolePodsAnnotation));
    ASSIGN_OR_RETURN(int64_t world, IntegerAnnotation(pod, kWorldSizeAnnotation));
    ASSIGN_OR_RETURN(int64_t first, IntegerAnnotation(pod, kFirstWorkerRankAnnotation));
    r.index = static_cast<int>(index);
    r.pods = static_cast<int>(pods);
    r.world_size = static_cast<int>(world);
    r.first_worker_rank = static_cast<int>(first);
    out.role = std::move(r);
  }
  for (const api::EnvVar& env : pod.spec.template_.env) {
    out.user_env.emplace_back(env.name, env.value);
  }
  return out;
}

Result<ReplicaPod> ReplicaPodFromPod(const api::Pod& pod) {
  if (pod.spec.owner.kind != "Service") {
    return Err(InvalidArgumentError("spec.owner.kind: expected Service, got \"" +
                                    pod.spec.owner.kind + "\""));
  }
  ReplicaPod out;
  out.service_name = pod.spec.owner.name;
  out.replica = pod.spec.owner.replica;
  out.rank = pod.spec.owner.rank;
  if (PodAnnotation(pod, kGroupSizeAnnotation) != nullptr) {
    ASSIGN_OR_RETURN(out.group_size, IntegerAnnotation(pod, kGroupSizeAnnotation));
  }
  if (out.group_size < 1) {
    return Err(InvalidArgumentError(fmt::format("metadata.annotations[{}]: {} is below 1",
                                                kGroupSizeAnnotation, out.group_size)));
  }
  if (out.rank < 0 || out.rank >= out.group_size) {
    return Err(InvalidArgumentError(
        fmt::format("spec.owner.rank: {} is not in [0, {})", out.rank, out.group_size)));
  }
  const std::string* leader = PodAnnotation(pod, kLeaderAddressAnnotation);
  if (leader != nullptr) out.leader_address = *leader;
  if (out.group_size > 1 && out.leader_address.empty()) {
    return Err(InvalidArgumentError(fmt::format(
        "metadata.annotations[{}]: missing (a replica of {} pods needs its leader's address)",
        kLeaderAddressAnnotation, out.group_size)));
  }
  if (const std::string* model = PodAnnotation(pod, kServedModelAnnotation)) {
    out.served_model = *model;
  }
  out.leader_worker_set = pod.metadata.labels.count(kLwsNameLabel) > 0;
  return out;
}

Result<int> RecordedEnginePort(const api::Pod& pod) {
  if (PodAnnotation(pod, kEnginePortAnnotation) == nullptr) return 0;
  ASSIGN_OR_RETURN(int64_t port, IntegerAnnotation(pod, kEnginePortAnnotation));
  if (port < 1 || port > 65535) {
    return Err(InvalidArgumentError(fmt::format("metadata.annotations[{}]: {} is not in [1, 65535]",
                                                kEnginePortAnnotation, port)));
  }
  return static_cast<int>(port);
}

std::string NodeAddress(const api::Node& node) {
  auto address = node.metadata.annotations.find(kNodeAddressAnnotation);
  if (address != node.metadata.annotations.end() && !address->second.empty()) {
    return address->second;
  }
  auto hostname = node.metadata.labels.find("kubernetes.io/hostname");
  if (hostname != node.metadata.labels.end() && !hostname->second.empty()) {
    return hostname->second;
  }
  return node.metadata.name;
}

bool PodTerminal(const api::Pod& pod) {
  return pod.status.phase == PodPhase::kSucceeded || pod.status.phase == PodPhase::kFailed;
}

std::string StopRequested(const api::Pod& pod) {
  const std::string* reason = PodAnnotation(pod, kStopRequestedAnnotation);
  return reason == nullptr ? std::string() : *reason;
}

namespace {

const TypeSchema* GangMemberSchema() {
  static const TypeSchema s{"GangMember",
                            "Where one member of a gang is bound.",
                            {{"pod", FieldType::kString, "The pod.", nullptr, {}, true},
                             {"nodeName", FieldType::kString, "Its node.", nullptr, {}, true},
                             {"gpus", FieldType::kObjectList, "Its GPUs.", AssignedGpuSchema}}};
  return &s;
}

}  // namespace

std::string EncodeGangPlacement(const std::vector<GangMember>& members) {
  nlohmann::json out = nlohmann::json::array();
  for (const GangMember& member : members) {
    nlohmann::json item = {{"pod", member.pod}, {"nodeName", member.node_name}};
    if (!member.gpus.empty()) item["gpus"] = EncodeAssignedGpus(member.gpus);
    out.push_back(std::move(item));
  }
  return out.dump();
}

Result<std::vector<GangMember>> DecodeGangPlacement(std::string_view text) {
  const std::string path = std::string("annotation ") + kGangPlacementAnnotation;
  nlohmann::json parsed = nlohmann::json::parse(text, nullptr, false);
  if (!parsed.is_array()) return Err(InvalidArgumentError(path + ": not a JSON list"));
  FieldErrors errors;
  for (size_t i = 0; i < parsed.size(); ++i) {
    ValidateAgainstSchema(parsed[i], *GangMemberSchema(), path + "[" + std::to_string(i) + "]",
                          errors);
  }
  if (!errors.empty()) return Err(InvalidArgumentError(errors.list().front().ToString()));
  std::vector<GangMember> out;
  nlohmann::json root = {{"members", parsed}};
  FieldView view(root, path);
  for (const FieldView& member : view.ObjectList("members")) {
    out.push_back(
        {member.String("pod"), member.String("nodeName"), DecodeAssignedGpus(member, "gpus")});
  }
  return out;
}

}  // namespace strata::api
