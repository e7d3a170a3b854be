#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "kube/resource.h"

// batch/v1 Jobs as the owners of the pods strata places: a Job that names a Kueue LocalQueue
// (kueue.x-k8s.io/queue-name on the Job, as Kueue's batch/Job integration reads it) is admitted
// and placed as one workload of its parallel pods, and the Jobs a JobSet makes (jobset.sigs.k8s.io
// labels) are placed as one gang per replicated job.

namespace strata::kubesched {

inline const kube::GroupVersionResource kJobs{"batch", "v1", "jobs"};

// JobSet's names on the Jobs it makes and on their pods (labels, and annotations on pods).
inline constexpr const char* kJobSetNameKey = "jobset.sigs.k8s.io/jobset-name";
inline constexpr const char* kReplicatedJobNameKey = "jobset.sigs.k8s.io/replicatedjob-name";
inline constexpr const char* kReplicatedJobReplicasKey =
    "jobset.sigs.k8s.io/replicatedjob-replicas";

// What the scheduler reads of a batch/v1 Job.
struct JobSpec {
  // Pods that run at once: spec.parallelism (default 1), at most the completions that remain
  // (spec.completions less status.succeeded) when completions are set.
  int64_t pods = 1;
  std::string queue_name;      // its kueue.x-k8s.io/queue-name label
  std::string priority_class;  // its kueue.x-k8s.io/priority-class label
  bool operator==(const JobSpec&) const = default;
};

JobSpec JobFromKube(const nlohmann::json& job);

}  // namespace strata::kubesched
