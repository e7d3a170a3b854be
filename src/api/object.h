#pragma once

#include <string_view>
#include <variant>

#include "api/config_data.h"
#include "api/event.h"
#include "api/job.h"
#include "api/namespace.h"
#include "api/node.h"
#include "api/pod.h"
#include "api/queue.h"
#include "api/service.h"
#include "api/tenant.h"
#include "api/workload_priority_class.h"

namespace strata::api {

// Any native object. What decoding produces, and what the store, the controllers and the
// server hold. A value type; thread-compatible.
class Object {
 public:
  using Variant = std::variant<Node, Queue, ResourceFlavor, Job, Service, Pod, Tenant, Event,
                               Namespace, ConfigMap, Secret, WorkloadPriorityClass>;

  Object() = default;
  template <typename T>
  Object(T value) : value_(std::move(value)) {}

  // "Job", "Service", ...
  std::string_view kind() const;
  const ObjectMeta& metadata() const;
  ObjectMeta& metadata();
  const std::string& name() const { return metadata().name; }
  const std::string& namespace_name() const { return metadata().namespace_name; }

  const Variant& value() const { return value_; }
  Variant& value() { return value_; }
  template <typename T>
  const T* As() const {
    return std::get_if<T>(&value_);
  }
  template <typename T>
  T* As() {
    return std::get_if<T>(&value_);
  }

  bool operator==(const Object&) const = default;

 private:
  Variant value_;
};

// Whether objects of `kind` (a native kind name) live in a namespace.
bool IsNamespacedKind(std::string_view kind);

}  // namespace strata::api
