#pragma once

#include <string>
#include <vector>

#include "api/object_meta.h"

namespace strata::api {

struct TenantSpec {
  std::vector<std::string> api_keys;        // bearer tokens that identify the tenant at the gateway
  int64_t tokens_per_minute = 0;            // 0: unlimited
  std::string priority_class = "standard";  // critical | standard | sheddable

  bool operator==(const TenantSpec&) const = default;
};

// A consumer of inference services, with its keys and token quota. Cluster-scoped.
struct Tenant {
  ObjectMeta metadata;
  TenantSpec spec;

  bool operator==(const Tenant&) const = default;
};

}  // namespace strata::api
