#include "observe/test_cluster.h"

#include "api/encode.h"
#include "common/check.h"
#include "observe/cluster_gpus.h"

namespace strata::observe::testing {

api::Node GpuNode(std::string name, int gpus, bool simulated) {
  api::Node node;
  node.metadata.name = std::move(name);
  if (simulated) node.metadata.labels[api::kSimulatedLabel] = "true";
  node.status.cpu = Quantity::FromUnits(224);
  node.status.memory = Quantity::FromUnits(2048LL << 30);
  for (int i = 0; i < gpus; ++i) {
    api::NodeGpu gpu;
    gpu.index = i;
    gpu.uuid = "GPU-" + node.metadata.name + "-" + std::to_string(i);
    gpu.model = "H100-80GB";
    gpu.memory = Quantity::FromUnits(80LL << 30);
    node.status.gpus.push_back(gpu);
  }
  return node;
}

api::Pod BoundPod(std::string name, std::string node, std::vector<int64_t> gpus, std::string phase,
                  int64_t share_milli) {
  api::Pod pod;
  pod.metadata.name = std::move(name);
  pod.metadata.namespace_name = "default";
  pod.metadata.labels[api::kTeamLabel] = "ml";
  pod.spec.owner = {"Job", "train", 0, 0};
  pod.spec.queue = "research";
  pod.spec.template_.command = {"python3", "train.py"};
  pod.spec.resources.cpu = Quantity::FromUnits(8);
  pod.spec.resources.memory = Quantity::FromUnits(64LL << 30);
  pod.spec.resources.gpu = Quantity::FromMilli(share_milli * static_cast<int64_t>(gpus.size()));
  pod.spec.node_name = std::move(node);
  for (int64_t index : gpus) {
    api::AssignedGpu gpu;
    gpu.index = index;
    gpu.uuid = "GPU-" + pod.spec.node_name + "-" + std::to_string(index);
    gpu.share = Quantity::FromMilli(share_milli);
    pod.spec.assigned_gpus.push_back(gpu);
  }
  pod.status.phase = api::ParsePodPhase(phase).value_or(api::PodPhase::kPending);
  return pod;
}

SharedChunks<api::Node> SharedNodes(std::vector<api::Node> nodes) {
  SharedChunks<api::Node>::Chunk shared;
  for (api::Node& node : nodes) {
    shared.push_back(std::make_shared<const api::Node>(std::move(node)));
  }
  return SharedChunks<api::Node>(std::move(shared));
}

SharedChunks<StoredPod> SharedPods(std::vector<StoredPod> pods) {
  SharedChunks<StoredPod>::Chunk shared;
  for (StoredPod& pod : pods) shared.push_back(std::make_shared<const StoredPod>(std::move(pod)));
  return SharedChunks<StoredPod>(std::move(shared));
}

store::Object StoredObject(const api::Object& object) {
  store::Object stored;
  stored.key = {std::string(object.kind()), object.namespace_name(), object.name()};
  stored.labels = object.metadata().labels;
  stored.body = api::EncodeObject(object);
  return stored;
}

void Put(store::Store& store, const api::Object& object) {
  STRATA_CHECK(store.Create(StoredObject(object)).has_value());
}

std::unique_ptr<store::Store> SimulatedClusterStore(int nodes) {
  std::unique_ptr<store::Store> store = store::NewMemoryStore({});
  for (int i = 0; i < nodes; ++i) Put(*store, GpuNode("sim-node-" + std::to_string(i), 8, true));
  Put(*store, BoundPod("train-0", "sim-node-0", {0, 1, 2, 3}, "Running"));
  api::Pod replica = BoundPod("llm-0", "sim-node-0", {4}, "Running", 500);
  replica.metadata.labels[api::kTeamLabel] = "serving";
  replica.spec.owner = {"Service", "llm", 0, 0};
  replica.spec.queue = "inference";
  Put(*store, replica);
  api::Pod pending = BoundPod("train-1", "", {}, "Pending");
  Put(*store, pending);
  return store;
}

}  // namespace strata::observe::testing
