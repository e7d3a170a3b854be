#include "kubecompat/inference_pool_routes.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace strata::kubecompat {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

json PoolObject(const std::string& name, json match_labels,
                json ports = json::parse(R"([{"number": 8000}])")) {
  return {{"apiVersion", "inference.networking.k8s.io/v1"},
          {"kind", "InferencePool"},
          {"metadata", {{"name", name}, {"namespace", "team-a"}, {"uid", "u-" + name}}},
          {"spec",
           {{"selector", {{"matchLabels", std::move(match_labels)}}},
            {"targetPorts", std::move(ports)},
            {"endpointPickerRef", {{"name", "epp"}, {"port", {{"number", 9002}}}}}}}};
}

// A v1 Pod as the API server returns it: Running and Ready at `ip` unless told otherwise.
json PodObject(const std::string& name, const std::string& ip, std::vector<std::string> command,
               bool ready = true) {
  return {{"metadata", {{"name", name}, {"namespace", "team-a"}}},
          {"spec", {{"containers", {{{"name", "engine"}, {"command", std::move(command)}}}}}},
          {"status",
           {{"phase", "Running"},
            {"podIP", ip},
            {"conditions", {{{"type", "Ready"}, {"status", ready ? "True" : "False"}}}}}}};
}

const std::vector<std::string> kServesChat = {"vllm", "serve", "org/chat", "--port", "8000"};

InferencePool Pool(const std::string& name) {
  Result<InferencePool> pool = ReadInferencePool(PoolObject(name, {{"app", name}}));
  EXPECT_TRUE(pool.has_value());
  return pool.value_or(InferencePool{});
}

TEST(ReadInferencePoolTest, ReadsSelectorAndPort) {
  Result<InferencePool> pool =
      ReadInferencePool(PoolObject("chat", {{"app", "vllm"}, {"tier", "a"}}));
  ASSERT_TRUE(pool.has_value()) << pool.error().message();
  EXPECT_EQ(pool->namespace_name, "team-a");
  EXPECT_EQ(pool->name, "chat");
  EXPECT_EQ(pool->target_port, 8000);
  EXPECT_EQ(pool->LabelSelector(), "app=vllm,tier=a");
}

TEST(ReadInferencePoolTest, RefusesAPoolOfEveryPodOrWithoutOnePort) {
  EXPECT_THAT(ReadInferencePool(PoolObject("p", json::object())).error().message(),
              HasSubstr("InferencePool team-a/p: spec.selector.matchLabels"));
  EXPECT_THAT(ReadInferencePool(PoolObject("p", {{"app", "x"}}, json::array())).error().message(),
              HasSubstr("spec.targetPorts"));
  EXPECT_THAT(ReadInferencePool(PoolObject("p", {{"app", "x"}}, json::parse(R"([{"number": 0}])")))
                  .error()
                  .message(),
              HasSubstr("spec.targetPorts[0].number"));
}

TEST(ReadInferenceObjectiveTest, ReadsPriorityAndPoolAndRefusesOtherKinds) {
  json objective = {{"metadata", {{"name", "batch"}, {"namespace", "team-a"}}},
                    {"spec", {{"priority", -1}, {"poolRef", {{"name", "chat"}}}}}};
  Result<InferenceObjective> read = ReadInferenceObjective(objective);
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->priority, -1);
  EXPECT_EQ(read->pool_name, "chat");
  objective["spec"]["poolRef"]["kind"] = "Service";
  EXPECT_THAT(ReadInferenceObjective(objective).error().message(), HasSubstr("spec.poolRef"));
}

TEST(PoolEndpointTest, OnlyARunningReadyPodWithAnIpThatIsNotBeingDeleted) {
  EXPECT_EQ(PoolEndpoint(PodObject("a", "10.0.0.7", kServesChat), 8000), "10.0.0.7:8000");
  EXPECT_EQ(PoolEndpoint(PodObject("a", "fd00::7", kServesChat), 8000), "[fd00::7]:8000");
  EXPECT_EQ(PoolEndpoint(PodObject("a", "10.0.0.7", kServesChat, false), 8000), "");
  EXPECT_EQ(PoolEndpoint(PodObject("a", "", kServesChat), 8000), "");
  json pending = PodObject("a", "10.0.0.7", kServesChat);
  pending["status"]["phase"] = "Pending";
  EXPECT_EQ(PoolEndpoint(pending, 8000), "");
  json deleting = PodObject("a", "10.0.0.7", kServesChat);
  deleting["metadata"]["deletionTimestamp"] = "2026-12-06T07:00:00Z";
  EXPECT_EQ(PoolEndpoint(deleting, 8000), "");
}

