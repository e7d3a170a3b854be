#include "controller/service_controller.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "api/manifest.h"
#include "controller/controller_test_support.h"
#include "controller/training_pod.h"

namespace strata::controller {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;

// The gateway's in-flight counts, set by the test.
class FakeTraffic final : public ReplicaTraffic {
 public:
  int64_t InFlight(const std::string& endpoint) const override {
    auto it = in_flight.find(endpoint);
    return it == in_flight.end() ? 0 : it->second;
  }
  std::map<std::string, int64_t> in_flight;
};

// An autoscaler that wants what the test says, and remembers what it was told.
class FakeScaler final : public ReplicaScaler {
 public:
  ScaleAdvice Advise(const api::Service& service, const api::ServiceVersion& version,
                     const VersionReplicas& replicas) override {
    seen[version.name] = replicas;
    auto it = wanted.find(version.name);
    return {it == wanted.end() ? 1 : it->second, "test wants it"};
  }
  std::map<std::string, int> wanted;
  std::map<std::string, VersionReplicas> seen;
};

constexpr char kService[] = R"(
apiVersion: strata.dev/v1alpha1
kind: Service
metadata: {name: llm, labels: {team: search}}
spec:
  model: llama
  engine: {command: [strata, engine-sim, --model, llama]}
  resources: {cpu: "4", memory: 16Gi, gpu: 2}
  tensorParallel: 2
  minReplicas: 0
  maxReplicas: 4
  autoscaling: {scaleToZeroAfter: 60s}
)";

class ServiceControllerTest : public ::testing::Test {
 protected:
  ServiceControllerTest()
      : services(*cluster.store, cluster.cache, cluster.clock, {}, &traffic, &scaler) {
    cluster.AddNode("n1", 4);
    cluster.AddNode("n2", 4);
  }

  // One pass of the service controller, then the scheduler and the agent's part: bound pods
  // start, pods marked for stopping end, leaders of started replicas get an endpoint and,
  // when `ready`, pass their readiness probe.
  void Step(bool ready = true) {
    Status status = services.RunOnce();
    ASSERT_TRUE(status.ok()) << status.ToString();
    cluster.Reconcile(1);
    cluster.StartBoundPods();
    cluster.StopMarkedPods();
    for (const api::Pod& pod : ServicePods()) {
      if (pod.status.phase != api::PodPhase::kRunning || pod.spec.owner.rank != 0) continue;
      const std::string name = pod.metadata.name;
      cluster.UpdatePod(name, [&](api::Pod& p) {
        p.metadata.annotations[api::kEndpointAnnotation] = Endpoint(p);
        if (ready)
          p.metadata.annotations[api::kReadyAtAnnotation] = FormatRfc3339(cluster.clock.Now());
      });
    }
  }

  static std::string Endpoint(const api::Pod& pod) {
    return "127.0.0.1:" + std::to_string(9000 + pod.spec.owner.replica);
  }

  std::vector<api::Pod> ServicePods() const {
    std::vector<api::Pod> out;
    for (api::Pod& pod : cluster.Pods()) {
      if (pod.spec.owner.kind == "Service") out.push_back(std::move(pod));
    }
    return out;
  }

  // Service pods that are not terminal and not marked draining.
  std::vector<api::Pod> LivePods() const {
    std::vector<api::Pod> out;
    for (api::Pod& pod : ServicePods()) {
      if (!api::PodTerminal(pod) && api::PodAnnotation(pod, api::kDrainingAnnotation) == nullptr) {
        out.push_back(std::move(pod));
      }
    }
    return out;
  }

  api::ServiceStatus State() const {
    Result<store::Object> raw = cluster.store->Get({"Service", "default", "llm"});
    EXPECT_TRUE(raw.has_value());
    if (!raw) return {};
    Result<api::Object> decoded = cluster::DecodeStoredObject(*raw);
    EXPECT_TRUE(decoded.has_value());
    return decoded ? decoded->As<api::Service>()->status : api::ServiceStatus{};
  }

  // Replaces the stored service with the one in `yaml`, as `strata apply` of a changed file does.
  void Replace(const std::string& yaml) {
    Result<std::vector<api::Object>> objects = api::DecodeManifests({{"test.yaml", yaml}});
    ASSERT_TRUE(objects.has_value()) << objects.error().ToString();
    Result<store::Object> current = cluster.store->Get({"Service", "default", "llm"});
    ASSERT_TRUE(current.has_value());
    ASSERT_TRUE(
        cluster.store->Update(cluster::EncodeForStore(objects->front(), *current)).has_value());
  }

