#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/status.h"
#include "gateway/config.h"
#include "kube/resource.h"

// GAIE InferencePools on a Kubernetes cluster as routes of strata's gateway (DESIGN.md,
// "Kubernetes mode", Gateway): what a pool and an objective say, and the routing table they make
// with the pods the pool selects. Pure functions; thread-safe.

namespace strata::kubecompat {

// The collections read: inference.networking.k8s.io/v1 InferencePools and
// inference.networking.x-k8s.io/v1alpha2 InferenceObjectives (the versions GAIE serves them at).
extern const kube::GroupVersionResource kInferencePools;
extern const kube::GroupVersionResource kInferenceObjectives;

// The RBAC rules a gateway that follows pools needs: get, list and watch of InferencePools and
// InferenceObjectives (the pods they select are read under the store's rules on pods).
std::vector<nlohmann::json> InferencePoolRules();

// What strata routes by in an InferencePool: the pods of its namespace that carry every label
// of spec.selector.matchLabels serve on spec.targetPorts[0].number. Plain data.
struct InferencePool {
  std::string namespace_name;
  std::string name;
  std::map<std::string, std::string> match_labels;
  int64_t target_port = 0;

  // "app=vllm,tier=chat": match_labels as a label selector.
  std::string LabelSelector() const;
  bool operator==(const InferencePool&) const = default;
};

// Reads a pool as the API server returns it. InvalidArgument naming the pool and the field when
// matchLabels is empty (a pool of every pod is no route) or there is not exactly one target
// port from 1 to 65535 (the v1 API's rule).
Result<InferencePool> ReadInferencePool(const nlohmann::json& object);

// An InferenceObjective: requests naming it (header x-gateway-inference-objective) get its
// priority's class on every model of the pool it references. Plain data.
struct InferenceObjective {
  std::string namespace_name;
  std::string name;
  int64_t priority = 0;
  std::string pool_name;  // in the objective's namespace
};

// Reads an objective as the API server returns it. InvalidArgument naming the objective when
// spec.poolRef.name is missing or poolRef names a group or kind other than GAIE's pool.
Result<InferenceObjective> ReadInferenceObjective(const nlohmann::json& object);

// A pool with the pods its selector matches now (v1 Pods as the API server returns them).
struct PoolMembers {
  InferencePool pool;
  std::vector<nlohmann::json> pods;
};

// "10.0.0.7:8000" ("[fd00::7]:8000" for IPv6): where the gateway reaches `pod` of a pool on
// `port`; empty while the pod is not routable: no status.podIP, not Running, its Ready
// condition not True, or being deleted (metadata.deletionTimestamp).
std::string PoolEndpoint(const nlohmann::json& pod, int64_t port);

// The model names `pod` serves: those its containers' vLLM (or engine-sim) command lines answer
// to (api::VllmServedModelNames, the first container that names one); empty when none does.
std::vector<std::string> PodModelNames(const nlohmann::json& pod);

// The routing table of `pools`: each model name the pools' pods serve (PodModelNames, else the
// pool's name for a pod that names none, and the pool's name for a pool with no pod yet) is a
// model of one version, named after its pool, whose endpoints are the PoolEndpoints of the
// routable pods that serve it (none: the gateway holds the model's requests until one is, as
// for a Service scaling from zero). Objectives referencing a pool become each of its models'
// objectives. A model name that an earlier pool (by namespace, then name) already serves is left
// to that pool and its name added to `conflicts` when given. Sorted by model name.
std::vector<gateway::ModelConfig> RoutesFromPools(const std::vector<PoolMembers>& pools,
                                                  const std::vector<InferenceObjective>& objectives,
                                                  std::vector<std::string>* conflicts = nullptr);

}  // namespace strata::kubecompat
