#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/manifest.h"

namespace strata::api {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Kueue's single-ClusterQueue setup at v1beta2, as `kubectl get -o yaml` returns it: with the
// fields the API server defaults and the status Kueue writes.
constexpr const char* kSetup = R"(
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata:
  name: default-flavor
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: cluster-queue
  generation: 1
  uid: 6b0c7e6e-3c5e-4b9e-9d8e-1f2a3b4c5d6e
  resourceVersion: "812"
  creationTimestamp: "2026-11-30T10:00:00Z"
spec:
  namespaceSelector: {}
  cohortName: research
  queueingStrategy: BestEffortFIFO
  stopPolicy: None
  flavorFungibility:
    whenCanBorrow: MayStopSearch
    whenCanPreempt: TryNextFlavor
  preemption:
    borrowWithinCohort: {policy: Never}
    reclaimWithinCohort: Any
    withinClusterQueue: LowerPriority
  resourceGroups:
    - coveredResources: [cpu, memory, nvidia.com/gpu]
      flavors:
        - name: default-flavor
          resources:
            - {name: cpu, nominalQuota: 9}
            - {name: memory, nominalQuota: 36Gi}
            - {name: nvidia.com/gpu, nominalQuota: 8, borrowingLimit: 4}
status:
  pendingWorkloads: 0
  admittedWorkloads: 0
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata:
  namespace: default
  name: user-queue
spec:
  clusterQueue: cluster-queue
  stopPolicy: None
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Topology
metadata:
  name: default
spec:
  levels:
    - nodeLabel: topology.strata.dev/block
    - nodeLabel: topology.strata.dev/rack
    - nodeLabel: kubernetes.io/hostname
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata:
  name: research
)";

TEST(KueueV1beta2Test, SetupAsTheServerReturnsItDecodes) {
  std::vector<std::string> warnings;
  Result<std::vector<Object>> r = DecodeManifests({{"setup.yaml", kSetup}}, &warnings);
  ASSERT_TRUE(r.has_value()) << r.error().message();
  ASSERT_EQ(r->size(), 3u);
  const ResourceFlavor& flavor = *(*r)[0].As<ResourceFlavor>();
  EXPECT_EQ(flavor.metadata.name, "default-flavor");
  EXPECT_TRUE(flavor.spec.node_labels.empty());
  const Queue& queue = *(*r)[1].As<Queue>();
  EXPECT_EQ(queue.spec.cohort, "research");
  EXPECT_EQ(queue.spec.preemption.within_queue, "LowerPriority");
  EXPECT_EQ(queue.spec.preemption.reclaim_within_cohort, "Any");
  EXPECT_THAT(queue.spec.local_queues, ElementsAre(LocalQueueRef{"default", "user-queue"}));
  ASSERT_EQ(queue.spec.flavors.size(), 1u);
  ASSERT_EQ(queue.spec.flavors[0].resources.size(), 3u);
  EXPECT_EQ(queue.spec.flavors[0].resources[2].resource, "gpu");
  EXPECT_EQ(queue.spec.flavors[0].resources[2].borrowing_limit, Quantity::FromUnits(4));
  // The Cohort is a Queue of its name that only lends (here nothing: it has no quota).
  const Queue& cohort = *(*r)[2].As<Queue>();
  EXPECT_EQ(cohort.metadata.name, "research");
  EXPECT_EQ(cohort.spec.cohort, "research");
  EXPECT_TRUE(cohort.spec.lend_only);
  EXPECT_TRUE(cohort.spec.flavors.empty());
  EXPECT_THAT(warnings, ElementsAre("setup.yaml: document 2 (ClusterQueue cluster-queue): "
                                    "metadata.generation: ignored: set by the server",
                                    "setup.yaml: document 2 (ClusterQueue cluster-queue): status: "
                                    "ignored: status is set by strata"));
}

TEST(KueueV1beta2Test, V1beta1StaysReadable) {
  Result<std::vector<Object>> r = DecodeManifests({{"cq.yaml", R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq}
spec:
  cohort: c
  flavorFungibility: {whenCanBorrow: Borrow, whenCanPreempt: TryNextFlavor}
  resourceGroups:
    - coveredResources: [nvidia.com/gpu]
      flavors: [{name: h100, resources: [{name: nvidia.com/gpu, nominalQuota: 8}]}]
)"}});
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_EQ(r->front().As<Queue>()->spec.cohort, "c");
}

std::string ErrorOf(const std::string& text) {
  Result<std::vector<Object>> r = DecodeManifests({{"k.yaml", text}});
  return r.has_value() ? "<decoded>" : r.error().message();
}

std::string ClusterQueueWith(const std::string& spec_fields) {
  return R"(
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
)" + spec_fields;
}

