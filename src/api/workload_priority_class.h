#pragma once

#include <cstdint>
#include <string>

#include "api/object_meta.h"

namespace strata::api {

struct WorkloadPriorityClassSpec {
  int64_t value = 0;        // the priority its workloads get in their queues
  std::string description;  // what the class is for

  bool operator==(const WorkloadPriorityClassSpec&) const = default;
};

// A named workload priority (Kueue's WorkloadPriorityClass, stored): a workload written with the
// label kueue.x-k8s.io/priority-class naming it gets its value as spec.priority when it is
// written (Kueue's rule: the class wins over the pods' own priority). Later changes to the class,
// or its deletion, leave the priorities already given alone, as Kueue leaves its Workloads'.
// Cluster-scoped. A value type.
struct WorkloadPriorityClass {
  ObjectMeta metadata;
  WorkloadPriorityClassSpec spec;

  bool operator==(const WorkloadPriorityClass&) const = default;
};

}  // namespace strata::api
