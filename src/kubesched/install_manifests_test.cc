#include "kubesched/install_manifests.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "kube/leader_election.h"
#include "kubesched/dynamic_resources.h"
#include "kubesched/kueue_quotas.h"
#include "kubesched/owner_jobs.h"
#include "kubesched/pod_groups.h"

namespace strata::kubesched {
namespace {

using json = nlohmann::json;
using ::testing::ElementsAre;

InstallOptions Options() {
  InstallOptions options;
  options.namespace_name = "gpu-platform";
  options.image = "registry.example/strata:1";
  return options;
}

const json* Find(const std::vector<json>& objects, const std::string& kind) {
  for (const json& o : objects)
    if (o["kind"] == kind) return &o;
  return nullptr;
}

// The verbs the rules grant on group/resource, or none.
std::vector<std::string> Verbs(const std::vector<json>& rules, const std::string& group,
                               const std::string& resource) {
  std::vector<std::string> verbs;
  for (const json& rule : rules) {
    if (!rule["apiGroups"].get<std::vector<std::string>>().empty() &&
        rule["apiGroups"][0] == group) {
      for (const json& r : rule["resources"])
        if (r == resource)
          for (const json& v : rule["verbs"]) verbs.push_back(v);
    }
  }
  return verbs;
}

TEST(InstallManifestsTest, ClusterRulesAreTheSchedulersRequests) {
  std::vector<json> rules = SchedulerClusterRules();
  EXPECT_THAT(Verbs(rules, "", "pods/binding"), ElementsAre("create"));
  EXPECT_THAT(Verbs(rules, "", "pods/status"), ElementsAre("patch"));
  EXPECT_THAT(Verbs(rules, "", "pods/eviction"), ElementsAre("create"));
  EXPECT_THAT(Verbs(rules, "", "nodes"), ElementsAre("list", "watch"));
  EXPECT_THAT(Verbs(rules, "", "events"), ElementsAre("create", "patch"));
  EXPECT_THAT(Verbs(rules, "kueue.x-k8s.io", "clusterqueues/status"), ElementsAre("patch"));
  EXPECT_THAT(Verbs(rules, "scheduling.k8s.io", "podgroups/status"), ElementsAre("patch"));
  EXPECT_THAT(Verbs(rules, "resource.k8s.io", "resourceclaims"),
              ElementsAre("list", "watch", "update"));
  EXPECT_THAT(Verbs(rules, "resource.k8s.io", "resourceclaims/status"), ElementsAre("update"));
  for (const kube::GroupVersionResource* followed :
       {&kueue_resources::kClusterQueues, &kueue_resources::kLocalQueues,
        &kueue_resources::kResourceFlavors, &kueue_resources::kWorkloadPriorityClasses,
        &group_resources::kPodGroups, &group_resources::kVolcanoPodGroups,
        &dra_resources::kResourceSlices, &dra_resources::kDeviceClasses, &kJobs}) {
    EXPECT_THAT(Verbs(rules, followed->group, followed->resource), ElementsAre("list", "watch"))
        << followed->resource;
  }
  // Nothing else: no secrets, no wildcard, no Lease outside its namespace.
  for (const json& rule : rules) {
    for (const json& r : rule["resources"]) {
      EXPECT_NE(r, "*");
      EXPECT_NE(r, "secrets");
      EXPECT_NE(r, "leases");
    }
    for (const json& v : rule["verbs"]) EXPECT_NE(v, "*");
  }
}

TEST(InstallManifestsTest, TheLeaseRoleNamesOnlyItsLease) {
  std::vector<json> rules = kube::LeaderElectionRules("strata-scheduler");
  ASSERT_EQ(rules.size(), 2u);
  EXPECT_EQ(rules[0]["verbs"], json({"create"}));  // RBAC cannot narrow create by name
  EXPECT_EQ(rules[1]["resourceNames"], json({"strata-scheduler"}));
  EXPECT_EQ(rules[1]["verbs"], json({"get", "update"}));
}

TEST(InstallManifestsTest, ObjectsLiveInTheGivenNamespace) {
  InstallOptions options = Options();
  std::vector<json> objects = SchedulerObjects(options);
  for (const char* kind : {"ServiceAccount", "Role", "RoleBinding", "Deployment"}) {
    ASSERT_NE(Find(objects, kind), nullptr) << kind;
    EXPECT_EQ((*Find(objects, kind))["metadata"]["namespace"], "gpu-platform") << kind;
  }
  EXPECT_EQ((*Find(objects, "ClusterRoleBinding"))["subjects"][0]["namespace"], "gpu-platform");
  EXPECT_EQ((*Find(objects, "Role"))["metadata"]["name"], "strata-scheduler-lease");
}

TEST(InstallManifestsTest, TheDeploymentRunsLeaderElectedRestrictedSchedulers) {
  std::vector<json> objects = SchedulerObjects(Options());
  const json& deployment = *Find(objects, "Deployment");
  EXPECT_EQ(deployment["spec"]["replicas"], 2);
  const json& pod = deployment["spec"]["template"]["spec"];
  EXPECT_EQ(pod["serviceAccountName"], "strata");
  const json& container = pod["containers"][0];
  EXPECT_EQ(container["image"], "registry.example/strata:1");
  EXPECT_THAT(container["args"].get<std::vector<std::string>>(),
              ElementsAre("up", "--kubernetes", "--scheduler-name=strata", "--leader-elect=true",
                          "--leader-elect-resource-namespace=gpu-platform",
                          "--leader-elect-resource-name=strata-scheduler"));
  const json& security = container["securityContext"];
  EXPECT_EQ(security["runAsNonRoot"], true);
  EXPECT_EQ(security["readOnlyRootFilesystem"], true);
  EXPECT_EQ(security["allowPrivilegeEscalation"], false);
  EXPECT_EQ(security["capabilities"]["drop"], json({"ALL"}));
  EXPECT_TRUE(container["resources"]["requests"].contains("cpu"));
  EXPECT_TRUE(container["resources"]["requests"].contains("memory"));
}

}  // namespace
}  // namespace strata::kubesched
