#include "node/pod_state_file.h"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/atomic_file.h"

namespace strata::node {
namespace {

using nlohmann::json;

std::optional<ProcessState> ParseState(const std::string& name) {
  for (ProcessState state : {ProcessState::kRunning, ProcessState::kExited, ProcessState::kLost}) {
    if (ProcessStateName(state) == name) return state;
  }
  return std::nullopt;
}

}  // namespace

Status WritePodStateFile(const std::string& path, const PodStatus& status) {
  json processes = json::array();
  for (const ProcessStatus& process : status.processes) {
    json entry = {{"name", process.name},
                  {"pid", process.pid},
                  {"start_time", process.start_time},
                  {"state", ProcessStateName(process.state)},
                  {"log", process.log_path}};
    if (process.exit_code) entry["exit_code"] = *process.exit_code;
    if (process.signal) entry["signal"] = *process.signal;
    if (process.end_time_ns != 0) entry["end_time_ns"] = process.end_time_ns;
    if (process.fenced) entry["fenced"] = true;
    processes.push_back(std::move(entry));
  }
  json document = {{"uid", status.uid},
                   {"pgid", status.pgid},
                   {"supervisor_pid", status.supervisor_pid},
                   {"supervisor_start_time", status.supervisor_start_time},
                   {"processes", processes}};
  if (!status.gpu_indices.empty()) document["gpu_indices"] = status.gpu_indices;
  std::string text = document.dump(1, ' ', false, json::error_handler_t::replace) + "\n";
  return ReplaceFileAtomically(path, text, 0644);
}

Result<PodStatus> ReadPodStateFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Err(NotFoundError(fmt::format("{}: no such pod state file", path)));
  std::stringstream text;
  text << in.rdbuf();
  json document = json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  auto bad = [&](std::string_view field) {
    return Err(
        InvalidArgumentError(fmt::format("{}: field {} is missing or malformed", path, field)));
  };
  if (!document.is_object()) return bad("(document)");
  PodStatus status;
  if (!document.contains("uid") || !document["uid"].is_string()) return bad("uid");
  status.uid = document["uid"].get<std::string>();
  if (!document.contains("pgid") || !document["pgid"].is_number_integer()) return bad("pgid");
  status.pgid = document["pgid"].get<pid_t>();
  // Absent in the files of runtimes from before pods had supervisors.
  if (document.contains("supervisor_pid")) {
    if (!document["supervisor_pid"].is_number_integer()) return bad("supervisor_pid");
    status.supervisor_pid = document["supervisor_pid"].get<pid_t>();
    if (!document.contains("supervisor_start_time") ||
        !document["supervisor_start_time"].is_number_unsigned()) {
      return bad("supervisor_start_time");
    }
    status.supervisor_start_time = document["supervisor_start_time"].get<uint64_t>();
  }
  // Absent in the files of runtimes from before pods' GPUs were recorded, and for pods without.
  if (document.contains("gpu_indices")) {
    if (!document["gpu_indices"].is_array()) return bad("gpu_indices");
    for (const json& index : document["gpu_indices"]) {
      if (!index.is_number_integer()) return bad("gpu_indices");
      status.gpu_indices.push_back(index.get<int>());
    }
  }
  if (!document.contains("processes") || !document["processes"].is_array()) {
    return bad("processes");
  }
  for (size_t i = 0; i < document["processes"].size(); ++i) {
    const json& entry = document["processes"][i];
    std::string field = fmt::format("processes[{}]", i);
    if (!entry.is_object()) return bad(field);
    ProcessStatus process;
    if (!entry.contains("name") || !entry["name"].is_string()) return bad(field + ".name");
    process.name = entry["name"].get<std::string>();
    if (!entry.contains("pid") || !entry["pid"].is_number_integer()) return bad(field + ".pid");
    process.pid = entry["pid"].get<pid_t>();
    if (!entry.contains("start_time") || !entry["start_time"].is_number_unsigned()) {
      return bad(field + ".start_time");
    }
    process.start_time = entry["start_time"].get<uint64_t>();
    std::optional<ProcessState> state;
    if (entry.contains("state") && entry["state"].is_string()) {
      state = ParseState(entry["state"].get<std::string>());
    }
    if (!state) return bad(field + ".state");
    process.state = *state;
    if (entry.contains("log") && entry["log"].is_string()) {
      process.log_path = entry["log"].get<std::string>();
    }
    if (entry.contains("exit_code")) {
      if (!entry["exit_code"].is_number_integer()) return bad(field + ".exit_code");
      process.exit_code = entry["exit_code"].get<int>();
    }
    if (entry.contains("signal")) {
      if (!entry["signal"].is_number_integer()) return bad(field + ".signal");
      process.signal = entry["signal"].get<int>();
    }
    if (entry.contains("end_time_ns")) {
      if (!entry["end_time_ns"].is_number_integer()) return bad(field + ".end_time_ns");
      process.end_time_ns = entry["end_time_ns"].get<int64_t>();
    }
    if (entry.contains("fenced")) {
      if (!entry["fenced"].is_boolean()) return bad(field + ".fenced");
      process.fenced = entry["fenced"].get<bool>();
    }
    status.processes.push_back(std::move(process));
  }
  return status;
}

}  // namespace strata::node
