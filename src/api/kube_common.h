#pragma once

#include "api/decode_probe.h"
#include "api/field_reader.h"
#include "api/field_schema.h"
#include "api/hand_set_rendezvous.h"
#include "api/job.h"
#include "api/kinds.h"
#include "api/object_meta.h"
#include "api/service.h"
#include "api/validation.h"
#include "api/workload.h"

namespace strata::api {

// A compatible kind's document: apiVersion, kind, metadata, the given spec, and a status that
// strata ignores with a warning (status is strata's to set; exported objects carry one).
TypeSchema CompatDocument(std::string_view kind, std::string_view api_version, std::string_view doc,
                          const TypeSchema* (*spec)());

// Conversion of Kubernetes core/v1 pieces (containers, resource requirements) that several
// compatible kinds embed. Reports under the view's path.

// A container's resources: cpu and memory (the requests are reserved, limits above them are what
// the processes may use; a request alone is both, a limit alone too), nvidia.com/gpu (limits;
// requests default to limits and must equal them, Kubernetes' rule for extended resources),
// nvidia.com/gpumem (HAMi's GPU memory per GPU, in MiB), nvidia.com/mig-<profile> (one MIG
// instance).
ResourceRequest FromKubeResources(const FieldView& resources, FieldErrors& errors);

// The one container of a pod template. Reports a list that does not hold exactly one, and,
// when `command_required`, a container without a command (a Kubeflow runtime's template may
// leave it to the TrainJob). `pod_spec`: the list's parent; the list is its "containers" field.
// The pod spec's nodeSelector is read when `node_selector_honoured` (a gang's pod template),
// and reported as not supported otherwise.
struct KubeContainer {
  ProcessTemplate process;
  ResourceRequest resources;
  std::map<std::string, std::string> node_selector;
};
// Its probes are read with `probe_defaults`; its declared ports are what they may name.
KubeContainer FromSingleContainer(const FieldView& pod_spec, WorkloadClass workload,
                                  FieldErrors& errors, bool command_required = true,
                                  bool node_selector_honoured = false,
                                  ProbeDefaults probe_defaults = ProbeDefaults::kNone,
                                  const HandSetRendezvous* rendezvous = nullptr);

// Kubeflow's processes per node (PyTorchJob's nprocPerNode, a TrainJob's or a runtime's
// numProcPerNode): a positive number (or its digits as a string), "auto", "gpu" or "cpu".
// Returns nullopt when the field is absent, or after reporting a value that is none of these.
std::optional<ProcPerNodeSetting> ReadProcPerNode(const FieldView& parent, std::string_view field,
                                                  FieldErrors& errors);

// The label by which a workload names a Kueue WorkloadPriorityClass: its priority in the queues.
inline constexpr std::string_view kKueuePriorityClassLabel = "kueue.x-k8s.io/priority-class";

// Kueue's topology-aware scheduling annotations on a pod template: the node label key whose
// value all of a gang's pods must (or should) share.
inline constexpr std::string_view kKueueRequiredTopologyAnnotation =
    "kueue.x-k8s.io/podset-required-topology";
inline constexpr std::string_view kKueuePreferredTopologyAnnotation =
    "kueue.x-k8s.io/podset-preferred-topology";

// The topology a pod template's Kueue annotations ask for (no level when none); every other
// annotation is reported as ignored. `pod_template`: the PodTemplateSpec.
TopologyConstraint TemplateTopology(const FieldView& pod_template, FieldErrors& errors);

// A Kubernetes activeDeadlineSeconds field of `parent` as a job's runtime limit (0 when absent);
// reports a value below 1 or above 100000 hours.
Duration ActiveDeadline(const FieldView& parent, FieldErrors& errors);

// The queue a workload names with Kueue's kueue.x-k8s.io/queue-name label (empty if none);
// the label is removed from `meta`, since it becomes the workload's queue.
std::string TakeQueueLabel(ObjectMeta& meta);

// The rules that make a Kubernetes batch/v1 JobSpec one strata gang, shared by the batch Job
// and JobSet's child Jobs (decode_batch_v1.cc). Each reports under the view's path.

// The pods of `spec`: parallelism (default 1), which must be at least 1, with completions equal
// to it (required when above 1: strata has no work-queue Jobs).
int64_t BatchJobParallelism(const FieldView& spec, FieldErrors& errors);

// backoffLimit (default 6, Kubernetes') into out.max_restarts, activeDeadlineSeconds into
// out.runtime_limit.
void DecodeBatchJobLimits(const FieldView& spec, JobSpec& out, FieldErrors& errors);

// Reports spec.suspend true without a queue: strata holds a `kind` back only in a queue.
void RequireQueueToSuspend(const FieldView& spec, std::string_view kind, const std::string& queue,
                           FieldErrors& errors);

// A gang's pod template (a PodTemplateSpec) into `out`: no nodeName or priority (set per job),
// the one container's process and resources, the nodeSelector, tolerations, Kueue's topology
// annotations and the priorityClassName. Does not judge restartPolicy, whose rules differ by kind.
// `command_required`: whether the container must give a command (FromSingleContainer's rule);
// `rendezvous`: the variables set by hand that mean what strata's own do (DropHandSetRendezvous).
void DecodeGangPodTemplate(const FieldView& pod_template, JobSpec& out, FieldErrors& errors,
                           bool command_required = true,
                           const HandSetRendezvous* rendezvous = nullptr);

// The rules that make a Kubernetes pod template whose pods run until deleted (a Deployment's,
// StatefulSet's or LeaderWorkerSet's) a Service's replicas (decode_apps_v1.cc).

// A PodTemplateSpec whose labels the pods carry.
const TypeSchema* ReplicaPodTemplateSchema();

// A replica's pod template into `out`: restartPolicy Always (Kubernetes' rule), no nodeName or
// priority (set per replica), the one container as the engine with its resources, tolerations,
// Kueue's topology annotations, the priorityClassName, and the kueue.x-k8s.io/queue-name label
// as the queue (reported when it contradicts a queue `out` already has). The template's other
// labels go into `labels`.
void DecodeReplicaPodTemplate(const FieldView& pod_template, ServiceSpec& out,
                              std::map<std::string, std::string>& labels, FieldErrors& errors);

// Reports each matchLabels entry of `selector` that `labels` (the template's, at `labels_path`)
// does not carry: Kubernetes' rule that the selector selects the template's pods.
void CheckSelector(const FieldView& selector, const std::map<std::string, std::string>& labels,
                   const std::string& labels_path, FieldErrors& errors);

// Whether a rollout bound's value (maxSurge, maxUnavailable) is 0 or "0%".
bool ZeroBound(const nlohmann::json& value);

// A rollout bound (maxSurge, maxUnavailable: Kubernetes' IntOrString) in pods: a count, or a
// percentage of `replicas` rounded up (`round_up`) or down. `fallback`, when the field is
// absent: a count ("1") or a percentage ("25%"). Reports any other value and returns 0.
int64_t RolloutBound(const FieldView& parent, std::string_view field, std::string_view fallback,
                     int64_t replicas, bool round_up, FieldErrors& errors);

}  // namespace strata::api
