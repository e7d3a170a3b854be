#pragma once

#include <vector>

#include "api/field_reader.h"
#include "api/job.h"
#include "api/object_meta.h"
#include "api/service.h"
#include "api/validation.h"
#include "api/workload.h"

namespace strata::api {

// Reads pieces shared by native and compatible kinds from validated JSON, checking what the
// schema cannot (names, reserved env) and reporting under the view's path.

// `metadata` of a document. Namespaced kinds get namespace "default" when none is given;
// cluster-scoped kinds must not name one. `label_name`: the name must be a DNS-1123 label
// (it becomes part of pod names and host names), else a subdomain.
ObjectMeta DecodeMetadata(const FieldView& metadata, bool namespaced, bool label_name,
                          FieldErrors& errors);

ResourceRequest DecodeResourceRequest(const FieldView& view, FieldErrors& errors);
GpuSelector DecodeGpuSelector(const FieldView& view);
std::vector<Toleration> DecodeTolerations(const FieldView& parent, std::string_view field);
std::vector<EnvVar> DecodeEnv(const FieldView& parent, std::string_view field, FieldErrors& errors);
// An env item's valueFrom (env_source.cc), checked: exactly one source, no value beside it, a
// fieldRef path Kubernetes allows. nullopt when it has none (or on error).
std::optional<EnvVarSource> DecodeEnvVarSource(const FieldView& env_var, FieldErrors& errors);
// A container's envFrom list (env_source.cc).
std::vector<EnvFromSource> DecodeEnvFrom(const FieldView& parent, std::string_view field,
                                         FieldErrors& errors);
// A securityContext object; reports ids out of range and runAsNonRoot: true with runAsUser: 0.
SecurityContext DecodeSecurityContext(const FieldView& view, FieldErrors& errors);
// `env_names_reserved`: the names strata sets for `workload` are refused (ValidateEnv); false
// for a pod strata did not make (api::kForeignPodAnnotation), whose environment is the user's
// alone.
ProcessTemplate DecodeProcessTemplate(const FieldView& view, WorkloadClass workload,
                                      FieldErrors& errors, bool env_names_reserved = true);

// Fills service defaults that depend on other fields: one version "v1" when none is given,
// tensorParallel from the replica's whole GPUs, maxReplicas from minReplicas.
// `tensor_parallel_given`, `max_replicas_given`: whether the manifest set them.
void ApplyServiceDefaults(ServiceSpec& spec, bool tensor_parallel_given, bool max_replicas_given);

// The built-in priority classes workloads may name (Volcano's priorityClassName, Kubeflow's
// schedulingPolicy.priorityClass): critical 1000, standard 0, sheddable -1000, plus
// Kubernetes' system-cluster-critical and system-node-critical. Reports an unknown name.
std::optional<int64_t> PriorityForClass(std::string_view name, std::string_view path,
                                        FieldErrors& errors);

// Reports a workload priority class's value outside what Kubernetes lets users give a priority
// class (-2000000000 to 1000000000), at `path`.
void CheckWorkloadPriority(int64_t value, std::string_view path, FieldErrors& errors);

}  // namespace strata::api
