#pragma once

#include <chrono>
#include <string>

#include "node/node_agent.h"

// What the node agent's tests with real processes share (src/node tests only).
namespace strata::node::testing {

// The options of an agent for the one node "node-a" whose pods live under `data_dir`: a 5 s stop
// grace, the default base environment, root pods allowed (tests may run as root).
inline NodeAgentOptions TestAgentOptions(const std::string& data_dir) {
  NodeAgentOptions options;
  options.node_names = {"node-a"};
  options.data_dir = data_dir;
  options.stop_grace = std::chrono::seconds(5);
  options.base_env = DefaultBaseEnvironment();
  options.allow_root_pods = true;
  return options;
}

}  // namespace strata::node::testing
