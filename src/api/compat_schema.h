#pragma once

#include "api/field_schema.h"
#include "api/kinds.h"

namespace strata::api {

// Field tables and decoders of the compatible kinds, one pair per kind, defined beside each
// other in the decoder file of their family.

// Pieces of Kubernetes' core/v1 that other families embed.
const TypeSchema* KubeContainerSchema();
const TypeSchema* KubePodSpecSchema();
const TypeSchema* KubePodTemplateSchema();
const TypeSchema* KubeResourceRequirementsSchema();

// decode_batch_v1.cc; JobSet's child Jobs share BatchJobSpecSchema's fields.
const TypeSchema* BatchJobSpecSchema();
const TypeSchema* BatchJobSchema();
void DecodeBatchJob(const FieldView& doc, DecodedDocument& out);

// decode_apps_v1.cc
const TypeSchema* DeploymentSchema();
void DecodeDeployment(const FieldView& doc, DecodedDocument& out);
const TypeSchema* StatefulSetSchema();
void DecodeStatefulSet(const FieldView& doc, DecodedDocument& out);

// decode_lws.cc
const TypeSchema* LeaderWorkerSetSchema();
void DecodeLeaderWorkerSet(const FieldView& doc, DecodedDocument& out);

// decode_core_v1.cc
const TypeSchema* CoreV1PodSchema();
void DecodeCoreV1Pod(const FieldView& doc, DecodedDocument& out);

// decode_core_v1_service.cc: a v1 Service, accepted with a warning, adds no object.
const TypeSchema* CoreV1ServiceSchema();
void DecodeCoreV1Service(const FieldView& doc, DecodedDocument& out);

// decode_kubeflow.cc
const TypeSchema* PyTorchJobSchema();
void DecodePyTorchJob(const FieldView& doc, DecodedDocument& out);
// Kubeflow's JobStatus, which strata writes on a PyTorchJob it runs on a Kubernetes cluster.
const TypeSchema* KubeflowJobStatusSchema();

// decode_trainer.cc: a TrainJob decodes to a TrainJobLink and a runtime to a
// TrainingRuntimeLink; neither adds an object until ResolveTrainJob joins them.
const TypeSchema* TrainJobSchema();
void DecodeTrainJob(const FieldView& doc, DecodedDocument& out);
const TypeSchema* TrainingRuntimeSchema();
void DecodeTrainingRuntime(const FieldView& doc, DecodedDocument& out);
const TypeSchema* ClusterTrainingRuntimeSchema();
void DecodeClusterTrainingRuntime(const FieldView& doc, DecodedDocument& out);

// The ClusterTrainingRuntime torch-distributed as strata provides it when no manifest gives
// one: one node, numProcPerNode "auto", no template (the TrainJob gives the command).
const TrainingRuntimeLink& BuiltInTorchDistributed();

// Adds to `out.objects` the Job that `link` makes with `runtime`'s defaults, the TrainJob's
// trainer fields overriding them; or, if neither gives a command, reports spec.trainer.command
// in `out.errors`.
void ResolveTrainJob(const TrainJobLink& link, const TrainingRuntimeLink& runtime,
                     DecodedDocument& out);

// decode_jobset.cc
const TypeSchema* JobSetSchema();
void DecodeJobSet(const FieldView& doc, DecodedDocument& out);

// decode_kserve.cc
const TypeSchema* InferenceServiceSchema();
void DecodeInferenceService(const FieldView& doc, DecodedDocument& out);
// The model argument of `vllm serve` for a KServe storage URI (hf://org/model, file:///path or
// /path), or empty after reporting any other at `path`.
std::string KServeModelPath(const std::string& uri, const std::string& path, FieldErrors& errors);

// decode_llm_inference_service.cc: one schema per served version (v1alpha1 and v1alpha2 share
// their shape), one decoder.
const TypeSchema* LLMInferenceServiceV1alpha1Schema();
const TypeSchema* LLMInferenceServiceV1alpha2Schema();
void DecodeLLMInferenceService(const FieldView& doc, DecodedDocument& out);

// decode_ray.cc: a RayCluster, and a RayJob with its cluster, each decode to one Job.
const TypeSchema* RayClusterSchema();
void DecodeRayCluster(const FieldView& doc, DecodedDocument& out);
const TypeSchema* RayJobSchema();
void DecodeRayJob(const FieldView& doc, DecodedDocument& out);

// decode_kueue.cc
const TypeSchema* ClusterQueueV1beta1Schema();
const TypeSchema* ClusterQueueV1beta2Schema();
void DecodeClusterQueue(const FieldView& doc, DecodedDocument& out);
const TypeSchema* LocalQueueSchema();
void DecodeLocalQueue(const FieldView& doc, DecodedDocument& out);
const TypeSchema* KueueResourceFlavorSchema();
void DecodeKueueResourceFlavor(const FieldView& doc, DecodedDocument& out);
const TypeSchema* CohortSchema();
void DecodeCohort(const FieldView& doc, DecodedDocument& out);
const TypeSchema* WorkloadPriorityClassSchema();
void DecodeWorkloadPriorityClass(const FieldView& doc, DecodedDocument& out);
const TypeSchema* KueueTopologySchema();
void DecodeKueueTopology(const FieldView& doc, DecodedDocument& out);

// decode_keda.cc: a link (ScaledObjectLink) that LinkScaledObjects gives to its target.
const TypeSchema* ScaledObjectSchema();
void DecodeScaledObject(const FieldView& doc, DecodedDocument& out);

// decode_gaie.cc: links (InferencePoolLink, InferenceObjectiveLink) folded into the Services
// the pools select.
const TypeSchema* InferencePoolSchema();
void DecodeInferencePool(const FieldView& doc, DecodedDocument& out);
const TypeSchema* InferenceObjectiveSchema();
void DecodeInferenceObjective(const FieldView& doc, DecodedDocument& out);

// decode_volcano.cc
const TypeSchema* PodGroupSchema();
void DecodePodGroup(const FieldView& doc, DecodedDocument& out);
const TypeSchema* VolcanoQueueSchema();
void DecodeVolcanoQueue(const FieldView& doc, DecodedDocument& out);

// decode_volcano_job.cc
const TypeSchema* VolcanoJobSchema();
void DecodeVolcanoJob(const FieldView& doc, DecodedDocument& out);

}  // namespace strata::api
