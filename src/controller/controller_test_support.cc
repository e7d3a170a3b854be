#include "controller/controller_test_support.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "api/manifest.h"
#include "cluster/indexes.h"
#include "cluster/stored_object.h"
#include "controller/training_pod.h"

namespace strata::controller::testing {
namespace {

std::pair<std::string, std::string> SplitName(const std::string& name) {
  size_t slash = name.find('/');
  if (slash == std::string::npos) return {"default", name};
  return {name.substr(0, slash), name.substr(slash + 1)};
}

}  // namespace

TestCluster::TestCluster()
    : store(store::NewMemoryStore({.clock = &clock})),
      cache(*store, cluster::ControlPlaneCacheOptions()),
      scheduler(*store, cache, clock),
      jobs(*store, cache, clock),
      nodes(*store, cache, clock) {}

void TestCluster::Apply(const std::string& yaml) {
  Result<std::vector<api::Object>> objects = api::DecodeManifests({{"test.yaml", yaml}});
  ASSERT_TRUE(objects.has_value()) << objects.error().ToString();
  for (const api::Object& object : *objects) {
    Result<store::Object> created = store->Create(cluster::EncodeForStore(object));
    ASSERT_TRUE(created.has_value()) << created.error().ToString();
  }
}

void TestCluster::AddNode(const std::string& name, int gpus, const std::string& rack,
                          const std::string& model) {
  std::string gpu_list;
  for (int i = 0; i < gpus; ++i) {
    gpu_list += fmt::format("    - {{index: {}, uuid: GPU-{}-{}, model: {}, memory: 80Gi}}\n", i,
                            name, i, model);
  }
  Apply(fmt::format(R"(apiVersion: strata.dev/v1alpha1
kind: Node
metadata:
  name: {}
  labels: {{topology.strata.dev/rack: "{}"}}
status:
  capacity: {{cpu: 128, memory: 1Ti}}
  gpus:
{}  conditions: [{{type: Ready, status: "True", lastHeartbeatTime: "{}"}}]
)",
                    name, rack.empty() ? "r0" : rack, gpu_list, FormatRfc3339(clock.Now())));
}

void TestCluster::Reconcile(int passes) {
  for (int i = 0; i < passes; ++i) {
    Status scheduled = scheduler.RunOnce();
    ASSERT_TRUE(scheduled.ok()) << scheduled.ToString();
    Status reconciled = jobs.RunOnce();
    ASSERT_TRUE(reconciled.ok()) << reconciled.ToString();
    Status watched = nodes.RunOnce();
    ASSERT_TRUE(watched.ok()) << watched.ToString();
  }
}

void TestCluster::UpdatePod(const std::string& name, const std::function<void(api::Pod&)>& change) {
  auto [ns, pod_name] = SplitName(name);
  Result<store::Object> raw = store->Get({"Pod", ns, pod_name});
  ASSERT_TRUE(raw.has_value()) << raw.error().ToString();
  Result<api::Object> decoded = cluster::DecodeStoredObject(*raw);
  ASSERT_TRUE(decoded.has_value()) << decoded.error().ToString();
  change(*decoded->As<api::Pod>());
  Result<store::Object> updated = store->Update(cluster::EncodeForStore(*decoded, *raw));
  ASSERT_TRUE(updated.has_value()) << updated.error().ToString();
}

void TestCluster::StartBoundPods() {
  for (const api::Pod& pod : Pods()) {
    if (pod.spec.node_name.empty() || pod.status.phase != api::PodPhase::kPending) continue;
    if (!api::StopRequested(pod).empty()) continue;
    UpdatePod(pod.metadata.namespace_name + "/" + pod.metadata.name,
              [](api::Pod& p) { p.status.phase = api::PodPhase::kRunning; });
  }
}

void TestCluster::StopMarkedPods() {
  for (const api::Pod& pod : Pods()) {
    if (api::StopRequested(pod).empty() || api::PodTerminal(pod)) continue;
    UpdatePod(pod.metadata.namespace_name + "/" + pod.metadata.name, [](api::Pod& p) {
      p.status.phase = api::PodPhase::kFailed;
      p.status.exit_code = 143;
    });
  }
}

