#pragma once

#include <map>
#include <string>
#include <string_view>

namespace strata::api {

// The apiVersion of every native kind.
inline constexpr std::string_view kApiVersion = "strata.dev/v1alpha1";
// The namespace of a namespaced object that names none.
inline constexpr std::string_view kDefaultNamespace = "default";

// Identity and bookkeeping common to every object, as in Kubernetes' ObjectMeta. `uid`,
// `resource_version` and `creation_timestamp` are set by the store; decoding keeps them as given
// so that stored objects round-trip. A plain value; thread-compatible.
struct ObjectMeta {
  std::string name;
  std::string namespace_name;  // empty for cluster-scoped kinds
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  std::string uid;
  std::string resource_version;
  std::string creation_timestamp;  // RFC 3339
  // metadata.managedFields, which fields each manager set (server-side apply), as the compact
  // JSON text of the list; empty when there are none. Written by the REST API
  // (server/field_manager.h), kept as given by every other reader and writer.
  std::string managed_fields;

  bool operator==(const ObjectMeta&) const = default;
};

// The label a Kueue workload names its LocalQueue with; strata reads it as the queue.
inline constexpr std::string_view kKueueQueueNameLabel = "kueue.x-k8s.io/queue-name";
// The annotation that puts a pod in a Volcano PodGroup.
inline constexpr std::string_view kVolcanoGroupNameAnnotation = "scheduling.k8s.io/group-name";

}  // namespace strata::api
