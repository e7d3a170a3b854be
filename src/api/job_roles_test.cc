#include "api/job_roles.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/encode.h"
#include "api/manifest.h"

namespace strata::api {
namespace {

using ::testing::HasSubstr;

JobRole Role(std::string name, int64_t replicas, int64_t procs = 1,
             std::vector<RoleDependency> depends_on = {}) {
  return JobRole{.name = std::move(name),
                 .replicas = replicas,
                 .proc_per_node = procs,
                 .depends_on = std::move(depends_on)};
}

TEST(JobRolesTest, AJobWithoutRolesIsOneRoleOfItsOwnFields) {
  JobSpec spec;
  spec.replicas = 3;
  spec.proc_per_node = 8;
  spec.node_selector = {{"zone", "a"}};
  spec.template_.command = {"python3"};
  const std::vector<JobRole> roles = JobRoles(spec);
  ASSERT_EQ(roles.size(), 1u);
  EXPECT_EQ(roles[0].name, "worker");
  EXPECT_EQ(roles[0].replicas, 3);
  EXPECT_EQ(roles[0].proc_per_node, 8);
  EXPECT_EQ(roles[0].node_selector, spec.node_selector);
  EXPECT_EQ(roles[0].template_, spec.template_);
  EXPECT_EQ(JobPodCount(spec), 3);
}

TEST(JobRolesTest, RanksCountAcrossRolesInOrder) {
  const std::vector<JobRole> roles = {Role("driver", 1), Role("workers", 4)};
  EXPECT_EQ(FirstRank(roles, 1), 1);
  ASSERT_TRUE(RoleOfRank(roles, 0).has_value());
  EXPECT_EQ(RoleOfRank(roles, 0)->role, 0u);
  EXPECT_EQ(RoleOfRank(roles, 4)->role, 1u);
  EXPECT_EQ(RoleOfRank(roles, 4)->index, 3);
  EXPECT_FALSE(RoleOfRank(roles, 5).has_value());
  EXPECT_FALSE(RoleOfRank(roles, -1).has_value());
}

TEST(JobRolesTest, ARoleStartsWhenWhatItWaitsForIsReadyOrComplete) {
  const std::vector<JobRole> roles = {Role("init", 1),
                                      Role("workers", 2, 1, {{"init", "Complete"}}),
                                      Role("driver", 1, 1, {{"workers", "Ready"}})};
  using P = RoleProgress;
  EXPECT_TRUE(DependenciesMet(roles, 0, {P::kWaiting, P::kWaiting, P::kWaiting}));
  EXPECT_FALSE(DependenciesMet(roles, 1, {P::kReady, P::kWaiting, P::kWaiting}));
  EXPECT_TRUE(DependenciesMet(roles, 1, {P::kComplete, P::kWaiting, P::kWaiting}));
  EXPECT_FALSE(DependenciesMet(roles, 2, {P::kComplete, P::kWaiting, P::kWaiting}));
  EXPECT_TRUE(DependenciesMet(roles, 2, {P::kComplete, P::kReady, P::kWaiting}));
  // Pods that already succeeded are past Ready.
  EXPECT_TRUE(DependenciesMet(roles, 2, {P::kComplete, P::kComplete, P::kWaiting}));
}

TEST(JobRolesTest, SuccessIsAllOrAnyOfTheTargetRoles) {
  JobSpec spec;
  spec.roles = {Role("a", 1), Role("b", 1), Role("c", 1)};
  const std::vector<JobRole>& roles = spec.roles;
  using P = RoleProgress;
  EXPECT_FALSE(SuccessReached(spec, roles, {P::kComplete, P::kComplete, P::kReady}));
  EXPECT_TRUE(SuccessReached(spec, roles, {P::kComplete, P::kComplete, P::kComplete}));
  spec.success_policy = {"All", {"a", "c"}};
  EXPECT_TRUE(SuccessReached(spec, roles, {P::kComplete, P::kReady, P::kComplete}));
  EXPECT_FALSE(SuccessReached(spec, roles, {P::kComplete, P::kComplete, P::kReady}));
  spec.success_policy = {"Any", {"b", "c"}};
  EXPECT_FALSE(SuccessReached(spec, roles, {P::kComplete, P::kReady, P::kWaiting}));
  EXPECT_TRUE(SuccessReached(spec, roles, {P::kWaiting, P::kReady, P::kComplete}));
  spec.success_policy = {"Any", {}};
  EXPECT_TRUE(SuccessReached(spec, roles, {P::kComplete, P::kReady, P::kReady}));
}

TEST(JobRolesTest, InitializersAreTorchWorldsOfTheirOwnAndTheRestShareOne) {
  // The trainer (2 pods of 8) and a sidecar (1 of 1) rendezvous; the initializer is alone.
  const std::vector<JobRole> roles = {Role("init", 1),
                                      Role("trainer", 2, 8, {{"init", "Complete"}}),
                                      Role("sidecar", 1, 1, {{"trainer", "Ready"}})};
  EXPECT_EQ(RendezvousRank(roles), 1);
  TorchWorld init = TorchWorldOf(roles, {0, 0});
  EXPECT_EQ(init.num_nodes, 1);
  EXPECT_EQ(init.world_size, 1);
  TorchWorld second = TorchWorldOf(roles, {1, 1});
  EXPECT_EQ(second.num_nodes, 3);
  EXPECT_EQ(second.node_rank, 1);
  EXPECT_EQ(second.world_size, 17);
  EXPECT_EQ(second.first_worker_rank, 8);
  TorchWorld sidecar = TorchWorldOf(roles, {2, 0});
  EXPECT_EQ(sidecar.node_rank, 2);
  EXPECT_EQ(sidecar.first_worker_rank, 16);
}

std::string ErrorOf(const std::string& spec) {
  Result<std::vector<Object>> r = DecodeManifests(
      {{"j.yaml",
        "apiVersion: strata.dev/v1alpha1\nkind: Job\nmetadata: {name: j}\nspec:\n" + spec}});
  return r.has_value() ? "<decoded>" : r.error().message();
}

TEST(JobRolesTest, RolesThatCannotRunAreErrorsNamingTheField) {
  EXPECT_THAT(ErrorOf("  roles:\n  - {name: a, template: {command: [x]}}\n"
                      "  - {name: a, template: {command: [x]}}\n"),
              HasSubstr("spec.roles[1].name: duplicate role \"a\""));
  EXPECT_THAT(
      ErrorOf("  roles:\n  - {name: a, dependsOn: [{role: a}], template: {command: [x]}}\n"),
      HasSubstr("spec.roles[0].dependsOn[0].role: a role cannot wait for itself"));
  EXPECT_THAT(ErrorOf("  roles:\n  - {name: a, replicas: 0, template: {command: [x]}}\n"),
              HasSubstr("spec.roles[0].replicas: must be at least 1, got 0"));
  EXPECT_THAT(ErrorOf("  roles:\n  - {name: a, dependsOn: [{role: b, status: Done}], template: "
                      "{command: [x]}}\n"),
              HasSubstr("spec.roles[0].dependsOn[0].status"));
  EXPECT_THAT(ErrorOf("  roles: []\n"), HasSubstr("spec.roles: needs at least one role"));
  EXPECT_THAT(ErrorOf("  successPolicy: {roles: [driver]}\n  template: {command: [x]}\n"),
              HasSubstr("spec.successPolicy.roles[0]: no role \"driver\" in this job"));
  EXPECT_THAT(ErrorOf("  replicas: 2\n"), HasSubstr("spec.template: required"));
  EXPECT_EQ(ErrorOf("  successPolicy: {roles: [worker]}\n  template: {command: [x]}\n"),
            "<decoded>");
}

TEST(JobRolesTest, RolesSurviveEncodingAndDecoding) {
  Result<std::vector<Object>> r = DecodeManifests({{"j.yaml", R"(apiVersion: strata.dev/v1alpha1
kind: Job
metadata: {name: j, namespace: default}
spec:
  successPolicy: {operator: Any, roles: [driver]}
  roles:
  - name: workers
    replicas: 2
    procPerNode: 4
    resources: {gpu: 4}
    nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
    template: {command: [python3, w.py]}
  - name: driver
    dependsOn: [{role: workers}]
    template: {command: [python3, d.py]}
)"}});
  ASSERT_TRUE(r.has_value()) << r.error().message();
  const nlohmann::json encoded = EncodeObject(r->front());
  EXPECT_FALSE(encoded["spec"].contains("replicas"));
  EXPECT_EQ(encoded["spec"]["roles"][1]["dependsOn"][0]["status"], "Ready");
  Result<Object> again = DecodeObject(encoded);
  ASSERT_TRUE(again.has_value()) << again.error().message();
  EXPECT_EQ(*again->As<Job>(), *r->front().As<Job>());
  EXPECT_EQ(again->As<Job>()->spec.success_policy, (JobSuccessPolicy{"Any", {"driver"}}));
}

TEST(JobRolesTest, AJobOfOneTemplateEncodesAsBefore) {
  Result<std::vector<Object>> r = DecodeManifests({{"j.yaml", R"(apiVersion: strata.dev/v1alpha1
kind: Job
metadata: {name: j, namespace: default}
spec:
  replicas: 2
  nodeSelector: {zone: a}
  template: {command: [python3]}
)"}});
  ASSERT_TRUE(r.has_value()) << r.error().message();
  const nlohmann::json encoded = EncodeObject(r->front());
  EXPECT_EQ(encoded["spec"]["replicas"], 2);
  EXPECT_EQ(encoded["spec"]["nodeSelector"]["zone"], "a");
  EXPECT_FALSE(encoded["spec"].contains("roles"));
  EXPECT_FALSE(encoded["spec"].contains("successPolicy"));
}

}  // namespace
}  // namespace strata::api