  std::vector<std::string> EventReasons() const {
    std::vector<std::string> out;
    for (const api::Event& event : cluster.Events()) out.push_back(event.reason);
    return out;
  }

  testing::TestCluster cluster;
  FakeTraffic traffic;
  FakeScaler scaler;
  ServiceController services;
};

TEST_F(ServiceControllerTest, CreatesReplicasAsGangsOfTwoGpusOnOneNode) {
  cluster.Apply(kService);
  scaler.wanted["v1"] = 2;
  Step();
  Step();
  std::vector<api::Pod> pods = ServicePods();
  ASSERT_EQ(pods.size(), 2u);
  for (const api::Pod& pod : pods) {
    EXPECT_EQ(pod.spec.owner.kind, "Service");
    EXPECT_EQ(pod.spec.assigned_gpus.size(), 2u) << pod.metadata.name;
    EXPECT_EQ(pod.metadata.labels.at("team"), "search");
    EXPECT_EQ(pod.metadata.labels.at(api::kServiceNameLabel), "llm");
    EXPECT_EQ(*api::PodAnnotation(pod, api::kServedModelAnnotation), "llama");
    EXPECT_EQ(*api::PodAnnotation(pod, api::kServiceVersionAnnotation), "v1");
    EXPECT_EQ(pod.status.phase, api::PodPhase::kRunning);
  }
  EXPECT_EQ(pods[0].metadata.name, "llm-v1-0");
  EXPECT_EQ(pods[1].metadata.name, "llm-v1-1");
  Step();
  api::ServiceStatus status = State();
  ASSERT_EQ(status.versions.size(), 1u);
  EXPECT_EQ(status.versions[0].desired_replicas, 2);
  EXPECT_EQ(status.versions[0].ready_replicas, 2);
  EXPECT_EQ(status.versions[0].updated_replicas, 2);
  ASSERT_FALSE(status.decisions.empty());
  EXPECT_EQ(status.decisions.back().to, 2);
  EXPECT_EQ(status.decisions.back().reason, "test wants it");
  EXPECT_EQ(scaler.seen["v1"].ready, 2);
  EXPECT_THAT(EventReasons(), Contains("ScaledUp"));
  EXPECT_THAT(EventReasons(), Contains("SuccessfulCreate"));
}

// The service's nodeSelector is every replica pod's: with n3 alone in rack r3, both replicas
// (two GPUs each, four on a node) land there.
TEST_F(ServiceControllerTest, ReplicasCarryTheServicesNodeSelector) {
  cluster.AddNode("n3", 4, "r3");
  std::string pinned = kService;
  pinned.replace(pinned.find("  tensorParallel: 2"), 0,
                 "  nodeSelector: {topology.strata.dev/rack: r3}\n");
  cluster.Apply(pinned);
  scaler.wanted["v1"] = 2;
  Step();
  Step();
  std::vector<api::Pod> pods = ServicePods();
  ASSERT_EQ(pods.size(), 2u);
  for (const api::Pod& pod : pods) {
    EXPECT_EQ(pod.spec.node_selector.at("topology.strata.dev/rack"), "r3") << pod.metadata.name;
    EXPECT_EQ(pod.spec.node_name, "n3") << pod.metadata.name;
  }
}

TEST_F(ServiceControllerTest, ScaleDownDrainsUntilTheLastStreamEnds) {
  cluster.Apply(kService);
  scaler.wanted["v1"] = 2;
  for (int i = 0; i < 3; ++i) Step();
  ASSERT_EQ(LivePods().size(), 2u);
  traffic.in_flight["127.0.0.1:9001"] = 3;  // replica 1 still streams
  scaler.wanted["v1"] = 1;
  Step();
  api::Pod drained = cluster.Pod("llm-v1-1");
  ASSERT_NE(api::PodAnnotation(drained, api::kDrainingAnnotation), nullptr);
  EXPECT_EQ(api::StopRequested(drained), "");
  EXPECT_EQ(State().versions[0].draining_replicas, 1);
  // Streams still open: the replica keeps running past the route settle time.
  cluster.AdvanceWithHeartbeats(std::chrono::seconds(5));
  Step();
  EXPECT_EQ(cluster.Pod("llm-v1-1").status.phase, api::PodPhase::kRunning);
  // The last stream ends: the replica stops, then its pod goes.
  traffic.in_flight.clear();
  Step();
  Step();
  std::vector<api::Pod> pods = ServicePods();
  ASSERT_EQ(pods.size(), 1u);
  EXPECT_EQ(pods[0].metadata.name, "llm-v1-0");
  EXPECT_THAT(EventReasons(), Contains("Draining"));
  EXPECT_THAT(EventReasons(), Contains("ScaledDown"));
}

