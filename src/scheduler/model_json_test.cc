#include "scheduler/model_json.h"

#include <gtest/gtest.h>

#include "common/yaml_json.h"

namespace strata::scheduler {
namespace {

nlohmann::json Yaml(const char* text) {
  auto docs = ParseYamlDocuments(text);
  EXPECT_TRUE(docs) << docs.error().ToString();
  return (*docs)[0].value;
}

TEST(ModelJsonTest, DecodesNodeGroupsWithIslandsAndQuota) {
  auto cluster = DecodeCluster(Yaml(R"(
nodes:
  - {name: gpu, count: 2, cpu: 64, memory: 512Gi, gpus: {count: 8, model: H100-80GB, memory: 80Gi, islands: 2}}
flavors: [{name: h100}]
queues:
  - {name: a, cohort: c, quota: [{flavor: h100, resources: {nvidia.com/gpu: {nominal: 1500m, lendingLimit: 1}}}]}
)"),
                               "cluster");
  ASSERT_TRUE(cluster) << cluster.error().ToString();
  ASSERT_EQ(cluster->nodes.size(), 2u);
  EXPECT_EQ(cluster->nodes[1].name, "gpu-1");
  EXPECT_EQ(cluster->nodes[0].gpus[3].island, 0);
  EXPECT_EQ(cluster->nodes[0].gpus[4].island, 1);
  EXPECT_EQ(cluster->nodes[0].gpus[0].memory_mib, 80 * 1024);
  const auto& quota = cluster->queues[0].flavors[0].resources[0];
  ASSERT_TRUE(quota.has_value());
  EXPECT_EQ(quota->nominal, 1500);
  EXPECT_EQ(quota->lending_limit, 1000);
}

TEST(ModelJsonTest, ErrorsNameTheField) {
  auto unknown =
      DecodeCluster(Yaml("nodes: [{name: n, gpus: {count: 8, colour: red}}]"), "cluster");
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().message(), "cluster.nodes[0].gpus.colour: unknown field");

  auto bad_quantity = DecodeCluster(Yaml("nodes: [{name: n, memory: 24GiB}]"), "cluster");
  ASSERT_FALSE(bad_quantity);
  EXPECT_NE(bad_quantity.error().message().find("cluster.nodes[0].memory"), std::string::npos);

  auto flavor = DecodeCluster(Yaml("queues: [{name: q, quota: [{flavor: nope}]}]"), "cluster");
  ASSERT_FALSE(flavor);
  EXPECT_EQ(flavor.error().message(), "cluster.queues[0].quota[0].flavor: unknown flavor \"nope\"");

  auto mig = DecodeWorkload(Yaml("{name: w, podSets: [{gpu: {mig: 9g.99gb}}]}"), "w", TimePoint{});
  ASSERT_FALSE(mig);
  EXPECT_EQ(mig.error().message(), "w.podSets[0].gpu.mig: unknown MIG profile \"9g.99gb\"");

  auto both =
      DecodeWorkload(Yaml("{name: w, podSets: [{gpu: {count: 1, milli: 500}}]}"), "w", TimePoint{});
  ASSERT_FALSE(both);
  EXPECT_NE(both.error().message().find("w.podSets[0].gpu: ask for whole GPUs"), std::string::npos);

  auto no_pods = DecodeWorkload(Yaml("{name: w}"), "w", TimePoint{});
  ASSERT_FALSE(no_pods);
  EXPECT_EQ(no_pods.error().message(), "w.podSets: required");

  auto misspelt = DecodeWorkload(Yaml("{name: w, podSets: [{cuont: 2}]}"), "w", TimePoint{});
  ASSERT_FALSE(misspelt);
  EXPECT_EQ(misspelt.error().message(),
            "w.podSets[0].cuont: unknown field; did you mean \"count\"?");

  auto too_many = DecodeCluster(Yaml("nodes: [{name: n, gpus: {count: 65}}]"), "cluster");
  ASSERT_FALSE(too_many);
  EXPECT_EQ(too_many.error().message(),
            "cluster.nodes[0].gpus.count: must be an integer from 0 to 64");

  auto mode = DecodeWorkload(Yaml("{name: w, topology: {level: rack, mode: Sometimes}, "
                                  "podSets: [{count: 1}]}"),
                             "w", TimePoint{});
  ASSERT_FALSE(mode);
  EXPECT_EQ(mode.error().message(), "w.topology.mode: must be \"Required\" or \"Preferred\"");
}

}  // namespace
}  // namespace strata::scheduler
