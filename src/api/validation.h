#pragma once

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

// Which environment names the platform sets for a workload and users may not.
enum class WorkloadClass { kTraining, kService };

// Rejects reserved names (torchrun's contract, CUDA_VISIBLE_DEVICES, STRATA_*, and for
// services LWS_*), empty and duplicate names. `path` is the env list's path.
void ValidateEnv(const std::vector<EnvVar>& env, WorkloadClass workload, std::string_view path,
                 FieldErrors& errors);

// GPU requests above one GPU are whole; a MIG profile excludes a GPU count.
void ValidateResourceRequest(const ResourceRequest& request, std::string_view path,
                             FieldErrors& errors);

}  // namespace strata::api
