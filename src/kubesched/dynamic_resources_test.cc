#include "kubesched/dynamic_resources.h"

#include <gtest/gtest.h>

namespace strata::kubesched {
namespace {

using nlohmann::json;

// A node-local slice of `gpus` H100s of 80Gi in two NVLink islands (the first half in island 0).
json Slice(const std::string& node, int gpus, int64_t generation = 1) {
  json devices = json::array();
  for (int g = 0; g < gpus; ++g) {
    devices.push_back({{"name", "gpu-" + std::to_string(g)},
                       {"attributes",
                        {{"type", {{"string", "gpu"}}},
                         {"productName", {{"string", "NVIDIA H100 80GB HBM3"}}},
                         {"gpu.strata.dev/nvlinkIsland", {{"int", g < gpus / 2 ? 0 : 1}}}}},
                       {"capacity", {{"memory", {{"value", "80Gi"}}}}}});
  }
  return {{"metadata", {{"name", node + "-gpus"}}},
          {"spec",
           {{"driver", "gpu.nvidia.com"},
            {"nodeName", node},
            {"pool", {{"name", node}, {"generation", generation}, {"resourceSliceCount", 1}}},
            {"devices", devices}}}};
}

json Claim(const std::string& name, int count, const std::string& match_attribute = "") {
  json claim = {
      {"metadata", {{"namespace", "ml"}, {"name", name}, {"resourceVersion", "7"}}},
      {"spec",
       {{"devices",
         {{"requests",
           {{{"name", "gpus"},
             {"exactly",
              {{"deviceClassName", "gpu.nvidia.com"},
               {"count", count},
               {"selectors",
                {{{"cel",
                   {{"expression",
                     "device.capacity[\"gpu.nvidia.com\"].memory.compareTo(quantity(\"40Gi\")) "
                     ">= 0"}}}}}}}}}}}}}}}};
  if (!match_attribute.empty())
    claim["spec"]["devices"]["constraints"] = {{{"matchAttribute", match_attribute}}};
  return claim;
}

DraObjects Objects() {
  DraObjects objects;
  objects.slices["a-gpus"] = Slice("a", 4);
  objects.slices["b-gpus"] = Slice("b", 4);
  objects.classes["gpu.nvidia.com"] = {
      {"metadata", {{"name", "gpu.nvidia.com"}}},
      {"spec",
       {{"selectors", {{{"cel", {{"expression", "device.driver == \"gpu.nvidia.com\""}}}}}}}}};
  return objects;
}

TEST(DynamicResourcesTest, ANodesSlicesAreItsGpus) {
  DraObjects objects = Objects();
  DraCluster dra(objects, "gpu.nvidia.com");
  const std::vector<DraDevice>* gpus = dra.GpusOf("a");
  ASSERT_NE(gpus, nullptr);
  ASSERT_EQ(gpus->size(), 4u);
  scheduler::Gpu gpu = dra.AsGpu((*gpus)[3]);
  EXPECT_EQ(gpu.model, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(gpu.memory_mib, 80 * 1024);
  EXPECT_EQ(gpu.island, 1);
  EXPECT_EQ(dra.NodeOfDevice("gpu.nvidia.com/b/gpu-2"), "b");
  EXPECT_EQ(dra.GpusOf("c"), nullptr);
  // Another driver's devices are not GPUs; an older generation of a pool is being replaced.
  objects.slices["a-old"] = Slice("a", 8, 0);
  objects.slices["a-old"]["metadata"]["name"] = "a-old";
  EXPECT_EQ(DraCluster(objects, "gpu.nvidia.com").GpusOf("a")->size(), 4u);
  EXPECT_EQ(DraCluster(objects, "gpu.example.com").GpusOf("a"), nullptr);
}

TEST(DynamicResourcesTest,
     AClaimTakesFreeMatchingDevicesInOneIslandAndIsWrittenAsKubeSchedulerWritesIt) {
  DraObjects objects = Objects();
  objects.claims["ml/two"] = Claim("two", 2, "gpu.strata.dev/nvlinkIsland");
  // gpu-0 of node a is another claim's.
  objects.claims["ml/other"] = Claim("other", 1);
  objects.claims["ml/other"]["status"]["allocation"]["devices"]["results"] = {
      {{"request", "gpus"}, {"driver", "gpu.nvidia.com"}, {"pool", "a"}, {"device", "gpu-0"}}};
  DraCluster dra(objects, "gpu.nvidia.com");
  PodClaims claims = dra.Resolve("ml", "uid-1", {{"gpus", "two"}});
  ASSERT_EQ(claims.why, "");
  EXPECT_EQ(claims.to_allocate, 2);
  std::set<std::string> used;
  // The scheduler chose gpu-1 and gpu-2 (two islands): the island constraint moves it.
  Result<std::vector<int>> taken = dra.Allocate(claims, "a", {1, 2}, &used);
  ASSERT_TRUE(taken) << taken.error().ToString();
  EXPECT_EQ(*taken, (std::vector<int>{2, 3}));  // island 1: island 0 has only gpu-1 free
  EXPECT_EQ(used.size(), 2u);
  // Nothing left for another claim of two in one island on node a.
  EXPECT_FALSE(dra.Allocate(claims, "a", {}, &used));
  std::vector<ClaimWrite> writes = dra.Writes(claims, "a", *taken, "pod-1", "uid-1");
  ASSERT_EQ(writes.size(), 1u);
  EXPECT_TRUE(writes[0].add_finalizer);
  const json& status = writes[0].claim["status"];
  EXPECT_EQ(status["allocation"]["devices"]["results"][1]["device"], "gpu-3");
  EXPECT_EQ(status["allocation"]["devices"]["results"][1]["pool"], "a");
  EXPECT_EQ(
      status["allocation"]["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0]["values"],
      json({"a"}));
  EXPECT_EQ(status["reservedFor"],
            json::parse(R"([{"resource": "pods", "name": "pod-1", "uid": "uid-1"}])"));
  EXPECT_EQ(writes[0].claim["metadata"]["resourceVersion"], "7");  // the write's precondition
}

TEST(DynamicResourcesTest, AnAllocatedClaimBindsItsPodToItsNode) {
  DraObjects objects = Objects();
  objects.claims["ml/shared"] = Claim("shared", 1);
  objects.claims["ml/shared"]["status"] = json::parse(R"({
      "allocation": {"devices": {"results": [{"request": "gpus", "driver": "gpu.nvidia.com",
                                               "pool": "b", "device": "gpu-1"}]}},
      "reservedFor": [{"resource": "pods", "name": "pod-1", "uid": "uid-1"}]})");
  DraCluster dra(objects, "gpu.nvidia.com");
  PodClaims claims = dra.Resolve("ml", "uid-2", {{"gpu", "shared"}});
  EXPECT_EQ(claims.why, "");
  EXPECT_EQ(claims.node, "b");
  EXPECT_EQ(claims.to_allocate, 0);
  std::vector<ClaimWrite> writes = dra.Writes(claims, "b", {}, "pod-2", "uid-2");
  ASSERT_EQ(writes.size(), 1u);  // only the reservation
  EXPECT_FALSE(writes[0].add_finalizer);
  EXPECT_EQ(writes[0].claim["status"]["reservedFor"].size(), 2u);
  EXPECT_EQ(dra.Resolve("ml", "uid-1", {{"gpu", "shared"}}).claims[0].reserved, true);
}

TEST(DynamicResourcesTest, WhatStrataCannotAllocateIsNamed) {
  DraObjects objects = Objects();
  json first = Claim("first", 1);
  first["spec"]["devices"]["requests"][0].erase("exactly");
  first["spec"]["devices"]["requests"][0]["firstAvailable"] = json::array();
  objects.claims["ml/first"] = first;
  json all = Claim("all", 1);
  all["spec"]["devices"]["requests"][0]["exactly"]["allocationMode"] = "All";
  objects.claims["ml/all"] = all;
  json bad = Claim("bad", 1);
  bad["spec"]["devices"]["requests"][0]["exactly"]["selectors"][0]["cel"]["expression"] = "size(x)";
  objects.claims["ml/bad"] = bad;
  DraCluster dra(objects, "gpu.nvidia.com");
  EXPECT_NE(dra.Resolve("ml", "u", {{"c", "first"}}).why.find("firstAvailable"), std::string::npos);
  EXPECT_NE(dra.Resolve("ml", "u", {{"c", "all"}}).why.find("allocationMode"), std::string::npos);
  std::string why = dra.Resolve("ml", "u", {{"c", "bad"}}).why;
  EXPECT_NE(why.find("spec.devices.requests[0].exactly.selectors[0].cel.expression"),
            std::string::npos)
      << why;
  EXPECT_EQ(dra.Resolve("ml", "u", {{"c", "missing"}}).why,
            "ResourceClaim ml/missing does not exist");
  EXPECT_NE(dra.Resolve("ml", "u", {{"c", ""}}).why.find("to be made"), std::string::npos);
}

TEST(DynamicResourcesTest, APodsClaimsAreNamedAsItsStatusNamesTemplates) {
  json pod = json::parse(R"({
    "spec": {"resourceClaims": [{"name": "gpus", "resourceClaimTemplateName": "two-gpus"},
                                {"name": "shared", "resourceClaimName": "team-gpu"}]},
    "status": {"resourceClaimStatuses": [{"name": "gpus", "resourceClaimName": "p-gpus-x7k"}]}})");
  std::vector<PodClaimRef> refs = PodClaimRefs(pod);
  ASSERT_EQ(refs.size(), 2u);
  EXPECT_EQ(refs[0], (PodClaimRef{"gpus", "p-gpus-x7k"}));
  EXPECT_EQ(refs[1], (PodClaimRef{"shared", "team-gpu"}));
}

}  // namespace
}  // namespace strata::kubesched
