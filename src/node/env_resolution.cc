#include "node/env_resolution.h"

#include <fmt/format.h>

#include <map>

#include "api/manifest.h"
#include "api/torchrun_env.h"
#include "node/env_references.h"

namespace strata::node {
namespace {

std::string_view Noun(bool secret) { return secret ? "secret" : "configmap"; }
std::string_view Kind(bool secret) { return secret ? "Secret" : "ConfigMap"; }

// The data of ConfigMap or Secret `name` in `namespace_name` (a ConfigMap's binaryData beside its
// data), or nullopt when it does not exist.
Result<std::optional<std::map<std::string, std::string>>> ReadData(
    store::Store& store, bool secret, const std::string& namespace_name, const std::string& name) {
  Result<store::Object> raw = store.Get({std::string(Kind(secret)), namespace_name, name});
  if (!raw) {
    if (raw.error().code() == StatusCode::kNotFound) {
      return std::optional<std::map<std::string, std::string>>();
    }
    return Err(raw.error());
  }
  ASSIGN_OR_RETURN(api::Object object, api::DecodeObject(raw->body));
  if (const api::Secret* value = object.As<api::Secret>()) return {value->data};
  const api::ConfigMap* config = object.As<api::ConfigMap>();
  if (config == nullptr) {
    return Err(InternalError(fmt::format("{} is not a {}", raw->key.Describe(), Kind(secret))));
  }
  std::map<std::string, std::string> data = config->data;
  data.insert(config->binary_data.begin(), config->binary_data.end());
  return {std::move(data)};
}

// The value of fieldRef `path` ("metadata.labels['app']" reads one label).
std::string FieldValue(const api::Pod& pod, const PodPlacement& placement,
                       const std::string& path) {
  auto subscript = [&](std::string_view head, const std::map<std::string, std::string>& map) {
    const std::string key = path.substr(head.size(), path.size() - head.size() - 2);
    auto found = map.find(key);
    return found == map.end() ? std::string() : found->second;
  };
  if (path.starts_with("metadata.labels['")) {
    return subscript("metadata.labels['", pod.metadata.labels);
  }
  if (path.starts_with("metadata.annotations['")) {
    return subscript("metadata.annotations['", pod.metadata.annotations);
  }
  if (path == "metadata.name") return pod.metadata.name;
  if (path == "metadata.namespace") return pod.metadata.namespace_name;
  if (path == "metadata.uid") return pod.metadata.uid;
  if (path == "spec.nodeName") return pod.spec.node_name;
  if (path == "status.podIP") return placement.pod_ip;
  if (path == "status.hostIP") return placement.host_ip;
  // strata's pods carry no service account; Kubernetes names the one every pod gets.
  if (path == "spec.serviceAccountName") return "default";
  return "";
}

// resourceFieldRef: the amount over the divisor, rounded up, as Kubernetes computes it.
std::string ResourceValue(const api::Pod& pod, const PodPlacement& placement,
                          const api::EnvVarSource& source) {
  const api::ResourceRequest& r = pod.spec.resources;
  const bool cpu = source.path.ends_with(".cpu");
  Quantity amount;
  if (source.path.starts_with("requests.")) {
    amount = cpu ? r.cpu : r.memory;
  } else {
    amount = cpu ? r.EnforcedCpu() : r.EnforcedMemory();
    if (amount.IsZero()) amount = cpu ? placement.node_cpu : placement.node_memory;
  }
  const int64_t divisor = source.divisor.milli() > 0 ? source.divisor.milli() : 1000;
  return std::to_string((amount.milli() + divisor - 1) / divisor);
}

}  // namespace

Result<std::vector<api::EnvVar>> ResolvePodEnvironment(const api::Pod& pod,
                                                       const PodPlacement& placement,
                                                       store::Store& store) {
  const api::ProcessTemplate& t = pod.spec.template_;
  const std::string& ns = pod.metadata.namespace_name;
  std::vector<api::EnvVar> out;
  api::Environment defined;  // what a later $(NAME) sees
  auto define = [&](const std::string& name, std::string value) {
    defined[name] = value;
    out.push_back({name, std::move(value)});
  };
  for (size_t i = 0; i < t.env_from.size(); ++i) {
    const api::EnvFromSource& source = t.env_from[i];
    ASSIGN_OR_RETURN(auto data, ReadData(store, source.secret, ns, source.name));
    if (!data) {
      if (source.optional) continue;
      return Err(FailedPreconditionError(
          fmt::format("{} \"{}\" not found (envFrom[{}])", Noun(source.secret), source.name, i)));
    }
    for (auto& [key, value] : *data) {
      const std::string name = source.prefix + key;
      if (api::IsReservedEnvName(name)) {
        return Err(FailedPreconditionError(fmt::format(
            "envFrom[{}]: {} {}/{} sets {}, which strata reserves (torchrun's contract, "
            "CUDA_VISIBLE_DEVICES, STRATA_*); give a prefix",
            i, Kind(source.secret), ns, source.name, name)));
      }
      define(name, std::move(value));
    }
  }
  for (const api::EnvVar& env : t.env) {
    if (!env.value_from) {
      define(env.name, ExpandEnvReferences(env.value, defined));
      continue;
    }
    const api::EnvVarSource& source = *env.value_from;
    switch (source.kind) {
      case api::EnvSourceKind::kConfigMapKey:
      case api::EnvSourceKind::kSecretKey: {
        const bool secret = source.kind == api::EnvSourceKind::kSecretKey;
        ASSIGN_OR_RETURN(auto data, ReadData(store, secret, ns, source.name));
        if (!data) {
          if (source.optional) break;
          return Err(FailedPreconditionError(
              fmt::format("{} \"{}\" not found (env {})", Noun(secret), source.name, env.name)));
        }
        auto value = data->find(source.key);
        if (value == data->end()) {
          if (source.optional) break;
          return Err(FailedPreconditionError(
              fmt::format("couldn't find key {} in {} {}/{} (env {})", source.key, Kind(secret), ns,
                          source.name, env.name)));
        }
        define(env.name, value->second);
        break;
      }
      case api::EnvSourceKind::kField:
        define(env.name, FieldValue(pod, placement, source.path));
        break;
      case api::EnvSourceKind::kResourceField:
        define(env.name, ResourceValue(pod, placement, source));
        break;
    }
  }
  return out;
}

}  // namespace strata::node
