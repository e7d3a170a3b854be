#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "common/clock.h"
#include "kube/resource.h"
#include "kubesched/pod_spec.h"

// batch/v1 Jobs as the owners of the pods strata places: a Job that names a Kueue LocalQueue
// (kueue.x-k8s.io/queue-name on the Job, as Kueue's batch/Job integration reads it) is admitted
// and placed as one workload of its parallel pods, and the Jobs a JobSet makes (jobset.sigs.k8s.io
// labels) are placed as one gang per replicated job.
//
// A suspended Job that names a LocalQueue waits for admission, as with Kueue: when its pods (from
// its template) fit its ClusterQueue's quota and the cluster, strata unsuspends it and marks it
// kAdmissionAnnotation (the flavor), and the quota of its pods not yet bound stays reserved for it
// until they are.

namespace strata::kubesched {

inline const kube::GroupVersionResource kJobs{"batch", "v1", "jobs"};

// JobSet's names on the Jobs it makes and on their pods (labels, and annotations on pods).
inline constexpr const char* kJobSetNameKey = "jobset.sigs.k8s.io/jobset-name";
inline constexpr const char* kReplicatedJobNameKey = "jobset.sigs.k8s.io/replicatedjob-name";
inline constexpr const char* kReplicatedJobReplicasKey =
    "jobset.sigs.k8s.io/replicatedjob-replicas";

// Set by strata on a suspended Job it admitted and unsuspended: the flavor it was admitted in
// (strata's own name; kubesched does not read api's objects).
inline constexpr const char* kAdmissionAnnotation = "strata.dev/kueue-admission";

// What the scheduler reads of a batch/v1 Job.
struct JobSpec {
  std::string namespace_name, name, uid;
  // metadata.resourceVersion as a number (etcd's revision), 0 when it is not one.
  int64_t resource_version = 0;
  TimePoint created{};
  // Pods that run at once: spec.parallelism (default 1), at most the completions that remain
  // (spec.completions less status.succeeded) when completions are set.
  int64_t pods = 1;
  std::string queue_name;       // its kueue.x-k8s.io/queue-name label
  std::string priority_class;   // its kueue.x-k8s.io/priority-class label
  bool suspended = false;       // spec.suspend
  bool finished = false;        // a Complete or Failed condition is True
  std::string admitted_flavor;  // kAdmissionAnnotation ("" when strata did not admit it)
  // One pod of its template (its metadata and spec); null with `pod_error` when it does not
  // convert.
  std::shared_ptr<const PodSpec> pod;
  std::string pod_error;
  std::string template_text;  // the template as JSON text: what `pod` was made of

  // What a scheduling cycle reads changed.
  bool SameFor(const JobSpec& other) const;
  // False when `older` is this same Job (its uid) at an earlier resourceVersion: an event the
  // watch delivers after the reply of strata's own write (its admission) must not take the
  // cache back to before it, as kube-scheduler's assume cache compares resourceVersions. True
  // otherwise (another Job, or a version that cannot be compared).
  bool Supersedes(const JobSpec& older) const;
};

JobSpec JobFromKube(const nlohmann::json& job);

}  // namespace strata::kubesched
