#include "api/ray_start.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string_view>

namespace strata::api {
namespace {

// `ray start` options that take no value: "true" gives the bare flag, "false" leaves it out.
constexpr std::array<std::string_view, 4> kFlagOnlyParams = {
    "disable-usage-stats", "no-monitor", "no-redirect-output", "ray-debugger-external"};
// How long a RayJob's pods wait for the head to open its port.
constexpr int kHeadWaitSeconds = 600;

bool FlagOnly(const std::string& key) {
  return std::find(kFlagOnlyParams.begin(), kFlagOnlyParams.end(), key) != kFlagOnlyParams.end();
}

// The container's command and args joined by spaces, as KubeRay joins them (so the shell reads
// them); empty when the container gives neither.
std::string JoinedUserCommand(const ProcessTemplate& process) {
  std::string joined;
  for (const std::vector<std::string>* part : {&process.command, &process.args}) {
    for (const std::string& word : *part) joined += (joined.empty() ? "" : " ") + word;
  }
  return joined;
}

// The container's command and args as separate words, run as they are.
std::string ExactUserCommand(const ProcessTemplate& process) {
  std::string words;
  for (const std::vector<std::string>* part : {&process.command, &process.args}) {
    for (const std::string& word : *part) words += (words.empty() ? "" : " ") + BashWord(word);
  }
  return words;
}

// The lines of one group's branch of the script, each indented.
std::string GroupBranch(const RayGroup& group, bool head, const std::string& port,
                        const RayEntrypoint& entrypoint, bool overwrite_command) {
  std::string out;
  auto line = [&out](const std::string& text) { out += "  " + text + "\n"; };
  line("export RAY_ADDRESS=\"$MASTER_ADDR:" + port + "\"");
  for (const EnvVar& env : group.process.env) {
    line("export " + env.name + "=" + BashWord(env.value));
  }
  if (!group.process.working_dir.empty()) {
    line("cd " + BashWord(group.process.working_dir) + " || exit 1");
  }
  const std::string start = RayStartCommand(group, head, port);
  std::string run;  // what the pod runs: Ray, or the container's own command
  if (overwrite_command) {
    line("export KUBERAY_GEN_RAY_START_CMD=" + BashWord(start));
    run = ExactUserCommand(group.process);
  } else {
    const std::string user = JoinedUserCommand(group.process);
    run = (user.empty() ? "" : user + " && ") + "exec " + start;
  }
  // A RayJob's workers run as a RayCluster's do: the job ends with its head (the job's
  // success role), which stops them.
  if (!head || entrypoint.command.empty()) {
    line(overwrite_command ? "exec " + run : run);
    return out;
  }
  // Only this pod's own Ray is stopped at the end: `ray stop` would stop every Ray of the node.
  line("(" + run + ") &");
  line("ray_pid=$!");
  line("ray_wait_head || exit 1");
  line("bash -c " + BashWord(entrypoint.command));
  line("status=$?");
  line("kill \"$ray_pid\" 2>/dev/null");
  line("exit \"$status\"");
  return out;
}

}  // namespace

std::string BashWord(const std::string& word) {
  const bool safe = !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string_view("_-./:=,+@%").find(c) != std::string_view::npos;
  });
  if (safe) return word;
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string RayHeadPort(const RayGroup& head) {
  auto port = head.start_params.find("port");
  return port != head.start_params.end() ? port->second : "$MASTER_PORT";
}

std::string RayStartCommand(const RayGroup& group, bool head, const std::string& head_port) {
  std::map<std::string, std::string> params = group.start_params;
  // KubeRay's defaults: the container's request, as Ray counts it (whole CPUs rounded up, bytes).
  if (!group.resources.cpu.IsZero()) {
    params.try_emplace("num-cpus", std::to_string(group.resources.cpu.Units()));
  }
  if (!group.resources.gpu.IsZero()) {
    params.try_emplace("num-gpus", std::to_string(group.resources.gpu.Units()));
  }
  if (!group.resources.memory.IsZero()) {
    params.try_emplace("memory", std::to_string(group.resources.memory.Units()));
  }
  std::string command = "ray start";
  if (head) {
    command += " --head";
    if (!group.start_params.contains("port")) command += " --port=" + head_port;
  } else {
    command += " --address=$MASTER_ADDR:" + head_port;
  }
  for (const auto& [key, value] : params) {
    if (FlagOnly(key)) {
      if (value == "true") command += " --" + key;
    } else {
      command += " " + BashWord("--" + key + "=" + value);
    }
  }
  return command + " --block";
}

std::string RayPodScript(const std::vector<RayGroup>& groups, const RayEntrypoint& entrypoint,
                         bool overwrite_command) {
  const std::string port = groups.empty() ? "$MASTER_PORT" : RayHeadPort(groups.front());
  std::string script;
  if (!entrypoint.command.empty()) {
    // The head's Ray (or own command) runs in the background; the entrypoint waits for its port,
    // and gives up when it ends first.
    script += fmt::format(
        "ray_wait_head() {{\n"
        "  for _ in $(seq {seconds}); do\n"
        "    (exec 3<>\"/dev/tcp/$MASTER_ADDR/{port}\") 2>/dev/null && return 0\n"
        "    kill -0 \"$ray_pid\" 2>/dev/null || break\n"
        "    sleep 1\n"
        "  done\n"
        "  echo \"strata: the Ray head did not open $MASTER_ADDR:{port}\" >&2\n"
        "  return 1\n"
        "}}\n",
        fmt::arg("seconds", kHeadWaitSeconds), fmt::arg("port", port));
  }
  int64_t next_rank = 0;
  for (size_t i = 0; i < groups.size(); ++i) {
    next_rank += groups[i].pods;
    script += i == 0 ? "if" : "elif";
    script += " [ \"$GROUP_RANK\" -lt " + std::to_string(next_rank) + " ]; then\n";
    script += GroupBranch(groups[i], i == 0, port, entrypoint, overwrite_command);
  }
  script += "else\n  echo \"strata: no Ray group has rank $GROUP_RANK\" >&2\n  exit 1\nfi\n";
  return script;
}

}  // namespace strata::api
