#include "kubesched/node_spec.h"

#include <gtest/gtest.h>

namespace strata::kubesched {
namespace {

nlohmann::json GpuNode() {
  return nlohmann::json::parse(R"({
    "metadata": {"name": "n1", "labels": {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
                                          "nvidia.com/gpu.memory": "81559",
                                          "topology.strata.dev/rack": "rack-0"}},
    "spec": {"taints": [{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}]},
    "status": {"allocatable": {"cpu": "127500m", "memory": "1Ti", "nvidia.com/gpu": "8",
                               "pods": "110"}}})");
}

TEST(NodeSpecTest, ReadsAllocatableLabelsTaintsAndGpus) {
  Result<scheduler::Node> node = NodeFromKube(GpuNode());
  ASSERT_TRUE(node) << node.error().ToString();
  EXPECT_EQ(node->name, "n1");
  EXPECT_EQ(node->cpu_milli, 127500);
  EXPECT_EQ(node->memory_bytes, int64_t{1} << 40);
  ASSERT_EQ(node->gpus.size(), 8u);
  EXPECT_EQ(node->gpus[0].model, "NVIDIA-H100-80GB-HBM3");
  EXPECT_EQ(node->gpus[0].memory_mib, 81559);
  ASSERT_EQ(node->taints.size(), 1u);
  EXPECT_EQ(node->taints[0].key, "node-role.kubernetes.io/control-plane");
  EXPECT_EQ(node->taints[0].value, "");
  EXPECT_EQ(node->labels.at("topology.strata.dev/rack"), "rack-0");
  EXPECT_EQ(node->labels.at(kNodeNameField), "n1");  // for matchFields
}

TEST(NodeSpecTest, TheInventoryAgentsAnnotationGivesIslandsAndMig) {
  nlohmann::json object = GpuNode();
  nlohmann::json gpus = nlohmann::json::array();
  for (int i = 0; i < 8; ++i) gpus.push_back({{"index", i}, {"nvlinkIsland", i / 4}});
  gpus[5]["migEnabled"] = true;
  object["metadata"]["annotations"][kNodeGpusAnnotation] = gpus.dump();
  Result<scheduler::Node> node = NodeFromKube(object);
  ASSERT_TRUE(node) << node.error().ToString();
  EXPECT_EQ(node->gpus[3].island, 0);
  EXPECT_EQ(node->gpus[4].island, 1);
  EXPECT_TRUE(node->gpus[5].mig_enabled);
  EXPECT_FALSE(node->gpus[4].mig_enabled);
  EXPECT_EQ(node->gpus[4].model, "NVIDIA-H100-80GB-HBM3");

  // Another count of devices (instances advertised under a MIG strategy), or no JSON: one island.
  gpus.erase(gpus.begin());
  object["metadata"]["annotations"][kNodeGpusAnnotation] = gpus.dump();
  node = NodeFromKube(object);
  ASSERT_TRUE(node);
  EXPECT_EQ(node->gpus[7].island, 0);
  object["metadata"]["annotations"][kNodeGpusAnnotation] = "not json";
  node = NodeFromKube(object);
  ASSERT_TRUE(node);
  EXPECT_EQ(node->gpus[7].island, 0);
}

TEST(NodeSpecTest, GpuLessAndUnschedulable) {
  nlohmann::json object = GpuNode();
  object["status"]["allocatable"].erase("nvidia.com/gpu");
  object["spec"]["unschedulable"] = true;
  Result<scheduler::Node> node = NodeFromKube(object);
  ASSERT_TRUE(node);
  EXPECT_TRUE(node->gpus.empty());
  EXPECT_TRUE(node->unschedulable);
}

TEST(NodeSpecTest, BadQuantityNamesTheField) {
  nlohmann::json object = GpuNode();
  object["status"]["allocatable"]["cpu"] = "lots";
  Result<scheduler::Node> node = NodeFromKube(object);
  ASSERT_FALSE(node);
  EXPECT_NE(node.error().message().find("node n1: status.allocatable.cpu"), std::string::npos)
      << node.error().message();
  object = GpuNode();
  object["spec"]["taints"][0]["effect"] = "Sometimes";
  node = NodeFromKube(object);
  ASSERT_FALSE(node);
  EXPECT_NE(node.error().message().find("spec.taints[0].effect"), std::string::npos);
}

}  // namespace
}  // namespace strata::kubesched
