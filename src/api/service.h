#pragma once

#include <optional>
#include <string>
#include <vector>

#include "api/object_meta.h"
#include "api/workload.h"
#include "common/clock.h"

namespace strata::api {

// One version of a service's model; traffic splits across versions by weight. `engine`, when
// set, replaces the service's engine template for this version.
struct ServiceVersion {
  std::string name;
  int64_t weight = 100;
  std::optional<ProcessTemplate> engine;

  bool operator==(const ServiceVersion&) const = default;
};

// How the replica count follows load (Knative's shape). `metric`: concurrency (in-flight
// requests per replica), rps, queue (engine's waiting requests) or kvCache (KV-cache usage
// fraction). `scale_to_zero_after` 0 keeps at least minReplicas. The rates bound one decision's
// change as Knative's max-scale-up-rate and max-scale-down-rate do (at most current x up-rate,
// at least current / down-rate); the rps metric paces its own scale-down and takes neither.
struct Autoscaling {
  std::string metric = "concurrency";
  double target = 8;
  Duration stable_window = std::chrono::seconds(60);
  Duration panic_window = std::chrono::seconds(6);
  Duration scale_to_zero_after{0};
  double max_scale_up_rate = 1000;
  double max_scale_down_rate = 2;

  bool operator==(const Autoscaling&) const = default;
};

struct ServiceSpec {
  std::string model;  // the name clients put in the request body's "model"
  std::vector<ServiceVersion> versions;
  ProcessTemplate engine;
  ResourceRequest resources;  // per pod; a replica spans nodes_per_replica pods
  GpuSelector gpu_selector;
  std::vector<Toleration> tolerations;
  int64_t tensor_parallel = 1;
  int64_t nodes_per_replica = 1;
  int64_t min_replicas = 1;
  int64_t max_replicas = 1;
  Autoscaling autoscaling;
  std::vector<std::string> tenants;  // empty: every tenant
  std::string queue;
  int64_t priority = 0;

  bool operator==(const ServiceSpec&) const = default;
};

// An inference service: replicas of an engine behind the gateway. Namespaced.
struct Service {
  ObjectMeta metadata;
  ServiceSpec spec;

  bool operator==(const Service&) const = default;
};

}  // namespace strata::api