TEST_F(ServiceControllerTest, DrainGraceCutsStreamsThatNeverEnd) {
  cluster.Apply(kService);
  scaler.wanted["v1"] = 1;
  for (int i = 0; i < 3; ++i) Step();
  traffic.in_flight["127.0.0.1:9000"] = 1;
  scaler.wanted["v1"] = 0;
  Step();
  cluster.AdvanceWithHeartbeats(std::chrono::seconds(59));
  Step();
  EXPECT_EQ(api::StopRequested(cluster.Pod("llm-v1-0")), "");
  cluster.AdvanceWithHeartbeats(std::chrono::seconds(2));
  Step();
  Step();
  EXPECT_TRUE(ServicePods().empty());
  EXPECT_EQ(State().versions[0].replicas, 0);
}

TEST_F(ServiceControllerTest, ScalesToZeroAndBack) {
  cluster.Apply(kService);
  scaler.wanted["v1"] = 1;
  for (int i = 0; i < 3; ++i) Step();
  scaler.wanted["v1"] = 0;
  for (int i = 0; i < 3; ++i) {
    cluster.AdvanceWithHeartbeats(std::chrono::seconds(2));
    Step();
  }
  EXPECT_TRUE(ServicePods().empty());
  scaler.wanted["v1"] = 1;
  Step();
  Step();
  ASSERT_EQ(LivePods().size(), 1u);
  EXPECT_EQ(LivePods()[0].metadata.name, "llm-v1-0");
  std::vector<api::ScaleDecisionRecord> decisions = State().decisions;
  ASSERT_GE(decisions.size(), 3u);
  EXPECT_EQ(decisions[decisions.size() - 2].to, 0);
  EXPECT_EQ(decisions.back().to, 1);
}

TEST_F(ServiceControllerTest, UnplacedReplicaIsDeletedWithoutDrain) {
  std::string wide = kService;
  wide.replace(wide.find("maxReplicas: 4"), 14, "maxReplicas: 8");
  cluster.Apply(wide);
  scaler.wanted["v1"] = 5;  // two nodes of four GPUs hold four TP=2 replicas
  for (int i = 0; i < 3; ++i) Step();
  ASSERT_EQ(ServicePods().size(), 5u);
  std::string unplaced;
  for (const api::Pod& pod : ServicePods()) {
    if (pod.spec.node_name.empty()) unplaced = pod.metadata.name;
  }
  ASSERT_FALSE(unplaced.empty());
  scaler.wanted["v1"] = 4;
  Step();
  EXPECT_EQ(ServicePods().size(), 4u);
  for (const api::Pod& pod : ServicePods()) {
    EXPECT_NE(pod.metadata.name, unplaced);
    EXPECT_EQ(api::PodAnnotation(pod, api::kDrainingAnnotation), nullptr) << pod.metadata.name;
  }
}

TEST_F(ServiceControllerTest, RollingUpdateKeepsReadyCapacity) {
  cluster.Apply(kService);
  scaler.wanted["v1"] = 2;
  for (int i = 0; i < 3; ++i) Step();
  const std::string old_hash =
      *api::PodAnnotation(cluster.Pod("llm-v1-0"), api::kTemplateHashAnnotation);
  std::string updated = kService;
  updated.replace(updated.find("--model, llama]"), 15, "--model, llama, --max-num-seqs, \"64\"]");
  Replace(updated);
  // The new replica starts but is not ready yet: both old ones keep serving.
  Step(/*ready=*/false);
  Step(/*ready=*/false);
  EXPECT_EQ(LivePods().size(), 3u);
  for (const char* name : {"llm-v1-0", "llm-v1-1"}) {
    EXPECT_EQ(api::PodAnnotation(cluster.Pod(name), api::kDrainingAnnotation), nullptr) << name;
  }
  // Once ready, old replicas go one at a time and new ones replace them.
  for (int i = 0; i < 12; ++i) {
    cluster.AdvanceWithHeartbeats(std::chrono::seconds(2));
    Step();
  }
  std::vector<api::Pod> live = LivePods();
  ASSERT_EQ(live.size(), 2u);
  for (const api::Pod& pod : live) {
    EXPECT_NE(*api::PodAnnotation(pod, api::kTemplateHashAnnotation), old_hash);
    EXPECT_THAT(pod.spec.template_.command, Contains("64"));
  }
  EXPECT_EQ(State().versions[0].updated_replicas, 2);
  EXPECT_EQ(ServicePods().size(), 2u);
}

