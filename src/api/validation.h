#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "api/workload.h"
#include "common/field_errors.h"

namespace strata::api {

// Checks shared by the native and the compatible decoders. Each reports under the given path
// and returns nothing: callers collect every error of a document before giving up.

// A DNS-1123 subdomain: lowercase letters, digits, '-' and '.', at most 253 characters, starting
// and ending with a letter or digit.
void ValidateSubdomainName(std::string_view name, std::string_view path, FieldErrors& errors);
// A DNS-1123 label: like a subdomain without '.', at most 63 characters.
void ValidateLabelName(std::string_view name, std::string_view path, FieldErrors& errors);
// Label keys ([prefix/]name) and values, Kubernetes' rules.
void ValidateLabels(const std::map<std::string, std::string>& labels, std::string_view path,
                    FieldErrors& errors);

// Annotation keys, Kubernetes' rules (as label keys; the values are free).
void ValidateAnnotationKeys(const std::map<std::string, std::string>& annotations,
                            std::string_view path, FieldErrors& errors);

// The largest request body the API takes, as kube-apiserver's (3 MiB); no write, a patched
// object's included, stores an object larger than that.
inline constexpr size_t kMaxRequestBytes = 3 * 1024 * 1024;

// Ceilings on how many pods one object asks for. Kubernetes has no such field limit, only its
// scalability envelope (5,000 nodes, 150,000 pods a cluster); strata refuses at the door what no
// cluster it runs could hold, so that one manifest cannot make a controller create pods without
// end. A Job's replicas are one gang (10,000 nodes of 8 GPUs: 80,000 GPUs placed at once); a
// Service's min/maxReplicas count replicas, each of nodesPerReplica pods (one gang each).
inline constexpr int64_t kMaxJobReplicas = 10'000;
inline constexpr int64_t kMaxServiceReplicas = 10'000;
inline constexpr int64_t kMaxNodesPerReplica = 1'000;

// Adds "<value> exceeds the limit of <limit>" under `path` when `value` is above `limit`.
void ValidateCeiling(int64_t value, int64_t limit, std::string_view path, FieldErrors& errors);

// Which environment names the platform sets for a workload and users may not.
enum class WorkloadClass { kTraining, kService };

// Rejects reserved names (torchrun's contract, CUDA_VISIBLE_DEVICES, STRATA_*, and for
// services LWS_*), empty and duplicate names. `path` is the env list's path. `stood_in`, when
// given (one flag per variable), marks variables for which strata's own values stand in
// (HandSetStandIns): those are not judged.
void ValidateEnv(const std::vector<EnvVar>& env, WorkloadClass workload, std::string_view path,
                 FieldErrors& errors, const std::vector<bool>& stood_in = {});

// GPU requests above one GPU are whole; a MIG profile excludes a GPU count.
void ValidateResourceRequest(const ResourceRequest& request, std::string_view path,
                             FieldErrors& errors);

}  // namespace strata::api
