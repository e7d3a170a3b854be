#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "api/object_meta.h"
#include "common/status.h"

namespace strata::api {

// Kubernetes' v1 ConfigMap and Secret: named data that pods read into their environment
// (EnvVarSource, EnvFromSource), resolved by the node agent when a pod's processes start. Both
// are namespaced and served under /api/v1 in Kubernetes' own shape; the store keeps them as
// strata.dev/v1alpha1 like the other core kinds (api/served_form.h).

// The largest a ConfigMap's or Secret's data may be, all keys together (Kubernetes' limit).
inline constexpr size_t kMaxConfigDataBytes = 1 << 20;

// Plain configuration: `data` holds UTF-8 text, `binary_data` bytes (base64 on the wire). A key
// is in one of the two, never both.
struct ConfigMap {
  ObjectMeta metadata;
  std::map<std::string, std::string> data;
  std::map<std::string, std::string> binary_data;
  bool immutable = false;  // true: data and binaryData never change again

  bool operator==(const ConfigMap&) const = default;
};

// Confidential data: `data` holds bytes (base64 on the wire). A manifest's stringData (text) is
// merged into data when it is read, its keys winning, and is never stored, as in Kubernetes.
// Never printed by tables, describe or events; read only with a credential.
struct Secret {
  ObjectMeta metadata;
  std::string type = "Opaque";
  std::map<std::string, std::string> data;
  bool immutable = false;

  bool operator==(const Secret&) const = default;
};

// Whether `replacement` (a ConfigMap or Secret as stored) may replace `current`: not when
// `current` is immutable and the replacement changes its data, binaryData or type, or unsets
// immutable. Returns InvalidArgument naming the field, as Kubernetes' "field is immutable when
// `immutable` is set"; Ok for every other kind.
Status CheckImmutableUpdate(const nlohmann::json& current, const nlohmann::json& replacement);

}  // namespace strata::api
