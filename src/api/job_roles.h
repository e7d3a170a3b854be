#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/job.h"
#include "api/pod.h"
#include "common/field_errors.h"

// How a Job's pods divide into roles (api/job.h's JobRole): which role a rank belongs to, when
// a role may start and when the job has succeeded. Pure functions; thread-safe.
namespace strata::api {

// The name of the one role of a job without spec.roles.
inline constexpr std::string_view kDefaultRoleName = "worker";

// The job's roles: spec.roles, or the one role (kDefaultRoleName) that spec.replicas,
// procPerNode, resources, template and nodeSelector describe.
std::vector<JobRole> JobRoles(const JobSpec& spec);

// The pods of the job: the sum of its roles' replicas.
int64_t JobPodCount(const JobSpec& spec);

// Where rank `rank` sits: its role (an index into `roles`) and its index within the role.
struct RolePosition {
  size_t role = 0;
  int64_t index = 0;
};
// nullopt when `rank` is not in [0, sum of replicas).
std::optional<RolePosition> RoleOfRank(const std::vector<JobRole>& roles, int64_t rank);
// The rank of the first pod of `roles[role]`.
int64_t FirstRank(const std::vector<JobRole>& roles, size_t role);

// Where a pod stands in its torchrun world, the pods that rendezvous together. A role that
// another role waits for with status Complete (an initializer) ends before that role starts, so
// it is a world of its own; the other roles form the job's main world, whose first pod hosts
// the rendezvous (MASTER_ADDR). A job of one role is one world.
struct TorchWorld {
  int64_t num_nodes = 0;          // pods of the world (torchrun's --nnodes)
  int64_t node_rank = 0;          // the pod's index among them (GROUP_RANK)
  int64_t world_size = 0;         // workers of the world (WORLD_SIZE)
  int64_t first_worker_rank = 0;  // RANK of the pod's LOCAL_RANK 0
};
TorchWorld TorchWorldOf(const std::vector<JobRole>& roles, const RolePosition& position);
// Whether some role waits for `roles[role]` to Complete: an initializer, a world of its own.
bool IsInitializerRole(const std::vector<JobRole>& roles, size_t role);
// The rank of the main world's first pod, where MASTER_ADDR points.
int64_t RendezvousRank(const std::vector<JobRole>& roles);

// How far the pods of one role of a run have come.
enum class RoleProgress {
  kWaiting,   // some pod does not exist yet or is not running
  kReady,     // every pod runs (or has succeeded)
  kComplete,  // every pod succeeded
};

// How far each of `roles` has come (by role index), from `pods`: the pods of one run of the job.
// A pod counts as running while no stop was asked of it; a pod whose rank is not the roles'
// counts for nothing.
std::vector<RoleProgress> RolesProgress(const std::vector<JobRole>& roles,
                                        const std::vector<const Pod*>& pods);

// Whether a role whose dependencies stand at `progress` (by role index) may start.
bool DependenciesMet(const std::vector<JobRole>& roles, size_t role,
                     const std::vector<RoleProgress>& progress);

// Whether the job's success policy holds when its roles stand at `progress`.
bool SuccessReached(const JobSpec& spec, const std::vector<JobRole>& roles,
                    const std::vector<RoleProgress>& progress);

// Where a manifest keeps what ValidateJobRoles checks, for its errors: strata's own fields by
// default, a compatible kind's (JobSet's replicatedJobs[].dependsOn[].name...) otherwise.
struct RoleFieldPaths {
  std::string roles = "spec.roles";
  std::string depends_on = "dependsOn";
  std::string dependency_role = "role";
  std::string success_roles = "spec.successPolicy.roles";
};

// Checks what spans a job's roles: unique names, replicas and procPerNode of at least 1,
// dependsOn naming another role without a cycle, success roles that exist.
void ValidateJobRoles(const JobSpec& spec, const RoleFieldPaths& paths, FieldErrors& errors);

}  // namespace strata::api
