#include "kubesched/pod_spec.h"

#include <gtest/gtest.h>

namespace strata::kubesched {
namespace {

nlohmann::json Pod() {
  return nlohmann::json::parse(R"({
    "metadata": {"namespace": "team-a", "name": "w-0", "uid": "u1",
                 "creationTimestamp": "2026-12-01T10:00:00Z",
                 "labels": {"kueue.x-k8s.io/pod-group-name": "g"},
                 "annotations": {"kueue.x-k8s.io/pod-group-total-count": "4",
                                 "kueue.x-k8s.io/podset-required-topology": "topology.strata.dev/rack"}},
    "spec": {"schedulerName": "strata", "priority": 100,
             "nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"},
             "tolerations": [{"key": "kwok.x-k8s.io/node", "operator": "Exists", "effect": "NoSchedule"}],
             "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
               "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]}],
                                      "matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["n9"]}]}]}}},
             "initContainers": [{"name": "init", "resources": {"requests": {"cpu": "8", "memory": "1Gi"}}}],
             "containers": [
               {"name": "a", "resources": {"limits": {"nvidia.com/gpu": "2"}, "requests": {"cpu": "2", "memory": "4Gi"}}},
               {"name": "b", "resources": {"requests": {"cpu": "500m", "nvidia.com/gpu": "1"}}}],
             "overhead": {"cpu": "100m"}},
    "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False",
                                                   "message": "0/1 nodes are available"}]}})");
}

TEST(PodSpecTest, RequestsAsKubeSchedulerCountsThem) {
  Result<PodSpec> pod = PodFromKube(Pod());
  ASSERT_TRUE(pod) << pod.error().ToString();
  // containers 2 + 0.5 = 2.5 CPUs; the init container's 8 is larger; plus 100m overhead.
  EXPECT_EQ(pod->pod_set.cpu_milli, 8100);
  EXPECT_EQ(pod->pod_set.memory_bytes, 4LL << 30);
  EXPECT_EQ(pod->pod_set.gpu.count, 3);
  EXPECT_EQ(pod->priority, 100);
  EXPECT_EQ(pod->scheduler_name, "strata");
  EXPECT_TRUE(pod->Pending());
  EXPECT_FALSE(pod->HoldsCapacity());
  EXPECT_EQ(pod->scheduled_status, "False");
}

TEST(PodSpecTest, PlacementConstraintsGangAndTopology) {
  Result<PodSpec> pod = PodFromKube(Pod());
  ASSERT_TRUE(pod);
  EXPECT_EQ(pod->pod_set.node_selector.at("nvidia.com/gpu.product"), "NVIDIA-H100-80GB-HBM3");
  ASSERT_EQ(pod->pod_set.tolerations.size(), 1u);
  EXPECT_TRUE(pod->pod_set.tolerations[0].exists);
  ASSERT_EQ(pod->pod_set.affinity.size(), 1u);
  ASSERT_EQ(pod->pod_set.affinity[0].requirements.size(), 2u);
  EXPECT_EQ(pod->pod_set.affinity[0].requirements[0].key, "metadata.name");
  EXPECT_EQ(pod->pod_set.affinity[0].requirements[1].values, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(pod->gang.key, "kueue/g");
  EXPECT_EQ(pod->gang.size, 4);
  EXPECT_EQ(pod->topology.mode, scheduler::TopologyMode::kRequired);
  EXPECT_EQ(pod->topology.level, "topology.strata.dev/rack");
}

TEST(PodSpecTest, AGroupObjectItNamesSizesItsGang) {
  nlohmann::json object = Pod();
  object["metadata"]["labels"].erase("kueue.x-k8s.io/pod-group-name");
  object["metadata"]["annotations"]["scheduling.k8s.io/group-name"] = "vg";
  Result<PodSpec> pod = PodFromKube(object);
  ASSERT_TRUE(pod);
  EXPECT_EQ(pod->gang.key, "volcano/vg");
  EXPECT_EQ(pod->gang.source, GroupSource::kVolcanoPodGroup);
  EXPECT_EQ(pod->gang.group_name, "vg");
  EXPECT_EQ(pod->gang.size, 0);
  // The Workload API's field comes before any label or annotation.
  object["spec"]["schedulingGroup"] = {{"podGroupName", "trainer-0"}};
  pod = PodFromKube(object);
  ASSERT_TRUE(pod);
  EXPECT_EQ(pod->gang.key, "podgroup/trainer-0");
  EXPECT_EQ(pod->gang.source, GroupSource::kPodGroup);
  EXPECT_EQ(pod->gang.group_name, "trainer-0");
}

TEST(PodSpecTest, AJobsPodsAndAJobSetsReplicatedJobsAreGangsByTheirOwner) {
  nlohmann::json object = Pod();
  object["metadata"]["labels"].erase("kueue.x-k8s.io/pod-group-name");
  object["metadata"]["ownerReferences"] = nlohmann::json::parse(
      R"([{"apiVersion": "batch/v1", "kind": "Job", "name": "train-workers-0", "controller": true,
           "uid": "j1"}])");
  Result<PodSpec> pod = PodFromKube(object);
  ASSERT_TRUE(pod);
  EXPECT_EQ(pod->owner_job, "train-workers-0");
  EXPECT_EQ(pod->gang.key, "job/train-workers-0");
  EXPECT_EQ(pod->gang.source, GroupSource::kJob);
  object["metadata"]["labels"]["jobset.sigs.k8s.io/jobset-name"] = "train";
  object["metadata"]["labels"]["jobset.sigs.k8s.io/replicatedjob-name"] = "workers";
  object["metadata"]["annotations"]["jobset.sigs.k8s.io/replicatedjob-replicas"] = "4";
  pod = PodFromKube(object);
  ASSERT_TRUE(pod);
  EXPECT_EQ(pod->gang.key, "jobset/train/workers");
  EXPECT_EQ(pod->gang.source, GroupSource::kJobSet);
  EXPECT_EQ(pod->gang.size, 4);  // Jobs; each Job's parallelism multiplies it
  EXPECT_EQ(pod->gang.group_name, "train-workers-0");
}

