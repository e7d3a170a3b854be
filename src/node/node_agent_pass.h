#pragma once

// What one pass of the node agent found, shared by the files that implement NodeAgent
// (node_agent.cc, node_agent_gpus.cc); not for other callers.

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "api/node.h"
#include "api/pod.h"
#include "common/status.h"
#include "node/node_agent.h"
#include "node/node_runtime.h"
#include "store/object.h"

namespace strata::node {

// What one pass found: the pods bound here, and why the agent stops some of them.
struct NodeAgent::Pass {
  std::vector<std::pair<store::Object, api::Pod>> pods;
  // Pods whose processes the pass stops because one of them failed: uid -> that process.
  std::map<std::string, ProcessStatus> failed_first;
  std::set<std::string> checkpoint_dirs_in_use;
  // Nodes read from the store this pass, by name; nullopt: not in the store.
  std::map<std::string, std::optional<api::Node>> nodes;
  // Ports of this node's replica engines, recorded or picked this pass.
  std::set<int> engine_ports;
  // Replica leaders whose engine answered its readiness probe this pass, by uid.
  std::set<std::string> ready;
  // Pods with a readiness probe of their own: whether it passes now, by uid.
  std::map<std::string, bool> probed_ready;
  // Pods a liveness or startup probe kills this pass: uid -> the probe's failure.
  std::map<std::string, std::string> probe_killed;
  std::map<std::string, Duration> kill_grace;
  // Foreign pods whose GPUs a restarted agent learnt from their processes' state file alone:
  // reported on the pod again this pass (by uid).
  std::set<std::string> gpus_to_report;
  Status first_error;

  void Note(Status status) {
    if (first_error.ok() && !status.ok()) first_error = std::move(status);
  }
};

}  // namespace strata::node
