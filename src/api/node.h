#pragma once

#include <string>
#include <vector>

#include "api/object_meta.h"
#include "common/quantity.h"

namespace strata::api {

// A taint on a node: pods that do not tolerate it are not placed there (NoSchedule,
// PreferNoSchedule) or are evicted (NoExecute).
struct Taint {
  std::string key;
  std::string value;
  std::string effect = "NoSchedule";

  bool operator==(const Taint&) const = default;
};

// One MIG instance carved from a GPU.
struct MigInstance {
  std::string profile;  // "1g.10gb"
  std::string uuid;

  bool operator==(const MigInstance&) const = default;
};

// One GPU of a node as its inventory reports it.
struct NodeGpu {
  int64_t index = 0;
  std::string uuid;
  std::string model;  // "H100-80GB"
  Quantity memory;
  int64_t nvlink_island = 0;  // GPUs with the same island talk over NVLink
  bool mig_enabled = false;
  std::vector<MigInstance> mig_instances;

  bool operator==(const NodeGpu&) const = default;
};

// A node condition, Kubernetes' shape ("Ready" True/False/Unknown).
struct NodeCondition {
  std::string type;
  std::string status = "Unknown";
  std::string reason;
  std::string message;
  std::string last_heartbeat_time;   // RFC 3339
  std::string last_transition_time;  // RFC 3339

  bool operator==(const NodeCondition&) const = default;
};

struct NodeSpec {
  std::vector<Taint> taints;
  bool unschedulable = false;

  bool operator==(const NodeSpec&) const = default;
};

struct NodeStatus {
  Quantity cpu;     // capacity
  Quantity memory;  // capacity
  std::vector<NodeGpu> gpus;
  std::vector<NodeCondition> conditions;

  bool operator==(const NodeStatus&) const = default;
};

// A machine that runs pods. Cluster-scoped. Topology levels come from its labels.
struct Node {
  ObjectMeta metadata;
  NodeSpec spec;
  NodeStatus status;

  bool operator==(const Node&) const = default;
};

}  // namespace strata::api
