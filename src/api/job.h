#pragma once

#include <string>

#include "api/object_meta.h"
#include "api/workload.h"
#include "common/clock.h"

namespace strata::api {

// Where the pods of a gang must (Required) or should (Preferred) land together: the topology
// level is a node label key ("topology.strata.dev/rack") or "nvlink" for one NVLink island.
struct TopologyConstraint {
  std::string level;  // empty: no constraint
  std::string mode = "Required";

  bool operator==(const TopologyConstraint&) const = default;
};

// Where a job writes checkpoints and how often it means to. The scheduler reads the time of the
// last checkpoint to price preempting the job.
struct Checkpoint {
  std::string dir;
  Duration interval{0};

  bool operator==(const Checkpoint&) const = default;
};

struct JobSpec {
  int64_t replicas = 1;       // nodes (pods); placed all together or not at all
  int64_t proc_per_node = 1;  // worker processes per pod (torchrun's nproc_per_node)
  ResourceRequest resources;  // per pod
  GpuSelector gpu_selector;
  std::vector<Toleration> tolerations;
  TopologyConstraint topology;
  int64_t max_restarts = 0;  // whole-group restarts after a failure before the job fails
  Checkpoint checkpoint;
  int64_t priority = 0;
  std::string queue;          // a Queue, or a LocalQueue name of the job's namespace
  Duration runtime_limit{0};  // 0: none
  ProcessTemplate template_;
  std::string clean_pod_policy = "Running";  // None | Running | All, when the job ends

  bool operator==(const JobSpec&) const = default;
};

// A distributed training job: `replicas` pods x `proc_per_node` processes, started with
// torchrun's environment contract. Namespaced.
struct Job {
  ObjectMeta metadata;
  JobSpec spec;

  bool operator==(const Job&) const = default;
};

}  // namespace strata::api