TEST(KueueV1beta2Test, WhatStrataDoesNotDoIsAnErrorNamingTheField) {
  EXPECT_EQ(ErrorOf(ClusterQueueWith("  cohort: c\n")),
            "k.yaml: document 1 (ClusterQueue cq): spec.cohort: unknown field");
  EXPECT_THAT(ErrorOf(ClusterQueueWith("  flavorFungibility: {whenCanBorrow: TryNextFlavor}\n")),
              HasSubstr("spec.flavorFungibility.whenCanBorrow: strata takes the first flavor "
                        "where the workload fits, borrowing if it must"));
  EXPECT_THAT(ErrorOf(ClusterQueueWith("  flavorFungibility: {whenCanPreempt: MayStopSearch}\n")),
              HasSubstr("spec.flavorFungibility.whenCanPreempt: strata tries every flavor"));
  EXPECT_THAT(ErrorOf(ClusterQueueWith("  stopPolicy: Hold\n")),
              HasSubstr("spec.stopPolicy: strata queues cannot be held"));
  EXPECT_THAT(ErrorOf(ClusterQueueWith("  preemption: {borrowWithinCohort: {policy: "
                                       "LowerPriority}}\n")),
              HasSubstr("spec.preemption.borrowWithinCohort.policy: strata does not preempt in "
                        "order to borrow"));
  EXPECT_THAT(
      ErrorOf(ClusterQueueWith("  admissionChecksStrategy: {admissionChecks: [{name: prov}]}\n")),
      HasSubstr("spec.admissionChecksStrategy: not supported by strata: strata has no "
                "admission checks"));
  EXPECT_THAT(ErrorOf(R"(
apiVersion: kueue.x-k8s.io/v1beta2
kind: Topology
metadata: {name: t}
spec:
  levels: [{nodeLabel: rack}, {nodeLabel: rack}]
)"),
              HasSubstr("spec.levels[1].nodeLabel: \"rack\" appears twice"));
}

TEST(KueueV1beta2Test, WorkloadPriorityClassGivesTheLabelledWorkloadsTheirPriority) {
  std::string job = R"(
apiVersion: batch/v1
kind: Job
metadata:
  name: j
  labels: {kueue.x-k8s.io/priority-class: urgent}
spec:
  template:
    spec:
      priorityClassName: sheddable
      restartPolicy: Never
      containers: [{name: c, command: [x]}]
)";
  std::string priority_class = R"(
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: urgent}
value: 10000
description: ahead of the rest
)";
  Result<std::vector<Object>> r =
      DecodeManifests({{"job.yaml", job}, {"classes.yaml", priority_class}});
  ASSERT_TRUE(r.has_value()) << r.error().message();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ(r->front().As<Job>()->spec.priority, 10000);  // Kueue's rule: the class wins
  // The label stays, as on Kueue's Job; the class is stored as strata's own kind.
  EXPECT_EQ(r->front().metadata().labels.at("kueue.x-k8s.io/priority-class"), "urgent");
  const auto* stored = (*r)[1].As<WorkloadPriorityClass>();
  ASSERT_NE(stored, nullptr);
  EXPECT_EQ(stored->spec.value, 10000);
  EXPECT_EQ(stored->spec.description, "ahead of the rest");

  // Without its class, the Job keeps the label for the server to resolve against the classes
  // it stores (server/workload_priority.h).
  Result<std::vector<Object>> alone = DecodeManifests({{"job.yaml", job}});
  ASSERT_TRUE(alone.has_value()) << alone.error().message();
  EXPECT_EQ(alone->front().metadata().labels.at("kueue.x-k8s.io/priority-class"), "urgent");
  EXPECT_THAT(ErrorOf(priority_class + "---" + priority_class),
              HasSubstr("document 2 (WorkloadPriorityClass urgent): metadata.name: a second "
                        "WorkloadPriorityClass \"urgent\""));
  EXPECT_THAT(ErrorOf("apiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\n"
                      "metadata: {name: x}\nvalue: 2000000000\n"),
              HasSubstr("value: must be between -2000000000 and 1000000000"));
}

TEST(KueueV1beta2Test, UnknownVersionNamesTheOnesStrataReads) {
  EXPECT_THAT(ErrorOf(R"(
apiVersion: kueue.x-k8s.io/v1beta3
kind: LocalQueue
metadata: {name: q}
spec: {clusterQueue: cq}
)"),
              HasSubstr("strata reads kueue.x-k8s.io/v1beta2, kueue.x-k8s.io/v1beta1"));
}

}  // namespace
}  // namespace strata::api
