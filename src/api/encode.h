#pragma once

#include <nlohmann/json.hpp>

#include "api/object.h"

namespace strata::api {

// The canonical JSON of a native object: apiVersion strata.dev/v1alpha1, its kind, metadata,
// then its fields in a fixed order. Fields equal to their zero default are left out; fields
// whose default is not zero are always written, so decoding the result gives back an equal
// object (DecodeObject(EncodeObject(x)) == x). Thread-safe.
nlohmann::json EncodeObject(const Object& object);

}  // namespace strata::api
