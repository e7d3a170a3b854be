#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/quantity.h"

namespace strata::api {

// Where an environment variable's value comes from when the manifest does not give it:
// Kubernetes' EnvVarSource. Stored on the pod as written and resolved by the node agent when the
// pod's processes start (node/env_resolution.h), as the kubelet does: a Secret's value never
// enters a stored spec.
enum class EnvSourceKind {
  kConfigMapKey,   // configMapKeyRef: `key` of ConfigMap `name`
  kSecretKey,      // secretKeyRef: `key` of Secret `name`
  kField,          // fieldRef: `path` of the pod (metadata.name, status.podIP...)
  kResourceField,  // resourceFieldRef: `path` (limits.cpu...) of the pod, over `divisor`
};

struct EnvVarSource {
  EnvSourceKind kind = EnvSourceKind::kConfigMapKey;
  std::string name;  // the ConfigMap's or Secret's
  std::string key;
  bool optional = false;  // a missing object or key leaves the variable unset
  std::string path;       // kField: fieldPath; kResourceField: resource
  Quantity divisor;       // kResourceField; zero: 1

  bool operator==(const EnvVarSource&) const = default;
};

// Every key of a ConfigMap or Secret as variables (Kubernetes' EnvFromSource): `prefix` + key.
struct EnvFromSource {
  bool secret = false;  // secretRef, else configMapRef
  std::string name;
  std::string prefix;
  bool optional = false;

  bool operator==(const EnvFromSource&) const = default;
};

// The fieldRef paths a variable may read, as Kubernetes allows them for env ("metadata.name",
// "metadata.labels['<key>']", "status.podIP", ...): whether `path` is one.
bool IsEnvFieldPath(const std::string& path);

// Whether a process template reads ConfigMap (`secret` false) or Secret `name` through env
// valueFrom or envFrom.
struct ProcessTemplate;
bool TemplateReads(const ProcessTemplate& t, bool secret, std::string_view name);

// The resourceFieldRef resources a variable may read: limits.cpu, limits.memory, requests.cpu,
// requests.memory.
bool IsEnvResource(const std::string& resource);

}  // namespace strata::api