TEST_F(ServiceControllerTest, BrokenReplicaIsReplaced) {
  cluster.Apply(kService);
  scaler.wanted["v1"] = 1;
  for (int i = 0; i < 3; ++i) Step();
  cluster.SetPodPhase("llm-v1-0", "Failed", 137);
  Step();
  Step();
  Step();
  std::vector<api::Pod> live = LivePods();
  ASSERT_EQ(live.size(), 1u);
  EXPECT_EQ(live[0].status.phase, api::PodPhase::kRunning);
  EXPECT_THAT(EventReasons(), Contains("ReplicaFailed"));
  bool described = false;
  for (const api::Event& event : cluster.Events()) {
    if (event.reason == "ReplicaFailed") {
      EXPECT_THAT(event.message, HasSubstr("exit code 137"));
      described = true;
    }
  }
  EXPECT_TRUE(described);
}

TEST_F(ServiceControllerTest, ReplicaSpanningNodesIsOneGangWithItsLeaderAddress) {
  std::string spanning = kService;
  spanning.replace(spanning.find("tensorParallel: 2"), 17,
                   "tensorParallel: 8\n  nodesPerReplica: 2");
  spanning.replace(spanning.find("gpu: 2"), 6, "gpu: 4");
  cluster.Apply(spanning);
  scaler.wanted["v1"] = 1;
  Step();
  Step();
  std::vector<api::Pod> pods = ServicePods();
  ASSERT_EQ(pods.size(), 2u);
  EXPECT_EQ(pods[0].metadata.name, "llm-v1-0-0");
  EXPECT_EQ(pods[1].metadata.name, "llm-v1-0-1");
  EXPECT_NE(pods[0].spec.node_name, pods[1].spec.node_name);
  const std::string* leader = api::PodAnnotation(pods[1], api::kLeaderAddressAnnotation);
  ASSERT_NE(leader, nullptr);
  EXPECT_EQ(*leader, pods[0].spec.node_name);
  EXPECT_EQ(*api::PodAnnotation(pods[1], api::kGroupSizeAnnotation), "2");
  // One pod of the group fails: the whole group is replaced.
  cluster.SetPodPhase("llm-v1-0-1", "Failed", 1);
  for (int i = 0; i < 4; ++i) Step();
  EXPECT_EQ(LivePods().size(), 2u);
  for (const api::Pod& pod : LivePods()) EXPECT_EQ(pod.status.phase, api::PodPhase::kRunning);
}

TEST_F(ServiceControllerTest, DeletedServiceDrainsAndRemovesItsPods) {
  cluster.Apply(kService);
  scaler.wanted["v1"] = 2;
  for (int i = 0; i < 3; ++i) Step();
  ASSERT_TRUE(cluster.store->Delete({"Service", "default", "llm"}).has_value());
  Step();
  for (const api::Pod& pod : ServicePods()) {
    EXPECT_NE(api::PodAnnotation(pod, api::kDrainingAnnotation), nullptr);
  }
  cluster.AdvanceWithHeartbeats(std::chrono::seconds(2));
  Step();
  Step();
  EXPECT_TRUE(ServicePods().empty());
}

TEST_F(ServiceControllerTest, WithoutAScalerKeepsMinReplicas) {
  std::string fixed = kService;
  fixed.replace(fixed.find("minReplicas: 0"), 14, "minReplicas: 2");
  fixed.replace(fixed.find("  autoscaling: {scaleToZeroAfter: 60s}\n"), 39, "");
  cluster.Apply(fixed);
  ServiceController plain(*cluster.store, cluster.cache, cluster.clock);
  ASSERT_TRUE(plain.RunOnce().ok());
  EXPECT_EQ(ServicePods().size(), 2u);
  ASSERT_TRUE(plain.RunOnce().ok());
  EXPECT_EQ(ServicePods().size(), 2u);
}

