#include "gateway/config.h"

#include <gtest/gtest.h>

#include <string>

namespace strata::gateway {
namespace {

constexpr char kValid[] = R"(
policy: least-request
scrapeIntervalMs: 50
threads: 2
limits: {maxBodyBytes: 1000, retries: 1, maxQueueWaitMs: 250}
models:
- name: llama
  adapters: [sql-lora]
  tenants: [team-a]
  versions:
  - {name: v1, weight: 90, endpoints: ["127.0.0.1:8001", "127.0.0.1:8002"]}
  - {name: v2, weight: 10, endpoints: ["localhost:8003"]}
tenants:
- {name: team-a, keys: [sk-a, sk-a2], tokensPerMinute: 1000, priority: critical}
- {name: team-b, keys: [sk-b]}
)";

std::string ErrorOf(std::string_view text) {
  auto config = ParseGatewayConfig(text);
  EXPECT_FALSE(config.has_value());
  return config ? "" : config.error().message();
}

TEST(GatewayConfigTest, ParsesEveryField) {
  auto config = ParseGatewayConfig(kValid);
  ASSERT_TRUE(config.has_value()) << config.error().ToString();
  EXPECT_EQ(config->picker.policy, "least-request");
  EXPECT_EQ(config->scrape_interval, std::chrono::milliseconds(50));
  EXPECT_EQ(config->threads, 2);
  EXPECT_EQ(config->limits.max_body_bytes, 1000u);
  EXPECT_EQ(config->limits.retries, 1);
  EXPECT_EQ(config->limits.max_queue_wait, std::chrono::milliseconds(250));
  ASSERT_EQ(config->models.size(), 1u);
  const ModelConfig& model = config->models[0];
  EXPECT_EQ(model.adapters, std::vector<std::string>{"sql-lora"});
  EXPECT_EQ(model.tenants, std::vector<std::string>{"team-a"});
  ASSERT_EQ(model.versions.size(), 2u);
  EXPECT_EQ(model.versions[0].weight, 90);
  EXPECT_EQ(model.versions[0].endpoints.size(), 2u);
  ASSERT_EQ(config->tenants.size(), 2u);
  EXPECT_EQ(config->tenants[0].priority, PriorityClass::kCritical);
  EXPECT_EQ(config->tenants[0].tokens_per_minute, 1000);
  EXPECT_EQ(config->tenants[1].priority, PriorityClass::kStandard);
  EXPECT_EQ(config->tenants[1].tokens_per_minute, 0);
}

TEST(GatewayConfigTest, ScorersAndTheirWeightsReplaceThePresets) {
  auto config = ParseGatewayConfig(
      "policy: epp-default\n"
      "scorers: [{name: prefix, weight: 5}, {name: load}]\n"
      "tieBreak: least-loaded\n"
      "models: [{name: m, versions: [{name: v, endpoints: [\"h:1\"]}]}]\n");
  ASSERT_TRUE(config.has_value()) << config.error().ToString();
  EXPECT_EQ(config->picker.scorers, (std::vector<WeightedScorer>{{"prefix", 5.0}, {"load", 1.0}}));
  EXPECT_TRUE(config->picker.ties_to_least_loaded);
  Result<PickerProfile> profile = ResolvePickerProfile(config->picker);
  ASSERT_TRUE(profile.has_value());
  EXPECT_EQ(profile->scorers.size(), 2u);
  const std::string models = "models: [{name: m, versions: [{name: v, endpoints: [\"h:1\"]}]}]\n";
  EXPECT_EQ(ErrorOf("scorers: [{name: fastest}]\n" + models).substr(0, 35),
            "scorers[0].name: unknown scorer \"fa");
  EXPECT_EQ(ErrorOf("scorers: [{name: prefix, weight: -1}]\n" + models),
            "scorers[0].weight: must be a number >= 0");
  EXPECT_EQ(ErrorOf("scorers: [{name: prefix, wieght: 2}]\n" + models),
            "scorers[0].wieght: unknown field; did you mean \"weight\"?");
  EXPECT_EQ(ErrorOf("tieBreak: least-loaded\n" + models), "tieBreak: only with scorers");
}

TEST(GatewayConfigTest, ErrorsNameTheFieldPath) {
  EXPECT_EQ(ErrorOf("policy: strata\n"), "models: required");
  EXPECT_EQ(ErrorOf("modles: []\n"), "modles: unknown field; did you mean \"models\"?");
  EXPECT_EQ(ErrorOf("policy: fast\nmodels: []\n").substr(0, 30), "policy: unknown picker policy ");
  EXPECT_EQ(
      ErrorOf(R"(models: [{name: m, versions: [{name: v, weight: -1, endpoints: ["h:1"]}]}])"),
      "models[0].versions[0].weight: must be a non-negative integer");
  EXPECT_EQ(ErrorOf(R"(models: [{name: m, versions: [{name: v, endpoints: ["h:0"]}]}])"),
            "models[0].versions[0].endpoints[0]: \"h:0\" has a bad port");
  EXPECT_EQ(ErrorOf(R"(models: [{name: m, versions: [{name: v, endpoints: []}]}])"),
            "models[0].versions[0].endpoints: must not be empty");
  EXPECT_EQ(ErrorOf(R"(models: [{name: m, versions: [{name: v, weight: 0, endpoints: ["h:1"]}]}])"),
            "models[0].versions: weights must not all be zero");
  EXPECT_EQ(
      ErrorOf(R"(models: [{name: m, adapters: [m], versions: [{name: v, endpoints: ["h:1"]}]}])"),
      "models[0].adapters[0]: \"m\" is served twice");
  EXPECT_EQ(ErrorOf(R"(
models: [{name: m, versions: [{name: v, endpoints: ["h:1"]}]}]
tenants: [{name: a, keys: [k]}, {name: b, keys: [k], priority: urgent}]
)"),
            "tenants[1].priority: must be \"critical\", \"standard\" or \"sheddable\"");
  EXPECT_EQ(ErrorOf(R"(
models: [{name: m, versions: [{name: v, endpoints: ["h:1"]}]}]
tenants: [{name: a, keys: [k]}, {name: b, keys: [k]}]
)"),
            "tenants[1].keys[0]: key used twice");
  EXPECT_EQ(ErrorOf("limits: {readTimeoutMs: 0}\nmodels: []\n"),
            "limits.readTimeoutMs: must be an integer >= 1");
}

TEST(GatewayConfigTest, ParsesActivationAndObjective) {
  auto config = ParseGatewayConfig(R"(
limits: {activationTimeoutMs: 3000}
models: [{name: m, ttftObjectiveMs: 500, versions: [{name: v, endpoints: ["h:1"]}]}]
)");
  ASSERT_TRUE(config.has_value()) << config.error().ToString();
  EXPECT_EQ(config->limits.activation_timeout, std::chrono::seconds(3));
  EXPECT_EQ(config->models[0].ttft_objective, std::chrono::milliseconds(500));
  EXPECT_EQ(
      ErrorOf(
          R"(models: [{name: m, ttftObjectiveMs: 0, versions: [{name: v, endpoints: ["h:1"]}]}])"),
      "models[0].ttftObjectiveMs: must be an integer >= 1");
}

TEST(GatewayConfigTest, ParsesRequestObjectivesByClass) {
  auto config = ParseGatewayConfig(R"(
models:
- name: m
  objectives: {realtime: critical, batch: sheddable}
  versions: [{name: v, endpoints: ["h:1"]}]
)");
  ASSERT_TRUE(config.has_value()) << config.error().ToString();
  EXPECT_EQ(config->models[0].objectives.size(), 2u);
  EXPECT_EQ(config->models[0].objectives.at("realtime"), PriorityClass::kCritical);
  EXPECT_EQ(config->models[0].objectives.at("batch"), PriorityClass::kSheddable);
  EXPECT_EQ(
      ErrorOf(
          R"(models: [{name: m, objectives: {batch: low}, versions: [{name: v, endpoints: ["h:1"]}]}])"),
      "models[0].objectives.batch: must be \"critical\", \"standard\" or \"sheddable\"");
  // GAIE's integer priorities: negative sheddable, 0 standard, positive critical.
  EXPECT_EQ(PriorityClassOfObjective(-5), PriorityClass::kSheddable);
  EXPECT_EQ(PriorityClassOfObjective(0), PriorityClass::kStandard);
  EXPECT_EQ(PriorityClassOfObjective(1), PriorityClass::kCritical);
}

TEST(GatewayConfigTest, ValidateModelsAllowsAVersionWithNoEndpoint) {
  ModelConfig model;
  model.name = "m";
  model.versions.push_back(VersionConfig{"v1", 1, {}});
  EXPECT_TRUE(ValidateModels({model}).ok());
  model.versions.push_back(VersionConfig{"v2", -1, {}});
  EXPECT_EQ(ValidateModels({model}).message(),
            "models[0].versions[1].weight: must be a non-negative integer");
  model.versions[1] = VersionConfig{"", 1, {}};
  EXPECT_EQ(ValidateModels({model}).message(),
            "models[0].versions[1].name: must be a non-empty string");
  ModelConfig unnamed;
  unnamed.versions.push_back(VersionConfig{"v1", 1, {}});
  EXPECT_EQ(ValidateModels({unnamed}).message(), "models[0].name: must be a non-empty string");
  model.versions.clear();
  EXPECT_EQ(ValidateModels({model}).message(), "models[0].versions: must be a non-empty list");
}

TEST(GatewayConfigTest, ModelsFromTheServicesLeaveTheFileWithoutModels) {
  // strata up's --gateway-config: tenants, limits and policy only.
  auto config = ParseGatewayConfig("tenants: [{name: t, keys: [sk-t]}]\n", ModelSource::kServices);
  ASSERT_TRUE(config.has_value()) << config.error().ToString();
  EXPECT_TRUE(config->models.empty());
  ASSERT_EQ(config->tenants.size(), 1u);
  EXPECT_TRUE(ParseGatewayConfig("models: []\n", ModelSource::kServices).has_value());
  auto listed = ParseGatewayConfig(
      R"(models: [{name: m, versions: [{name: v, endpoints: ["h:1"]}]}])", ModelSource::kServices);
  ASSERT_FALSE(listed.has_value());
  EXPECT_EQ(listed.error().message(),
            "models: must be empty; under strata up the gateway serves the Services' models");
  // strata gateway's file still needs them.
  EXPECT_EQ(ErrorOf("tenants: [{name: t, keys: [sk-t]}]\n"), "models: required");
}

TEST(GatewayConfigTest, MissingFileIsNotFound) {
  auto config = LoadGatewayConfig("/nonexistent/gateway.yaml");
  ASSERT_FALSE(config.has_value());
  EXPECT_EQ(config.error().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace strata::gateway
