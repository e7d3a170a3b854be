#pragma once

#include <string>

#include "api/object_meta.h"

namespace strata::api {

struct ObjectReference {
  std::string kind;
  std::string name;
  std::string namespace_name;
  std::string uid;

  bool operator==(const ObjectReference&) const = default;
};

// Something that happened to an object, Kubernetes' shape: repeated occurrences bump `count`
// and `last_timestamp`. Namespaced (in its object's namespace).
struct Event {
  ObjectMeta metadata;
  ObjectReference involved_object;
  std::string type = "Normal";  // Normal | Warning
  std::string reason;
  std::string message;
  int64_t count = 1;
  std::string first_timestamp;  // RFC 3339
  std::string last_timestamp;   // RFC 3339

  bool operator==(const Event&) const = default;
};

}  // namespace strata::api
