#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace strata::kubesched {

// What `strata kubernetes manifests` installs to run `strata up --kubernetes` on a cluster.
struct InstallOptions {
  std::string namespace_name = "strata-system";
  std::string image;  // REQUIRES: not empty
  std::string service_account = "strata";
  std::string scheduler_name = "strata";
  std::string lease_name = "strata-scheduler";
  int replicas = 2;
};

// An identity of strata's on a cluster and what it may do: a ServiceAccount in the install's
// namespace, a ClusterRole of `cluster_rules` bound to it, and a Role with its RoleBinding in each
// namespace of `namespace_rules`.
struct RbacGrant {
  std::string name;  // the ClusterRole's, and app.kubernetes.io/name on every object
  std::string service_account;
  std::vector<nlohmann::json> cluster_rules;
  struct NamespaceRules {
    std::string role;  // the Role's (and its binding's) name
    std::string namespace_name;
    std::vector<nlohmann::json> rules;
  };
  std::vector<NamespaceRules> namespace_rules;
};

// The objects of `grant`, its ServiceAccount in `install_namespace`.
std::vector<nlohmann::json> GrantObjects(const std::string& install_namespace,
                                         const RbacGrant& grant);

// The RBAC rules of exactly the requests the scheduler makes (kube_scheduler.cc,
// scheduling_reporter.cc), cluster-wide:
//   nodes: list, watch                         its reflector
//   pods: list, watch                          its reflector (every namespace)
//   pods: get, delete, create                  releasing a half-bound gang (a standalone pod
//                                              is made again, unbound)
//   pods/binding: create                       binding
//   pods/status: patch                         PodScheduled=False
//   pods/eviction: create                      preemption
//   events: create, patch                      FailedScheduling, Scheduled
//   kueue.x-k8s.io clusterqueues, localqueues, resourceflavors, workloadpriorityclasses:
//   list, watch; and clusterqueues/status: patch
//                                              Kueue quotas (--kueue-quotas); a forbidden one
//                                              would stop every cycle, as an unlisted source
std::vector<nlohmann::json> SchedulerClusterRules();

// The Namespace the control plane runs in, held to the "restricted" Pod Security Standard.
nlohmann::json ControlPlaneNamespace(const InstallOptions& options);

// The scheduler's grant (SchedulerClusterRules(), and kube::LeaderElectionRules() on its Lease in
// the install's namespace), and the Deployment of `replicas`
// schedulers with leader election, in-cluster credentials, a non-root read-only container
// without privilege escalation or capabilities, and resource requests.
std::vector<nlohmann::json> SchedulerObjects(const InstallOptions& options);

}  // namespace strata::kubesched
