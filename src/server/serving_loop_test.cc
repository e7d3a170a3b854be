#include "server/serving_loop.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/manifest.h"
#include "api/pod_contract.h"
#include "autoscaler/windowed_policy.h"

namespace strata::server {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

cluster::Stored<api::Service> StoredService(const std::string& yaml) {
  Result<std::vector<api::Object>> objects = api::DecodeManifests({{"svc.yaml", yaml}});
  EXPECT_TRUE(objects.has_value()) << objects.error().ToString();
  cluster::Stored<api::Service> out;
  out.value = *objects->front().As<api::Service>();
  out.value.metadata.namespace_name = "default";
  return out;
}

constexpr char kSplit[] = R"(
apiVersion: strata.dev/v1alpha1
kind: Service
metadata: {name: chat}
spec:
  model: llama
  tenants: [team-a]
  versions: [{name: bf16, weight: 90}, {name: fp8, weight: 10}]
  engine: {command: [strata, engine-sim]}
  resources: {gpu: 1}
  minReplicas: 0
  maxReplicas: 3
  autoscaling: {metric: concurrency, target: 4, scaleToZeroAfter: 30s}
)";

// A replica pod of `version` with index `index`: its engine at port 9000+index, ready or not,
// draining or not.
cluster::Stored<api::Pod> ReplicaPod(const std::string& version, int index, bool ready,
                                     bool draining = false) {
  cluster::Stored<api::Pod> pod;
  api::Pod& p = pod.value;
  p.metadata.name = "chat-" + version + "-" + std::to_string(index);
  p.metadata.namespace_name = "default";
  p.spec.owner = {"Service", "chat", index, 0};
  p.spec.node_name = "n1";
  p.status.phase = api::PodPhase::kRunning;
  auto& a = p.metadata.annotations;
  a[api::kServiceVersionAnnotation] = version;
  a[api::kEndpointAnnotation] = "127.0.0.1:" + std::to_string(9000 + index);
  if (ready) a[api::kReadyAtAnnotation] = "2026-01-01T00:00:00Z";
  if (draining) a[api::kDrainingAnnotation] = "2026-01-01T00:01:00Z";
  return pod;
}

gateway::ModelConfig PoolModel(const std::string& name, std::vector<std::string> adapters = {}) {
  gateway::ModelConfig model;
  model.name = name;
  model.adapters = std::move(adapters);
  model.versions.push_back({"pool", 1, {"127.0.100.2:8000"}});
  return model;
}

TEST(MergeRoutesTest, AServicesModelWinsOverAnotherSourcesOfTheSameName) {
  std::vector<gateway::ModelConfig> services =
      RoutesFromStore({StoredService(kSplit)}, {ReplicaPod("bf16", 0, true)});
  std::vector<std::string> shadowed;
  std::vector<gateway::ModelConfig> merged = MergeRoutes(
      services, {PoolModel("llama"), PoolModel("tiny-pool"), PoolModel("other", {"llama"})},
      &shadowed);
  ASSERT_EQ(merged.size(), 2u);
  EXPECT_EQ(merged[0], services[0]);
  EXPECT_EQ(merged[1].name, "tiny-pool");
  EXPECT_THAT(shadowed, ElementsAre("llama", "other"));
  EXPECT_TRUE(gateway::ValidateModels(merged).ok());
}

TEST(RoutesFromStoreTest, ReadyReplicasOfEachVersionWithTheirWeights) {
  std::vector<cluster::Stored<api::Pod>> pods = {
      ReplicaPod("bf16", 0, true), ReplicaPod("bf16", 1, false), ReplicaPod("fp8", 2, true),
      ReplicaPod("bf16", 3, true, /*draining=*/true)};
  std::vector<gateway::ModelConfig> routes = RoutesFromStore({StoredService(kSplit)}, pods);
  ASSERT_EQ(routes.size(), 1u);
  EXPECT_EQ(routes[0].name, "llama");
  EXPECT_THAT(routes[0].tenants, ElementsAre("team-a"));
  ASSERT_EQ(routes[0].versions.size(), 2u);
  EXPECT_EQ(routes[0].versions[0].name, "bf16");
  EXPECT_EQ(routes[0].versions[0].weight, 90);
  EXPECT_THAT(routes[0].versions[0].endpoints, ElementsAre("127.0.0.1:9000"));
  EXPECT_EQ(routes[0].versions[1].weight, 10);
  EXPECT_THAT(routes[0].versions[1].endpoints, ElementsAre("127.0.0.1:9002"));
}

TEST(RoutesFromStoreTest, AServiceWithNoReplicaIsListedSoTheGatewayHoldsItsRequests) {
  std::vector<gateway::ModelConfig> routes = RoutesFromStore({StoredService(kSplit)}, {});
  ASSERT_EQ(routes.size(), 1u);
  ASSERT_EQ(routes[0].versions.size(), 2u);
  EXPECT_THAT(routes[0].versions[0].endpoints, IsEmpty());
}