TEST(PodSpecTest, HamiShareIsAFractionOfOneGpu) {
  nlohmann::json object = Pod();
  object["spec"].erase("initContainers");
  object["spec"]["containers"] = nlohmann::json::parse(
      R"([{"name": "a", "resources": {"limits": {"nvidia.com/gpu": "1", "nvidia.com/gpumem": "20000",
                                                 "nvidia.com/gpucores": "30"}}}])");
  Result<PodSpec> pod = PodFromKube(object);
  ASSERT_TRUE(pod) << pod.error().ToString();
  EXPECT_TRUE(pod->pod_set.gpu.IsShare());
  EXPECT_EQ(pod->pod_set.gpu.milli, 300);
  EXPECT_EQ(pod->pod_set.gpu.memory_mib, 20000);
  object["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = "2";
  pod = PodFromKube(object);
  ASSERT_FALSE(pod);
  EXPECT_NE(pod.error().message().find("pod team-a/w-0"), std::string::npos);
}

TEST(PodSpecTest, BadFieldsAreNamed) {
  nlohmann::json object = Pod();
  object["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "two";
  Result<PodSpec> pod = PodFromKube(object);
  ASSERT_FALSE(pod);
  EXPECT_NE(pod.error().message().find("spec.containers[0].resources.cpu"), std::string::npos)
      << pod.error().message();
  object = Pod();
  object["spec"]["tolerations"][0]["operator"] = "Maybe";
  pod = PodFromKube(object);
  ASSERT_FALSE(pod);
  EXPECT_NE(pod.error().message().find("spec.tolerations[0].operator"), std::string::npos);
  object = Pod();
  object["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        ["nodeSelectorTerms"][0]["matchExpressions"][0]["operator"] = "Near";
  pod = PodFromKube(object);
  ASSERT_FALSE(pod);
  EXPECT_NE(pod.error().message().find("nodeSelectorTerms[0].matchExpressions[0].operator"),
            std::string::npos);
}

TEST(PodSpecTest, TerminalAndBoundPods) {
  nlohmann::json object = Pod();
  object["spec"]["nodeName"] = "n1";
  object["status"]["phase"] = "Running";
  Result<PodSpec> pod = PodFromKube(object);
  ASSERT_TRUE(pod);
  EXPECT_TRUE(pod->HoldsCapacity());
  EXPECT_FALSE(pod->Pending());
  object["status"]["phase"] = "Succeeded";
  pod = PodFromKube(object);
  EXPECT_FALSE(pod->HoldsCapacity());
}

TEST(PodSpecTest, AGatedPodWaitsForNoScheduler) {
  nlohmann::json object = Pod();
  object["spec"]["schedulingGates"] =
      nlohmann::json::parse(R"([{"name": "kueue.x-k8s.io/admission"}])");
  Result<PodSpec> pod = PodFromKube(object);
  ASSERT_TRUE(pod);
  EXPECT_TRUE(pod->gated);
  EXPECT_FALSE(pod->Pending());
}

}  // namespace
}  // namespace strata::kubesched
