#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/field_reader.h"
#include "api/field_schema.h"
#include "api/job.h"
#include "api/object.h"
#include "common/field_errors.h"

namespace strata::api {

// A Kueue LocalQueue read from a document: it becomes a LocalQueueRef on the Queue made from its
// ClusterQueue, which must be among the same manifests.
struct LocalQueueLink {
  std::string namespace_name;
  std::string name;
  std::string cluster_queue;
};

// A Kueue WorkloadPriorityClass read from a document: the priority of the workloads among the
// same manifests that name it in the kueue.x-k8s.io/priority-class label.
struct PriorityClassLink {
  std::string name;
  int64_t value = 0;
};

// A Volcano PodGroup read from a document: it becomes the gang (and queue, priority) of the
// pods among the same manifests that name it in the scheduling.k8s.io/group-name annotation.
struct PodGroupLink {
  std::string namespace_name;
  std::string name;
  int64_t min_member = 0;
  std::map<std::string, Quantity> min_resources;
  std::string queue;
  std::optional<int64_t> priority;
};

// Kubeflow's processes per node: a number, or a word ("auto", "gpu", "cpu") that depends on
// the pod's resources, which a TrainJob may set after its runtime named the word.
struct ProcPerNodeSetting {
  int64_t count = 0;  // when positive, the number given
  std::string word;   // otherwise "auto", "gpu" or "cpu"

  // The processes a pod with `resources` runs: "auto" and "gpu" its whole GPUs, "cpu" its whole
  // CPUs, at least 1.
  int64_t Resolve(const ResourceRequest& resources) const;
};

// A Kubeflow TrainingRuntime (namespaced) or ClusterTrainingRuntime read from a document: the
// defaults of the TrainJobs among the same manifests whose spec.runtimeRef names it.
struct TrainingRuntimeLink {
  std::string kind;            // TrainingRuntime or ClusterTrainingRuntime
  std::string namespace_name;  // empty for a ClusterTrainingRuntime
  std::string name;
  JobSpec defaults;  // mlPolicy and the trainer step's template, as a Job would run them
  ProcPerNodeSetting proc_per_node{0, "auto"};
  // The runtime's other steps (dataset and model initializers), each a role of one pod that the
  // trainer's role may wait for (trainer_depends_on); none: the trainer runs alone.
  std::vector<JobRole> initializers;
  std::string trainer_step;  // the trainer step's name, its role's
  std::vector<RoleDependency> trainer_depends_on;
};

// A Kubeflow TrainJob read from a document: it becomes a Job once its runtime is found among
// the same manifests (or is the built-in torch-distributed). `job` holds what the TrainJob
// alone decides (metadata, queue, deadline); the trainer fields it gives override the
// runtime's defaults.
struct TrainJobLink {
  Job job;
  std::string runtime_kind;  // TrainingRuntime or ClusterTrainingRuntime (the default)
  std::string runtime_name;
  std::optional<int64_t> num_nodes;
  std::optional<ProcPerNodeSetting> proc_per_node;
  std::optional<ResourceRequest> resources;
  std::string image;                 // empty: the runtime's
  std::vector<std::string> command;  // empty: the runtime's
  std::optional<std::vector<std::string>> args;
  std::vector<EnvVar> env;  // merged into the runtime's by name, the TrainJob's value winning
};

// A KEDA ScaledObject read from a document: the autoscaling of the Deployment, StatefulSet or
// LeaderWorkerSet (each a Service) among the same manifests that its scaleTargetRef names.
struct ScaledObjectLink {
  std::string namespace_name;
  std::string name;
  std::string target_kind;  // Deployment (KEDA's default), StatefulSet or LeaderWorkerSet
  std::string target_name;
  int64_t min_replicas = 0;
  int64_t max_replicas = 100;
  Autoscaling autoscaling;
};

// A GAIE InferencePool read from a document: it selects the Deployments, StatefulSets and
// LeaderWorkerSets (each a Service) among the same manifests, in its namespace, whose pod
// template labels include match_labels; each then serves its vLLM engine's served model name.
struct InferencePoolLink {
  std::string namespace_name;
  std::string name;
  std::map<std::string, std::string> match_labels;
};

// A GAIE InferenceObjective read from a document: an entry of spec.objectives of every Service
// that its pool (an InferencePool among the same manifests, in its namespace) selects.
struct InferenceObjectiveLink {
  std::string namespace_name;
  std::string name;
  int64_t priority = 0;
  std::string pool_name;
};

// What decoding one document produced: native objects (a compatible document may produce none,
// when it only links others), links resolved across documents afterwards, and errors.
struct DecodedDocument {
  std::vector<Object> objects;
  std::optional<LocalQueueLink> local_queue;
  std::optional<PodGroupLink> pod_group;
  std::optional<PriorityClassLink> priority_class;
  std::optional<TrainingRuntimeLink> training_runtime;
  std::optional<TrainJobLink> train_job;
  std::optional<ScaledObjectLink> scaled_object;
  std::optional<InferencePoolLink> inference_pool;
  std::optional<InferenceObjectiveLink> inference_objective;
  FieldErrors errors;
};

// A kind strata reads: its apiVersion and kind, its field table and its decoder. The decoder
// receives a document that passed ValidateAgainstSchema(*schema()); it adds objects or errors.
struct KindInfo {
  std::string_view api_version;
  std::string_view kind;
  bool native = false;
  const TypeSchema* (*schema)() = nullptr;
  void (*decode)(const FieldView& document, DecodedDocument& out) = nullptr;
  std::string_view maps_to;  // for compatible kinds: what it becomes, for `explain`
  // For compatible kinds: whether its documents carry metadata.namespace (native kinds: the
  // resource catalog says).
  bool namespaced = true;
};

// Every kind, native first. Immutable; thread-safe.
const std::vector<KindInfo>& AllKinds();

// The kind with this apiVersion and kind, or nullptr.
const KindInfo* FindKind(std::string_view api_version, std::string_view kind);

// Decoders, one per kind (native_decode.cc, decode_core_v1.cc, decode_kubeflow.cc,
// decode_kserve.cc, decode_kueue.cc, decode_volcano.cc).
void DecodeNativeNode(const FieldView& doc, DecodedDocument& out);
void DecodeNativeQueue(const FieldView& doc, DecodedDocument& out);
void DecodeNativeResourceFlavor(const FieldView& doc, DecodedDocument& out);
void DecodeNativeJob(const FieldView& doc, DecodedDocument& out);
void DecodeNativeService(const FieldView& doc, DecodedDocument& out);
void DecodeNativePod(const FieldView& doc, DecodedDocument& out);
void DecodeNativeTenant(const FieldView& doc, DecodedDocument& out);
void DecodeNativeWorkloadPriorityClass(const FieldView& doc, DecodedDocument& out);
void DecodeNativeEvent(const FieldView& doc, DecodedDocument& out);
void DecodeNativeNamespace(const FieldView& doc, DecodedDocument& out);
void DecodeNativeConfigMap(const FieldView& doc, DecodedDocument& out);
void DecodeNativeSecret(const FieldView& doc, DecodedDocument& out);

}  // namespace strata::api
