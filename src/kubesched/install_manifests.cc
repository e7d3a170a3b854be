#include "kubesched/install_manifests.h"

#include "kube/install_objects.h"
#include "kube/leader_election.h"
#include "kube/resource.h"
#include "kubesched/dynamic_resources.h"
#include "kubesched/kueue_quotas.h"
#include "kubesched/owner_jobs.h"
#include "kubesched/pod_groups.h"

namespace strata::kubesched {
namespace {

using json = nlohmann::json;

constexpr const char* kAppName = "strata-scheduler";

json Rule(const kube::GroupVersionResource& resource, const std::string& subresource,
          std::vector<std::string> verbs) {
  std::string name = resource.resource;
  if (!subresource.empty()) name += "/" + subresource;
  return {{"apiGroups", {resource.group}}, {"resources", {name}}, {"verbs", std::move(verbs)}};
}

json Deployment(const InstallOptions& options) {
  kube::ComponentSpec spec;
  spec.name = kAppName;
  spec.namespace_name = options.namespace_name;
  spec.image = options.image;
  spec.service_account = options.service_account;
  spec.container_name = "scheduler";
  spec.replicas = options.replicas;
  spec.args = {"up",
               "--kubernetes",
               "--scheduler-name=" + options.scheduler_name,
               "--leader-elect=true",
               "--leader-elect-resource-namespace=" + options.namespace_name,
               "--leader-elect-resource-name=" + options.lease_name};
  return kube::ComponentDeployment(spec);
}

}  // namespace

std::vector<json> SchedulerClusterRules() {
  using kube::resources::kEvents;
  using kube::resources::kNodes;
  using kube::resources::kPods;
  return {
      Rule(kNodes, "", {"list", "watch"}),
      Rule(kPods, "", {"create", "delete", "get", "list", "watch"}),
      Rule(kPods, "binding", {"create"}),
      Rule(kPods, "status", {"patch"}),
      Rule(kPods, "eviction", {"create"}),
      Rule(kEvents, "", {"create", "patch"}),
      {{"apiGroups", {kueue_resources::kClusterQueues.group}},
       {"resources",
        {kueue_resources::kClusterQueues.resource, kueue_resources::kLocalQueues.resource,
         kueue_resources::kResourceFlavors.resource,
         kueue_resources::kWorkloadPriorityClasses.resource}},
       {"verbs", {"list", "watch"}}},
      Rule(kueue_resources::kClusterQueues, "status", {"patch"}),
      Rule(group_resources::kPodGroups, "", {"list", "watch"}),
      Rule(group_resources::kPodGroups, "status", {"patch"}),
      Rule(group_resources::kVolcanoPodGroups, "", {"list", "watch"}),
      Rule(kJobs, "", {"list", "watch"}),
      Rule(dra_resources::kResourceSlices, "", {"list", "watch"}),
      Rule(dra_resources::kDeviceClasses, "", {"list", "watch"}),
      Rule(dra_resources::kResourceClaims, "", {"list", "watch", "update"}),
      Rule(dra_resources::kResourceClaims, "status", {"update"}),
  };
}

std::vector<json> SchedulerObjects(const InstallOptions& options) {
  kube::RbacGrant grant;
  grant.name = kAppName;
  grant.service_account = options.service_account;
  grant.cluster_rules = SchedulerClusterRules();
  grant.namespace_rules = {{std::string(kAppName) + "-lease", options.namespace_name,
                            kube::LeaderElectionRules(options.lease_name)}};
  std::vector<json> objects = kube::GrantObjects(options.namespace_name, grant);
  objects.push_back(Deployment(options));
  return objects;
}

}  // namespace strata::kubesched
