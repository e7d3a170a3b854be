#pragma once

#include <memory>
#include <string>
#include <vector>

#include "api/node.h"
#include "api/object.h"
#include "api/pod.h"
#include "observe/cluster_gpus.h"
#include "observe/shared_chunks.h"
#include "store/store.h"

// Small clusters for the observe tests here and in tests/observe: Node and Pod objects as
// node registration and the scheduler write them. Test-only; plain functions.

namespace strata::observe::testing {

// A node with `gpus` H100-80GB GPUs "GPU-<name>-<i>", labelled simulated when asked.
api::Node GpuNode(std::string name, int gpus, bool simulated);

// A pod of Job "train" in queue "research", team "ml", bound to `node` with one whole GPU per
// index (or `share_milli` of each), 8 cores and 64Gi, in `phase`.
api::Pod BoundPod(std::string name, std::string node, std::vector<int64_t> gpus, std::string phase,
                  int64_t share_milli = 1000);

// `nodes` and `pods` as ClusterObjects holds them.
SharedChunks<api::Node> SharedNodes(std::vector<api::Node> nodes);
SharedChunks<StoredPod> SharedPods(std::vector<StoredPod> pods);

// `object` as the REST API stores it (key, labels, encoded body).
store::Object StoredObject(const api::Object& object);

// Stores `object` as the REST API would (key, labels, encoded body). REQUIRES: success (a test
// setup error crashes).
void Put(store::Store& store, const api::Object& object);

// A memory store holding `nodes` simulated nodes of 8 GPUs "sim-node-<i>", and on the first one
// a running 4-GPU training pod "train-0", a running half-GPU service replica "llm-0" (service
// "llm", team "serving") and a pending pod.
std::unique_ptr<store::Store> SimulatedClusterStore(int nodes);

}  // namespace strata::observe::testing
