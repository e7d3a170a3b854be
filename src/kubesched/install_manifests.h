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
//                                              Kueue quotas (--kueue-quotas)
//   scheduling.k8s.io podgroups: list, watch; podgroups/status: patch
//                                              gang sizes and topology; PodGroupInitiallyScheduled
//   scheduling.volcano.sh podgroups: list, watch  Volcano gangs' minMember
//   batch jobs: list, watch                   a Job's Kueue queue, JobSets' gangs
//   resource.k8s.io resourceslices, deviceclasses: list, watch; resourceclaims: list, watch,
//   update (the finalizer); resourceclaims/status: update
//                                              DRA: GPUs, their allocation and reservation
// (A kind the identity may not list reads as none, as one whose API is not served.)
std::vector<nlohmann::json> SchedulerClusterRules();

// The scheduler's grant (SchedulerClusterRules(), and kube::LeaderElectionRules() on its Lease in
// the install's namespace), and the Deployment (kube::ComponentDeployment) of `replicas`
// schedulers with leader election.
std::vector<nlohmann::json> SchedulerObjects(const InstallOptions& options);

}  // namespace strata::kubesched