TEST_F(ServiceControllerTest, APassWritesABoundedNumberOfPodsAndADeleteInBetweenIsSeen) {
  std::string wide = kService;
  wide.replace(wide.find("minReplicas: 0"), 14, "minReplicas: 9");
  wide.replace(wide.find("maxReplicas: 4"), 14, "maxReplicas: 9");
  wide.replace(wide.find("  autoscaling: {scaleToZeroAfter: 60s}\n"), 39, "  nodesPerReplica: 2\n");
  cluster.Apply(wide);
  ServiceControllerOptions options;
  options.max_pod_writes_per_pass = 5;
  ServiceController bounded(*cluster.store, cluster.cache, cluster.clock, options);
  // Two pods a replica, five pod writes a pass: two whole replicas.
  ASSERT_TRUE(bounded.RunOnce().ok());
  EXPECT_EQ(ServicePods().size(), 4u);
  EXPECT_EQ(State().versions.at(0).desired_replicas, 9);
  EXPECT_EQ(State().versions.at(0).replicas, 2);
  ASSERT_TRUE(bounded.RunOnce().ok());
  EXPECT_EQ(ServicePods().size(), 8u);
  // Deleted between passes: nothing more is created, and its unplaced pods go, a bounded number
  // a pass (whole replicas: three of four, six pod deletions), the rest at the next.
  ASSERT_TRUE(cluster.store->Delete({"Service", "default", "llm"}).has_value());
  ASSERT_TRUE(bounded.RunOnce().ok());
  EXPECT_EQ(ServicePods().size(), 2u);
  ASSERT_TRUE(bounded.RunOnce().ok());
  EXPECT_TRUE(ServicePods().empty());
}

// A StatefulSet's shape (decoded from apps/v1): pods db-0, db-1, db-2, started one at a time.
constexpr char kStatefulSet[] = R"(
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 3
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers:
        - name: db
          command: [sh, -c, "exec sleep 600"]
          resources: {limits: {nvidia.com/gpu: 1}}
)";

std::vector<std::string> Names(const std::vector<api::Pod>& pods) {
  std::vector<std::string> out;
  for (const api::Pod& pod : pods) out.push_back(pod.metadata.name);
  std::sort(out.begin(), out.end());
  return out;
}

TEST_F(ServiceControllerTest, StatefulSetPodsHaveOrdinalNamesAndStartInOrder) {
  cluster.Apply(kStatefulSet);
  scaler.wanted["v1"] = 3;
  // db-0 is created, but does not run yet: db-1 waits for it.
  ASSERT_TRUE(services.RunOnce().ok());
  ASSERT_TRUE(services.RunOnce().ok());
  EXPECT_EQ(Names(ServicePods()), (std::vector<std::string>{"db-0"}));
  // Each pass creates the next ordinal once the ones before it run (readiness aside).
  Step(/*ready=*/false);
  Step(/*ready=*/false);
  EXPECT_EQ(Names(ServicePods()), (std::vector<std::string>{"db-0", "db-1"}));
  Step(/*ready=*/false);
  Step(/*ready=*/false);
  EXPECT_EQ(Names(ServicePods()), (std::vector<std::string>{"db-0", "db-1", "db-2"}));
}