TEST(RoutesFromStoreTest, ASecondServiceForTheSameModelIsLeftOut) {
  cluster::Stored<api::Service> first = StoredService(kSplit);
  cluster::Stored<api::Service> second = StoredService(kSplit);
  second.value.metadata.name = "other";
  EXPECT_EQ(RoutesFromStore({first, second}, {}).size(), 1u);
}

TEST(RoutesFromStoreTest, ObjectivesBecomeClassesByTheSignOfTheirPriority) {
  cluster::Stored<api::Service> service = StoredService(kSplit);
  service.value.spec.objectives = {{"realtime", 100}, {"default", 0}, {"batch", -1}};
  std::vector<gateway::ModelConfig> routes = RoutesFromStore({service}, {});
  ASSERT_EQ(routes.size(), 1u);
  EXPECT_EQ(routes[0].objectives.at("realtime"), gateway::PriorityClass::kCritical);
  EXPECT_EQ(routes[0].objectives.at("default"), gateway::PriorityClass::kStandard);
  EXPECT_EQ(routes[0].objectives.at("batch"), gateway::PriorityClass::kSheddable);
  EXPECT_EQ(routes[0].objectives.size(), 3u);
}

TEST(PolicyForServiceTest, MetricPicksThePolicy) {
  api::ServiceSpec spec = StoredService(kSplit).value.spec;
  Result<std::unique_ptr<autoscaler::ScalingPolicy>> windowed =
      PolicyForService(spec, std::chrono::seconds(30));
  ASSERT_TRUE(windowed.has_value()) << windowed.error().ToString();
  EXPECT_EQ((*windowed)->name(), "windowed");
  // The windowed policy looks one cold start ahead along the load's trend.
  EXPECT_EQ(static_cast<const autoscaler::WindowedPolicy&>(**windowed).options().forecast_horizon,
            std::chrono::seconds(30));
  EXPECT_TRUE(static_cast<const autoscaler::WindowedPolicy&>(**windowed).options().count_running);
  // The queue metric counts waiting requests only (vllm:num_requests_waiting).
  spec.autoscaling.metric = "queue";
  Result<std::unique_ptr<autoscaler::ScalingPolicy>> queue =
      PolicyForService(spec, std::chrono::seconds(30));
  ASSERT_TRUE(queue.has_value()) << queue.error().ToString();
  EXPECT_FALSE(static_cast<const autoscaler::WindowedPolicy&>(**queue).options().count_running);
  spec.autoscaling.metric = "rps";
  Result<std::unique_ptr<autoscaler::ScalingPolicy>> rate =
      PolicyForService(spec, std::chrono::seconds(30));
  ASSERT_TRUE(rate.has_value()) << rate.error().ToString();
  EXPECT_EQ((*rate)->name(), "strata");
}

TEST(PolicyForServiceTest, WindowedPolicyScalesFromZeroOnHeldRequests) {
  api::ServiceSpec spec = StoredService(kSplit).value.spec;
  auto policy = PolicyForService(spec, std::chrono::seconds(30));
  ASSERT_TRUE(policy.has_value());
  autoscaler::LoadSample held;
  held.gateway_queued = 3;
  held.arrivals_total = 3;
  autoscaler::Decision decision = (*policy)->Decide(held, TimePoint{} + std::chrono::seconds(1));
  EXPECT_EQ(decision.desired, 1);
}

// The spec's maxScaleDownRate bounds how far one decision lowers the count: from 3 ready
// replicas with no load left, the default 2 keeps 1 and a rate of 1.2 keeps 2.
TEST(PolicyForServiceTest, SpecScaleDownRateBoundsOneDecision) {
  auto after_load_leaves = [](double rate) {
    api::ServiceSpec spec = StoredService(kSplit).value.spec;
    spec.max_replicas = 8;
    spec.autoscaling.max_scale_down_rate = rate;
    auto policy = PolicyForService(spec, std::chrono::seconds(30));
    EXPECT_TRUE(policy.has_value());
    autoscaler::LoadSample idle;
    idle.ready_replicas = 3;
    idle.running = 1;
    idle.arrivals_total = 1;
    return (*policy)->Decide(idle, TimePoint{} + std::chrono::seconds(1)).desired;
  };
  EXPECT_EQ(after_load_leaves(2), 1);
  EXPECT_EQ(after_load_leaves(1.2), 2);
}

TEST(PolicyForServiceTest, BadWindowsAreNamed) {
  api::ServiceSpec spec = StoredService(kSplit).value.spec;
  spec.autoscaling.stable_window = Duration::zero();
  auto policy = PolicyForService(spec, std::chrono::seconds(30));
  ASSERT_FALSE(policy.has_value());
  EXPECT_THAT(policy.error().message(), ::testing::HasSubstr("spec.autoscaling"));
}

}  // namespace
}  // namespace strata::server
