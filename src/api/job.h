#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/condition.h"
#include "api/object_meta.h"
#include "api/pod.h"
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

// A role whose pods must reach `status` before the pods of the role that names it start:
// Ready (every pod of it running; JobSet's and Volcano's Ready) or Complete (every pod of it
// succeeded: an initializer).
struct RoleDependency {
  std::string role;
  std::string status = "Ready";

  bool operator==(const RoleDependency&) const = default;
};

// One pod template of a job (a JobSet's replicated job, a Volcano task, a training runtime's
// step): `replicas` pods that run `template_`. A job's pods are ranked across its roles in
// order: the first role's pods have ranks 0..replicas-1, the next role's follow. The whole job
// is placed at once; a role's pods are started once the roles it depends on have reached their
// status.
struct JobRole {
  std::string name;
  int64_t replicas = 1;
  int64_t proc_per_node = 1;
  ResourceRequest resources;  // per pod
  ProcessTemplate template_;
  std::map<std::string, std::string> node_selector;  // node labels each pod's node must carry
  std::vector<RoleDependency> depends_on;

  bool operator==(const JobRole&) const = default;
};

// When a job succeeds: when every role named in `roles` (empty: every role) has succeeded
// (operator All), or when any of them has (Any). A role succeeds when each of its pods has. The
// job's other pods are then stopped.
struct JobSuccessPolicy {
  std::string op = "All";
  std::vector<std::string> roles;

  bool operator==(const JobSuccessPolicy&) const = default;
};

// A job has either `roles` or the one role that replicas, proc_per_node, resources, template_
// and node_selector describe (named "worker"; api/job_roles.h reads both alike).
struct JobSpec {
  int64_t replicas = 1;       // nodes (pods); placed all together or not at all
  int64_t proc_per_node = 1;  // worker processes per pod (torchrun's nproc_per_node)
  ResourceRequest resources;  // per pod
  std::map<std::string, std::string> node_selector;
  std::vector<JobRole> roles;  // empty: the one role above
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
  JobSuccessPolicy success_policy;

  bool operator==(const JobSpec&) const = default;
};

// Where a job's phase stands, as `strata get jobs` shows it.
enum class JobPhase { kPending, kRunning, kRestarting, kSucceeded, kFailed };

// "Pending", "Running", "Restarting", "Succeeded", "Failed".
std::string_view JobPhaseName(JobPhase phase);
// The phase named `name`; nullopt for any other word.
std::optional<JobPhase> ParseJobPhase(std::string_view name);

// One pod of a placement: the rank, the node and the GPUs it was bound to.
struct JobPodAssignment {
  int64_t rank = 0;
  std::string node_name;
  std::vector<AssignedGpu> gpus;

  bool operator==(const JobPodAssignment&) const = default;
};

// The scheduler adapter's decision for one run of a job, recorded in the job's status before
// any of its pods is created: the commit point of a gang bind. A pass that finds a placement
// whose pods do not all exist creates the missing ones from it (so a crash halfway through a
// bind is completed, never left half-bound), and the capacity it names is held from the moment
// it is written. `run` counts the job's placements; its pods carry it (kJobRunAnnotation), and
// pods of another run are stale: stopped and deleted.
struct JobPlacement {
  int64_t run = 0;
  std::string flavor;  // empty: none
  std::string master_addr;
  int64_t master_port = 0;
  std::string bound_at;  // RFC 3339
  std::vector<JobPodAssignment> pods;

  bool operator==(const JobPlacement&) const = default;
};

// The status of a Job, which the scheduler adapter and the job controller own.
struct JobStatus {
  JobPhase phase = JobPhase::kPending;
  int64_t restart_count = 0;              // whole-group restarts after failures
  int64_t preemption_count = 0;           // times the job was preempted and requeued
  int64_t runs = 0;                       // placements made so far (the last one's run number)
  std::string reason;                     // why it waits or why it ended: one CamelCase word
  std::string message;                    // a sentence for people
  std::string start_time;                 // RFC 3339; first time every pod ran
  std::string completion_time;            // RFC 3339; when it succeeded or failed
  std::string last_checkpoint_time;       // RFC 3339; the newest checkpoint its pods reported
  std::vector<Condition> conditions;      // Scheduled, Running, Restarting, Succeeded, Failed
  std::optional<JobPlacement> placement;  // the current run's; none while pending

  bool operator==(const JobStatus&) const = default;

  bool Terminal() const { return phase == JobPhase::kSucceeded || phase == JobPhase::kFailed; }
  bool SetCondition(std::string_view type, std::string_view status, std::string_view reason,
                    std::string_view message, TimePoint now) {
    return api::SetCondition(conditions, type, status, reason, message, now);
  }
  const Condition* FindCondition(std::string_view type) const {
    return api::FindCondition(conditions, type);
  }
};

// A distributed training job: `replicas` pods x `proc_per_node` processes, started with
// torchrun's environment contract. Namespaced.
struct Job {
  ObjectMeta metadata;
  JobSpec spec;
  JobStatus status;

  bool operator==(const Job&) const = default;
};

}  // namespace strata::api
