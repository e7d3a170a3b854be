#pragma once

#include "api/object_meta.h"

namespace strata::api {

// A namespace, as Kubernetes' v1 Namespace: the scope of namespaced objects' names.
// Cluster-scoped. A namespaced object written into a namespace that has no Namespace yet creates
// it (strata has always taken objects in any namespace); deleting a Namespace deletes every
// object in it. It is always Active: its deletion is done when the request is answered.
struct Namespace {
  ObjectMeta metadata;

  bool operator==(const Namespace&) const = default;
};

}  // namespace strata::api
