#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "common/clock.h"
#include "common/status.h"

namespace strata::store {

using Labels = std::map<std::string, std::string>;

// Identifies one object: its kind ("Job"), its namespace (empty for cluster-scoped kinds such as
// "Node") and its name. Ordered by kind, then namespace, then name, so the objects of one kind
// are contiguous in an ordered container. A plain value.
struct ObjectKey {
  std::string kind;
  std::string namespace_name;
  std::string name;

  auto operator<=>(const ObjectKey&) const = default;
  bool operator==(const ObjectKey&) const = default;

  // "Job \"team-a/train\"" or "Node \"gpu-1\"": how errors name an object.
  std::string Describe() const;
};

// One stored object, held generically: the store knows its key, labels and the version fields
// it assigns; everything else is the opaque JSON `body` that typed wrappers (the api module)
// encode and decode. A plain value; copies are independent.
//
// The store owns `uid`, `resource_version` and `creation_timestamp`: it ignores what a caller
// puts there on create, keeps uid and creation time across updates, and writes all of them,
// with the key and the labels, into `body["metadata"]` (Kubernetes' field names:
// name, namespace, labels, uid, resourceVersion as a decimal string, creationTimestamp), so the
// body alone is the object a client sees.
struct Object {
  ObjectKey key;
  Labels labels;
  nlohmann::json body = nlohmann::json::object();

  std::string uid;
  // On reads: the version of the write that produced this state. On update and delete requests:
  // a precondition (0 means none).
  int64_t resource_version = 0;
  TimePoint creation_timestamp{};

  bool operator==(const Object&) const = default;
};

// Checks what a caller controls in an object about to be written: a non-empty kind and name of
// at most 253 characters without '/' or control characters, a namespace of the same form (or
// empty), label keys that are non-empty, and a body that is a JSON object or null. Returns
// InvalidArgument naming the field ("metadata.name: must not be empty") on failure.
Status ValidateObject(const Object& object);

// Writes the store-owned fields, the key and the labels into object->body["metadata"], turning
// a null body into an object. REQUIRES: ValidateObject(*object).ok().
void StampMetadata(Object* object);

// A resourceVersion as an API serves it (a decimal string) as the store's version. Returns
// InvalidArgument naming metadata.resourceVersion when it is not a non-negative integer.
Result<int64_t> ParseResourceVersion(std::string_view text);

// A store object from a body as an API serves it (strata's REST API, or the Kubernetes API once
// translated): key (kind `kind`, metadata namespace and name), labels, uid, resourceVersion and
// creationTimestamp; the body is kept whole. InvalidArgument naming the field when one is
// malformed.
Result<Object> ObjectFromBody(std::string_view kind, const nlohmann::json& body);

}  // namespace strata::store
