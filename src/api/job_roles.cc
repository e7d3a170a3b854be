#include "api/job_roles.h"

#include <algorithm>
#include <map>

#include "api/pod_contract.h"

namespace strata::api {

std::vector<JobRole> JobRoles(const JobSpec& spec) {
  if (!spec.roles.empty()) return spec.roles;
  JobRole role;
  role.name = std::string(kDefaultRoleName);
  role.replicas = spec.replicas;
  role.proc_per_node = spec.proc_per_node;
  role.resources = spec.resources;
  role.template_ = spec.template_;
  role.node_selector = spec.node_selector;
  return {std::move(role)};
}

int64_t JobPodCount(const JobSpec& spec) {
  if (spec.roles.empty()) return spec.replicas;
  int64_t pods = 0;
  for (const JobRole& role : spec.roles) pods += role.replicas;
  return pods;
}

std::optional<RolePosition> RoleOfRank(const std::vector<JobRole>& roles, int64_t rank) {
  if (rank < 0) return std::nullopt;
  for (size_t r = 0; r < roles.size(); ++r) {
    if (rank < roles[r].replicas) return RolePosition{r, rank};
    rank -= roles[r].replicas;
  }
  return std::nullopt;
}

int64_t FirstRank(const std::vector<JobRole>& roles, size_t role) {
  int64_t rank = 0;
  for (size_t r = 0; r < role && r < roles.size(); ++r) rank += roles[r].replicas;
  return rank;
}

bool IsInitializerRole(const std::vector<JobRole>& roles, size_t role) {
  for (const JobRole& other : roles) {
    for (const RoleDependency& dependency : other.depends_on) {
      if (dependency.role == roles[role].name && dependency.status == "Complete") return true;
    }
  }
  return false;
}

TorchWorld TorchWorldOf(const std::vector<JobRole>& roles, const RolePosition& position) {
  const JobRole& own = roles[position.role];
  if (IsInitializerRole(roles, position.role)) {
    return {own.replicas, position.index, own.replicas * own.proc_per_node,
            position.index * own.proc_per_node};
  }
  TorchWorld world;
  for (size_t r = 0; r < roles.size(); ++r) {
    if (IsInitializerRole(roles, r)) continue;
    if (r == position.role) {
      world.node_rank = world.num_nodes + position.index;
      world.first_worker_rank = world.world_size + position.index * own.proc_per_node;
    }
    world.num_nodes += roles[r].replicas;
    world.world_size += roles[r].replicas * roles[r].proc_per_node;
  }
  return world;
}

int64_t RendezvousRank(const std::vector<JobRole>& roles) {
  for (size_t r = 0; r < roles.size(); ++r) {
    if (!IsInitializerRole(roles, r)) return FirstRank(roles, r);
  }
  return 0;
}

std::vector<RoleProgress> RolesProgress(const std::vector<JobRole>& roles,
                                        const std::vector<const Pod*>& pods) {
  std::vector<int64_t> running(roles.size(), 0), succeeded(roles.size(), 0);
  for (const Pod* pod : pods) {
    std::optional<RolePosition> position = RoleOfRank(roles, pod->spec.owner.rank);
    if (!position) continue;
    if (pod->status.phase == PodPhase::kSucceeded) {
      ++succeeded[position->role];
    } else if (pod->status.phase == PodPhase::kRunning && StopRequested(*pod).empty()) {
      ++running[position->role];
    }
  }
  std::vector<RoleProgress> progress;
  for (size_t r = 0; r < roles.size(); ++r) {
    progress.push_back(succeeded[r] == roles[r].replicas                ? RoleProgress::kComplete
                       : running[r] + succeeded[r] == roles[r].replicas ? RoleProgress::kReady
                                                                        : RoleProgress::kWaiting);
  }
  return progress;
}

bool DependenciesMet(const std::vector<JobRole>& roles, size_t role,
                     const std::vector<RoleProgress>& progress) {
  for (const RoleDependency& dependency : roles[role].depends_on) {
    auto target = std::find_if(roles.begin(), roles.end(),
                               [&](const JobRole& r) { return r.name == dependency.role; });
    if (target == roles.end()) return false;
    const RoleProgress reached = progress[static_cast<size_t>(target - roles.begin())];
    const bool met = dependency.status == "Complete" ? reached == RoleProgress::kComplete
                                                     : reached != RoleProgress::kWaiting;
    if (!met) return false;
  }
  return true;
}

bool SuccessReached(const JobSpec& spec, const std::vector<JobRole>& roles,
                    const std::vector<RoleProgress>& progress) {
  const std::vector<std::string>& targets = spec.success_policy.roles;
  const bool any = spec.success_policy.op == "Any";
  bool counted = false;
  for (size_t r = 0; r < roles.size(); ++r) {
    if (!targets.empty() &&
        std::find(targets.begin(), targets.end(), roles[r].name) == targets.end()) {
      continue;
    }
    counted = true;
    const bool complete = progress[r] == RoleProgress::kComplete;
    if (any && complete) return true;
    if (!any && !complete) return false;
  }
  return counted && !any;
}

namespace {

// Whether following dependsOn from `role` comes back to it. `state`: 0 unseen, 1 on the path,
// 2 done.
bool Cycles(const std::vector<JobRole>& roles, const std::map<std::string, size_t>& index,
            size_t role, std::vector<int>& state) {
  if (state[role] == 1) return true;
  if (state[role] == 2) return false;
  state[role] = 1;
  for (const RoleDependency& dependency : roles[role].depends_on) {
    auto target = index.find(dependency.role);
    if (target == index.end() || target->second == role) continue;  // reported on its own
    if (Cycles(roles, index, target->second, state)) return true;
  }
  state[role] = 2;
  return false;
}

}  // namespace

void ValidateJobRoles(const JobSpec& spec, const RoleFieldPaths& paths, FieldErrors& errors) {
  const std::string& roles_path = paths.roles;
  std::map<std::string, size_t> index;
  for (size_t r = 0; r < spec.roles.size(); ++r) {
    const JobRole& role = spec.roles[r];
    const std::string path = IndexPath(roles_path, r);
    if (role.name.empty()) errors.Add(JoinPath(path, "name"), "required");
    if (!index.emplace(role.name, r).second) {
      errors.Add(JoinPath(path, "name"), "duplicate role " + Quoted(role.name));
    }
    if (role.replicas < 1) {
      errors.Add(JoinPath(path, "replicas"),
                 "must be at least 1, got " + std::to_string(role.replicas));
    }
    if (role.proc_per_node < 1) {
      errors.Add(JoinPath(path, "procPerNode"),
                 "must be at least 1, got " + std::to_string(role.proc_per_node));
    }
  }
  for (size_t r = 0; r < spec.roles.size(); ++r) {
    const std::vector<RoleDependency>& depends_on = spec.roles[r].depends_on;
    for (size_t d = 0; d < depends_on.size(); ++d) {
      const std::string path =
          JoinPath(IndexPath(JoinPath(IndexPath(roles_path, r), paths.depends_on), d),
                   paths.dependency_role);
      if (index.count(depends_on[d].role) == 0) {
        errors.Add(path, "no role " + Quoted(depends_on[d].role) + " in this job");
      } else if (depends_on[d].role == spec.roles[r].name) {
        errors.Add(path, "a role cannot wait for itself");
      }
    }
  }
  std::vector<int> state(spec.roles.size(), 0);
  for (size_t r = 0; r < spec.roles.size(); ++r) {
    if (Cycles(spec.roles, index, r, state)) {
      errors.Add(JoinPath(IndexPath(roles_path, r), paths.depends_on),
                 "the roles wait for each other in a cycle: none could start");
      break;
    }
  }
  const std::string& targets_path = paths.success_roles;
  for (size_t t = 0; t < spec.success_policy.roles.size(); ++t) {
    const std::string& name = spec.success_policy.roles[t];
    const bool known = spec.roles.empty() ? name == kDefaultRoleName : index.count(name) > 0;
    if (!known) errors.Add(IndexPath(targets_path, t), "no role " + Quoted(name) + " in this job");
  }
}

}  // namespace strata::api