void TestCluster::SetPodPhase(const std::string& pod, const std::string& phase, int exit_code) {
  UpdatePod(pod, [&](api::Pod& p) {
    std::optional<api::PodPhase> parsed = api::ParsePodPhase(phase);
    ASSERT_TRUE(parsed.has_value()) << phase;
    p.status.phase = *parsed;
    p.status.exit_code = exit_code;
  });
}

void TestCluster::ReportCheckpoint(const std::string& pod, TimePoint when) {
  UpdatePod(pod, [&](api::Pod& p) {
    p.metadata.annotations[api::kLastCheckpointAnnotation] = FormatRfc3339(when);
  });
}

void TestCluster::Heartbeat(const std::string& node) {
  Result<store::Object> raw = store->Get({"Node", "", node});
  ASSERT_TRUE(raw.has_value());
  Result<api::Object> decoded = cluster::DecodeStoredObject(*raw);
  ASSERT_TRUE(decoded.has_value());
  for (api::NodeCondition& c : decoded->As<api::Node>()->status.conditions) {
    if (c.type != "Ready") continue;
    c.status = "True";
    c.last_heartbeat_time = FormatRfc3339(clock.Now());
  }
  ASSERT_TRUE(store->Update(cluster::EncodeForStore(*decoded, *raw)).has_value());
}

void TestCluster::AdvanceWithHeartbeats(Duration d) {
  clock.Advance(d);
  store::Selection selection;
  selection.kind = "Node";
  Result<store::ListResult> nodes = store->List(selection);
  ASSERT_TRUE(nodes.has_value());
  for (const store::Object& node : nodes->items) Heartbeat(node.key.name);
}

std::vector<api::Pod> TestCluster::Pods() const {
  Result<std::vector<cluster::Stored<api::Pod>>> pods =
      cluster::ListStored<api::Pod>(*store, "Pod");
  EXPECT_TRUE(pods.has_value());
  std::vector<api::Pod> out;
  if (pods) {
    for (auto& pod : *pods) out.push_back(std::move(pod.value));
  }
  return out;
}

std::vector<api::Pod> TestCluster::JobPods(const std::string& name,
                                           const std::string& namespace_name) const {
  std::vector<api::Pod> out;
  for (api::Pod& pod : Pods()) {
    if (pod.spec.owner.kind == "Job" && pod.spec.owner.name == name &&
        pod.metadata.namespace_name == namespace_name) {
      out.push_back(std::move(pod));
    }
  }
  return out;
}

api::JobStatus TestCluster::Job(const std::string& name, const std::string& namespace_name) const {
  Result<store::Object> raw = store->Get({"Job", namespace_name, name});
  EXPECT_TRUE(raw.has_value());
  if (!raw) return {};
  Result<api::Object> decoded = cluster::DecodeStoredObject(*raw);
  EXPECT_TRUE(decoded.has_value());
  return decoded ? decoded->As<api::Job>()->status : api::JobStatus{};
}

api::Pod TestCluster::Pod(const std::string& name, const std::string& namespace_name) const {
  Result<store::Object> raw = store->Get({"Pod", namespace_name, name});
  EXPECT_TRUE(raw.has_value());
  if (!raw) return {};
  Result<api::Object> decoded = cluster::DecodeStoredObject(*raw);
  EXPECT_TRUE(decoded.has_value());
  return decoded ? *decoded->As<api::Pod>() : api::Pod{};
}

std::vector<api::Event> TestCluster::Events() const {
  Result<std::vector<cluster::Stored<api::Event>>> events =
      cluster::ListStored<api::Event>(*store, "Event");
  EXPECT_TRUE(events.has_value());
  std::vector<api::Event> out;
  if (events) {
    for (auto& event : *events) out.push_back(std::move(event.value));
  }
  return out;
}

int TestCluster::GpusHeld() const {
  int held = 0;
  for (const api::Pod& pod : Pods()) {
    if (!pod.spec.node_name.empty() && !api::PodTerminal(pod)) {
      held += static_cast<int>(pod.spec.assigned_gpus.size());
    }
  }
  return held;
}

int TestCluster::GpusHeldOn(const std::string& node) const {
  int held = 0;
  for (const api::Pod& pod : Pods()) {
    if (pod.spec.node_name == node && !api::PodTerminal(pod)) {
      held += static_cast<int>(pod.spec.assigned_gpus.size());
    }
  }
  return held;
}

}  // namespace strata::controller::testing
