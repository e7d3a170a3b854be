#include "api/encode.h"

#include <gtest/gtest.h>

#include "api/manifest.h"
#include "common/yaml_json.h"

namespace strata::api {
namespace {

Quantity Q(const char* text) { return *Quantity::Parse(text); }

ObjectMeta Meta(const char* name, bool namespaced) {
  ObjectMeta m;
  m.name = name;
  if (namespaced) m.namespace_name = "team-a";
  m.labels = {{"team", "a"}, {"topology.strata.dev/rack", "r1"}};
  m.annotations = {{"note", "anything: goes here"}};
  m.uid = "4f1c2a9e-0000-4000-8000-000000000001";
  m.resource_version = "42";
  m.creation_timestamp = "2026-01-01T00:00:00Z";
  return m;
}

ProcessTemplate Process() {
  return {"img:1", {"python", "-m", "x"}, {"--flag", "0"}, {{"A", "1"}, {"B", ""}}, "/work", {}};
}

std::vector<Object> EveryKind() {
  Node node{Meta("gpu-node-1", false), {}, {}};
  node.spec.taints = {{"dedicated", "ml", "NoSchedule"}, {"flaky", "", "PreferNoSchedule"}};
  node.spec.unschedulable = true;
  node.status.cpu = Q("128");
  node.status.memory = Q("1Ti");
  node.status.gpus = {{0, "GPU-a", "H100-80GB", Q("80Gi"), 0, false, {}},
                      {1, "GPU-b", "A100-40GB", Q("40Gi"), 1, true, {{"1g.5gb", "MIG-x"}}}};
  node.status.conditions = {
      {"Ready", "True", "AgentReady", "fine", "2026-01-01T00:00:10Z", "2026-01-01T00:00:00Z"}};

  Queue queue{Meta("team-a-cq", false), {}, {}};
  queue.spec.cohort = "pool";
  queue.spec.flavors = {
      {"h100", {{"gpu", Q("32"), Q("8"), Q("0")}, {"cpu", Q("500m"), std::nullopt, std::nullopt}}}};
  queue.spec.weight = Q("0");
  queue.spec.queueing_strategy = "StrictFIFO";
  queue.spec.preemption = {"LowerPriority", "Any"};
  queue.spec.reclaimable = false;
  queue.spec.local_queues = {{"team-a", "lq"}};
  queue.status.flavors_usage = {{"h100", {{"gpu", Q("32"), Q("40"), Q("8")}}}};
  queue.status.admitted_workloads = 3;
  queue.status.pending_workloads = 2;

  ResourceFlavor flavor{Meta("h100", false), {}};
  flavor.spec.node_labels = {{"nvidia.com/gpu.product", "H100"}};
  flavor.spec.tolerations = {{"", "Exists", "", ""}, {"k", "Equal", "v", "NoExecute"}};

  Job job{Meta("train", true), {}, {}};
  job.spec.replicas = 4;
  job.spec.proc_per_node = 8;
  job.spec.resources = {Q("64"), Q("512Gi"), Q("8"), Q("80Gi"), ""};
  job.spec.gpu_selector = {{"H100-80GB", "H200"}, Q("80Gi")};
  job.spec.tolerations = {{"dedicated", "Equal", "ml", "NoSchedule"}};
  job.spec.topology = {"topology.strata.dev/rack", "Preferred"};
  job.spec.max_restarts = 3;
  job.spec.checkpoint = {"/ckpt", std::chrono::minutes(30)};
  job.spec.priority = -5;
  job.spec.queue = "lq";
  job.spec.runtime_limit = std::chrono::milliseconds(90500);
  job.spec.template_ = Process();
  job.spec.clean_pod_policy = "None";
  job.status.phase = JobPhase::kRestarting;
  job.status.restart_count = 1;
  job.status.preemption_count = 2;
  job.status.runs = 4;
  job.status.reason = "PodFailed";
  job.status.message = "pod train-worker-1 failed";
  job.status.start_time = "2026-01-01T00:00:00Z";
  job.status.last_checkpoint_time = "2026-01-01T00:30:00Z";
  job.status.conditions = {{"Restarting", "True", "PodFailed", "m", "2026-01-01T00:40:00Z"}};
  job.status.placement =
      JobPlacement{4,
                   "h100",
                   "10.0.0.1",
                   29501,
                   "2026-01-01T00:41:00Z",
                   {{0, "gpu-node-1", {{2, "GPU-c", Q("1"), Q("0"), ""}}}, {1, "gpu-node-2", {}}}};

  Service service{Meta("chat", true), {}, {}};
  ServiceSpec& s = service.spec;
  s.model = "llama";
  s.versions = {{"v1", 90, std::nullopt}, {"v2", 0, Process()}};
  s.engine = Process();
  s.resources = {Q("4"), Q("24Gi"), Q("250m"), Q("10Gi"), ""};
  s.tolerations = {{"a", "Exists", "", ""}};
  s.tensor_parallel = 1;
  s.nodes_per_replica = 2;
  s.min_replicas = 0;
  s.max_replicas = 0;
  s.autoscaling = {
      "kvCache", 0.75, std::chrono::seconds(30), std::chrono::seconds(3), std::chrono::minutes(10),
      4.0,       1.5};
  s.tenants = {"acme"};
  s.queue = "serving";
  s.priority = 100;
  service.status.versions = {{"v1", 3, 3, 2, 1, 0, 3, "queue above target"}};
  service.status.decisions = {{"2026-01-01T00:00:00Z", "v1", 1, 3, "burst"}};
  service.status.cold_start_seconds = 2.5;
  service.status.cold_starts_measured = 4;

  Pod pod{Meta("train-0", true), {}, {}};
  pod.spec.owner = {"Job", "train", 3, 0};
  pod.spec.queue = "q";
  pod.spec.priority = 7;
  pod.spec.restart_policy = "Never";
  pod.spec.node_name = "gpu-node-1";
  pod.spec.resources = {Q("1"), Q("1Gi"), Q("0"), Q("0"), "1g.10gb"};
  pod.spec.template_ = Process();
  pod.spec.assigned_gpus = {{2, "GPU-c", Q("1"), Q("0"), ""},
                            {3, "", Q("300m"), Q("8Gi"), "MIG-y"}};
  pod.spec.gang = {"pg", 2, {{"nvidia.com/gpu", Q("2")}}};
  pod.status = {PodPhase::kFailed, 137, 2, "OOMKilled", "out of memory", "10.0.0.7"};

  Tenant tenant{Meta("acme", false), {{"sk-acme-000001", "sk-acme-000002"}, 60000, "critical"}};

  Event event{Meta("train.1", true),
              {"Job", "train", "team-a", "uid-1"},
              "Warning",
              "Restarted",
              "worker 3 exited with 137",
              4,
              "2026-01-01T00:00:00Z",
              "2026-01-01T01:00:00Z"};

  return {node, queue, flavor, job, service, pod, tenant, event};
}

TEST(EncodeTest, DecodeOfEncodeIsIdentityForEveryKind) {
  for (const Object& original : EveryKind()) {
    nlohmann::json encoded = EncodeObject(original);
    Result<Object> decoded = DecodeObject(encoded);
    ASSERT_TRUE(decoded.has_value()) << original.kind() << ": " << decoded.error().message() << "\n"
                                     << encoded.dump(2);
    EXPECT_EQ(*decoded, original) << original.kind() << "\n" << encoded.dump(2);
    // Through YAML text too, as `apply -o yaml` prints it.
    Result<std::vector<Object>> via_yaml = DecodeManifests({{"x.yaml", ToYaml(encoded)}});
    ASSERT_TRUE(via_yaml.has_value()) << via_yaml.error().message() << "\n" << ToYaml(encoded);
    EXPECT_EQ(via_yaml->front(), original) << original.kind();
  }
}

TEST(EncodeTest, DefaultedObjectsRoundTrip) {
  Result<std::vector<Object>> decoded = DecodeManifests({{"x.yaml", R"(
apiVersion: strata.dev/v1alpha1
kind: Service
metadata: {name: s}
spec: {model: m, engine: {command: [e]}, resources: {gpu: 2}}
---
apiVersion: strata.dev/v1alpha1
kind: Pod
metadata: {name: p}
spec: {template: {command: [e]}}
---
apiVersion: strata.dev/v1alpha1
kind: Event
metadata: {name: e}
involvedObject: {kind: Pod, name: p}
)"}});
  ASSERT_TRUE(decoded.has_value()) << decoded.error().message();
  for (const Object& o : *decoded) {
    Result<Object> again = DecodeObject(EncodeObject(o));
    ASSERT_TRUE(again.has_value()) << again.error().message();
    EXPECT_EQ(*again, o) << o.kind();
  }
}

TEST(EncodeTest, EncodingIsCanonical) {
  Object job = EveryKind()[3];
  nlohmann::json encoded = EncodeObject(job);
  EXPECT_EQ(encoded["apiVersion"], "strata.dev/v1alpha1");
  EXPECT_EQ(encoded["kind"], "Job");
  EXPECT_EQ(encoded["spec"]["runtimeLimit"], "90500ms");
  EXPECT_EQ(encoded["spec"]["resources"]["memory"], "512Gi");
  EXPECT_EQ(EncodeObject(*DecodeObject(encoded)).dump(), encoded.dump());
}

}  // namespace
}  // namespace strata::api