TEST_F(ServiceControllerTest, StatefulSetUpdateReplacesEachPodUnderItsOwnName) {
  cluster.Apply(std::string(kStatefulSet)
                    .replace(std::string(kStatefulSet).find("replicas: 3"), 11,
                             "replicas: 3\n  podManagementPolicy: Parallel"));
  scaler.wanted["v1"] = 3;
  for (int i = 0; i < 3; ++i) Step();
  ASSERT_EQ(Names(LivePods()), (std::vector<std::string>{"db-0", "db-1", "db-2"}));
  Result<store::Object> current = cluster.store->Get({"Service", "default", "db"});
  ASSERT_TRUE(current.has_value());
  Result<std::vector<api::Object>> changed = api::DecodeManifests(
      {{"db.yaml",
        std::string(kStatefulSet)
            .replace(std::string(kStatefulSet).find("exec sleep 600"), 14, "exec sleep 700")
            .replace(std::string(kStatefulSet).find("replicas: 3"), 11,
                     "replicas: 3\n  podManagementPolicy: Parallel")}});
  ASSERT_TRUE(changed.has_value()) << changed.error().ToString();
  ASSERT_TRUE(
      cluster.store->Update(cluster::EncodeForStore(changed->front(), *current)).has_value());
  // Never more than three pods hold GPUs (no surge), and never fewer than two serve.
  for (int i = 0; i < 20; ++i) {
    cluster.AdvanceWithHeartbeats(std::chrono::seconds(2));
    Step();
    int64_t holding = 0;
    for (const api::Pod& pod : ServicePods()) holding += api::PodTerminal(pod) ? 0 : 1;
    EXPECT_LE(holding, 3);
    EXPECT_GE(LivePods().size(), 2u);
  }
  std::vector<api::Pod> live = LivePods();
  EXPECT_EQ(Names(live), (std::vector<std::string>{"db-0", "db-1", "db-2"}));
  for (const api::Pod& pod : live) {
    EXPECT_EQ(pod.spec.template_.command.back(), "exec sleep 700") << pod.metadata.name;
  }
}

TEST_F(ServiceControllerTest, LeaderWorkerSetGroupRunsTheLeaderOnRankZeroWithLwsLabels) {
  cluster.Apply(R"(
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: lws}
spec:
  leaderWorkerTemplate:
    size: 2
    leaderTemplate:
      spec:
        containers: [{name: l, command: [lead], resources: {limits: {nvidia.com/gpu: 4}}}]
    workerTemplate:
      spec:
        containers: [{name: w, command: [work], resources: {limits: {nvidia.com/gpu: 4}}}]
)");
  scaler.wanted["v1"] = 1;
  Step();
  std::vector<api::Pod> pods = ServicePods();
  ASSERT_EQ(pods.size(), 2u);
  std::sort(pods.begin(), pods.end(), [](const api::Pod& a, const api::Pod& b) {
    return a.spec.owner.rank < b.spec.owner.rank;
  });
  EXPECT_EQ(pods[0].spec.template_.command, (std::vector<std::string>{"lead"}));
  EXPECT_EQ(pods[1].spec.template_.command, (std::vector<std::string>{"work"}));
  for (const api::Pod& pod : pods) {
    EXPECT_EQ(pod.metadata.labels.at(api::kLwsNameLabel), "lws");
    EXPECT_EQ(pod.metadata.labels.at(api::kLwsGroupIndexLabel), "0");
    EXPECT_EQ(pod.metadata.labels.at(api::kLwsWorkerIndexLabel),
              std::to_string(pod.spec.owner.rank));
    EXPECT_FALSE(pod.spec.node_name.empty()) << "the group is placed as one gang";
  }
}

TEST_F(ServiceControllerTest, ReplicaTopologyKeepsTheGroupInOneDomain) {
  cluster.AddNode("n3", 4, "r1");  // n1 and n2 are in rack r0
  std::string spanning = kService;
  spanning.replace(spanning.find("tensorParallel: 2"), 17,
                   "tensorParallel: 12\n  nodesPerReplica: 3\n"
                   "  topology: {level: topology.strata.dev/rack}");
  spanning.replace(spanning.find("gpu: 2"), 6, "gpu: 4");
  cluster.Apply(spanning);
  scaler.wanted["v1"] = 1;
  Step();
  Step();
  // Three nodes would hold the group, but no rack holds three.
  for (const api::Pod& pod : ServicePods()) {
    EXPECT_EQ(*api::PodAnnotation(pod, api::kTopologyLevelAnnotation), "topology.strata.dev/rack");
    EXPECT_TRUE(pod.spec.node_name.empty()) << pod.metadata.name;
  }
  EXPECT_EQ(ServicePods().size(), 3u);
  // Preferred: the group may split when it must.
  spanning.replace(spanning.find("{level: topology.strata.dev/rack}"), 33,
                   "{level: topology.strata.dev/rack, mode: Preferred}");
  Replace(spanning);
  for (int i = 0; i < 4; ++i) Step();
  std::vector<api::Pod> live = LivePods();
  ASSERT_EQ(live.size(), 3u);
  for (const api::Pod& pod : live) EXPECT_FALSE(pod.spec.node_name.empty()) << pod.metadata.name;
}

}  // namespace
}  // namespace strata::controller
