#include "api/validation.h"

#include <algorithm>
#include <array>
#include <set>

#include "api/torchrun_env.h"

namespace strata::api {
namespace {

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool IsAlnum(char c) { return IsLowerAlnum(c) || (c >= 'A' && c <= 'Z'); }

bool IsDnsLabel(std::string_view s) {
  if (s.empty() || s.size() > 63 || !IsLowerAlnum(s.front()) || !IsLowerAlnum(s.back())) {
    return false;
  }
  return std::all_of(s.begin(), s.end(), [](char c) { return IsLowerAlnum(c) || c == '-'; });
}

bool IsDnsSubdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  size_t start = 0;
  while (true) {
    size_t dot = s.find('.', start);
    if (!IsDnsLabel(s.substr(start, dot == std::string_view::npos ? dot : dot - start))) {
      return false;
    }
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

// A label value or the name part of a key: at most 63 of [A-Za-z0-9_.-], alphanumeric at the
// ends. Empty is allowed for values only.
bool IsLabelToken(std::string_view s) {
  if (s.empty()) return true;
  if (s.size() > 63 || !IsAlnum(s.front()) || !IsAlnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return IsAlnum(c) || c == '-' || c == '_' || c == '.'; });
}

// A label or annotation key: [prefix/]name, the prefix a DNS subdomain (Kubernetes' qualified
// name).
bool IsQualifiedName(std::string_view key) {
  size_t slash = key.find('/');
  std::string_view prefix = slash == std::string_view::npos ? "" : key.substr(0, slash);
  std::string_view name = slash == std::string_view::npos ? key : key.substr(slash + 1);
  return !name.empty() && IsLabelToken(name) &&
         (slash == std::string_view::npos || IsDnsSubdomain(prefix));
}

bool IsReservedEnv(std::string_view name, WorkloadClass workload) {
  if (name == "LWS_WORKER_INDEX" || name == "LWS_LEADER_ADDRESS" || name == "LWS_GROUP_SIZE" ||
      name == "PORT") {
    return workload == WorkloadClass::kService;
  }
  return IsReservedEnvName(name);
}

}  // namespace

void ValidateSubdomainName(std::string_view name, std::string_view path, FieldErrors& errors) {
  if (name.empty()) {
    errors.Add(std::string(path), "required field is missing");
  } else if (!IsDnsSubdomain(name)) {
    errors.Add(std::string(path),
               Quoted(name) +
                   " is not a valid name: use lowercase letters, digits, '-' and '.', starting and "
                   "ending with a letter or digit (DNS-1123 subdomain, at most 253 characters)");
  }
}

void ValidateLabelName(std::string_view name, std::string_view path, FieldErrors& errors) {
  if (name.empty()) {
    errors.Add(std::string(path), "required field is missing");
  } else if (!IsDnsLabel(name)) {
    errors.Add(std::string(path),
               Quoted(name) +
                   " is not a valid name: use lowercase letters, digits and '-', starting and "
                   "ending with a letter or digit (DNS-1123 label, at most 63 characters)");
  }
}

void ValidateLabels(const std::map<std::string, std::string>& labels, std::string_view path,
                    FieldErrors& errors) {
  for (const auto& [key, value] : labels) {
    if (!IsQualifiedName(key)) {
      errors.Add(KeyPath(path, key),
                 "invalid label key: use [prefix/]name, name at most 63 of A-Z a-z 0-9 - _ .");
    } else if (!IsLabelToken(value)) {
      errors.Add(KeyPath(path, key),
                 "invalid label value " + Quoted(value) +
                     ": at most 63 of A-Z a-z 0-9 - _ ., alphanumeric at the ends");
    }
  }
}

void ValidateAnnotationKeys(const std::map<std::string, std::string>& annotations,
                            std::string_view path, FieldErrors& errors) {
  for (const auto& [key, value] : annotations) {
    if (!IsQualifiedName(key)) {
      errors.Add(KeyPath(path, key),
                 "invalid annotation key: use [prefix/]name, name at most 63 of A-Z a-z 0-9 - _ .");
    }
  }
}

void ValidateCeiling(int64_t value, int64_t limit, std::string_view path, FieldErrors& errors) {
  if (value > limit) {
    errors.Add(std::string(path),
               std::to_string(value) + " exceeds the limit of " + std::to_string(limit));
  }
}

void ValidateEnv(const std::vector<EnvVar>& env, WorkloadClass workload, std::string_view path,
                 FieldErrors& errors, const std::vector<bool>& stood_in) {
  std::set<std::string_view> seen;
  for (size_t i = 0; i < env.size(); ++i) {
    if (i < stood_in.size() && stood_in[i]) continue;
    std::string name_path = JoinPath(IndexPath(path, i), "name");
    const std::string& name = env[i].name;
    if (name.empty()) {
      errors.Add(name_path, "must not be empty");
    } else if (IsReservedEnv(name, workload)) {
      errors.Add(name_path, Quoted(name) +
                                " is reserved: strata sets it for every process (torchrun's and "
                                "LeaderWorkerSet's contract, CUDA_VISIBLE_DEVICES, STRATA_*); "
                                "remove it");
    } else if (!seen.insert(name).second) {
      errors.Add(name_path, "duplicate environment variable " + Quoted(name));
    }
  }
}

void ValidateResourceRequest(const ResourceRequest& request, std::string_view path,
                             FieldErrors& errors) {
  if (request.gpu.milli() > 1000 && request.gpu.milli() % 1000 != 0) {
    errors.Add(JoinPath(path, "gpu"), "more than one GPU must be a whole number of GPUs, got " +
                                          Quoted(request.gpu.ToString()));
  }
  const std::string limits = JoinPath(path, "limits");
  if (!request.cpu_limit.IsZero() && request.cpu_limit < request.cpu) {
    errors.Add(JoinPath(limits, "cpu"), "must be at least the reservation (" +
                                            request.cpu.ToString() + "), got " +
                                            Quoted(request.cpu_limit.ToString()));
  }
  if (!request.memory_limit.IsZero() && request.memory_limit < request.memory) {
    errors.Add(JoinPath(limits, "memory"), "must be at least the reservation (" +
                                               request.memory.ToString() + "), got " +
                                               Quoted(request.memory_limit.ToString()));
  }
  if (!request.mig_profile.empty() && !request.gpu.IsZero()) {
    errors.Add(JoinPath(path, "migProfile"),
               "a MIG instance is requested instead of GPUs; remove gpu or migProfile");
  }
}

}  // namespace strata::api