TEST(PodModelNamesTest, FromTheFirstContainerThatServesAModel) {
  json pod = PodObject("a", "10.0.0.7", {"sh", "-c", "sleep 1"});
  pod["spec"]["containers"].push_back({{"name", "engine"},
                                       {"command", {"/usr/bin/strata", "engine-sim"}},
                                       {"args", {"--model", "tiny", "--port", "8000"}}});
  EXPECT_THAT(PodModelNames(pod), ElementsAre("tiny"));
  EXPECT_THAT(PodModelNames(PodObject("a", "", {"python", "app.py"})), IsEmpty());
}

TEST(RoutesFromPoolsTest, ReadyPodsOfEachModelAreItsEndpoints) {
  std::vector<PoolMembers> pools = {
      {Pool("chat"),
       {PodObject("a", "10.0.0.1", kServesChat), PodObject("b", "10.0.0.2", kServesChat),
        PodObject("c", "10.0.0.3", kServesChat, /*ready=*/false)}}};
  std::vector<gateway::ModelConfig> routes = RoutesFromPools(pools, {});
  ASSERT_EQ(routes.size(), 1u);
  EXPECT_EQ(routes[0].name, "org/chat");
  ASSERT_EQ(routes[0].versions.size(), 1u);
  EXPECT_EQ(routes[0].versions[0].name, "chat");
  EXPECT_THAT(routes[0].versions[0].endpoints, ElementsAre("10.0.0.1:8000", "10.0.0.2:8000"));
  EXPECT_TRUE(gateway::ValidateModels(routes).ok());
}

TEST(RoutesFromPoolsTest, APoolWithoutNamedModelsServesItsOwnNameAndHoldsWithoutPods) {
  std::vector<PoolMembers> pools = {{Pool("plain"), {PodObject("a", "10.0.0.1", {"server"})}},
                                    {Pool("empty"), {}}};
  std::vector<gateway::ModelConfig> routes = RoutesFromPools(pools, {});
  ASSERT_EQ(routes.size(), 2u);
  EXPECT_EQ(routes[0].name, "empty");
  EXPECT_THAT(routes[0].versions[0].endpoints, IsEmpty());
  EXPECT_EQ(routes[1].name, "plain");
  EXPECT_THAT(routes[1].versions[0].endpoints, ElementsAre("10.0.0.1:8000"));
  EXPECT_TRUE(gateway::ValidateModels(routes).ok());
}

TEST(RoutesFromPoolsTest, TheFirstPoolKeepsAModelTwoServeAndObjectivesFollowTheirPool) {
  std::vector<PoolMembers> pools = {{Pool("second"), {PodObject("b", "10.0.0.2", kServesChat)}},
                                    {Pool("first"), {PodObject("a", "10.0.0.1", kServesChat)}}};
  std::vector<InferenceObjective> objectives = {{"team-a", "batch", -5, "first"},
                                                {"team-a", "vip", 3, "second"},
                                                {"team-b", "other", 3, "first"}};
  std::vector<std::string> conflicts;
  std::vector<gateway::ModelConfig> routes = RoutesFromPools(pools, objectives, &conflicts);
  ASSERT_EQ(routes.size(), 1u);
  EXPECT_EQ(routes[0].versions[0].name, "first");
  EXPECT_THAT(routes[0].versions[0].endpoints, ElementsAre("10.0.0.1:8000"));
  ASSERT_EQ(routes[0].objectives.size(), 1u);
  EXPECT_EQ(routes[0].objectives.at("batch"), gateway::PriorityClass::kSheddable);
  EXPECT_THAT(conflicts, ElementsAre("org/chat"));
}

TEST(InferencePoolRulesTest, ReadsPoolsAndObjectivesOnly) {
  std::vector<json> rules = InferencePoolRules();
  ASSERT_EQ(rules.size(), 2u);
  EXPECT_EQ(rules[0]["apiGroups"][0], "inference.networking.k8s.io");
  EXPECT_EQ(rules[0]["resources"][0], "inferencepools");
  EXPECT_EQ(rules[1]["resources"][0], "inferenceobjectives");
  for (const json& rule : rules) EXPECT_EQ(rule["verbs"], json({"get", "list", "watch"}));
}

}  // namespace
}  // namespace strata::kubecompat
