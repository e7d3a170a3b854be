#pragma once

#include <nlohmann/json.hpp>

#include "api/field_schema.h"

namespace strata::api {

// The OpenAPI v3 schema of a TypeSchema's fields, structural as a CustomResourceDefinition's
// must be (every node typed, no $ref), so that the Kubernetes API server validates and
// `kubectl explain` describes strata's kinds from the same tables strata's decoders use.
//
//   kString                    string
//   kBool                      boolean
//   kInteger                   integer, format int64
//   kNonNegativeInteger        integer, format int64, minimum 0
//   kNumber                    number
//   kQuantity                  int-or-string with Kubernetes' quantity pattern
//   kDuration                  string with the pattern ParseDuration accepts
//   kTimestamp                 string, format date-time
//   kEnum                      string with the enum's values
//   kIntOrString               int-or-string
//   kStringList, kStringMap, kQuantityMap, kObjectList, kObjectMap: arrays and maps of those
//   kObject                    an object with the nested schema's properties and required list
//   kUnsupported               declared (int-or-string, which CEL can see), and refused by a
//                              CEL rule on its object whose message is the field's doc, so it
//                              is never pruned silently
//   kIgnored                   declared as any value and kept (the API server cannot warn)
//
// Descriptions are the fields' `doc`. A schema that contains itself (none does today) is cut
// at the repetition to an object that keeps unknown fields. Pure; thread-safe.

// The schema of one object with `schema`'s fields: {"type": "object", "properties": ...}.
nlohmann::json OpenApiObjectSchema(const TypeSchema& schema);

// The schema of one field's value, with its description.
nlohmann::json OpenApiFieldSchema(const FieldSpec& field);

// Kubernetes' own pattern for a quantity written as a string (apimachinery's
// resource.Quantity, as controller-gen writes it into CRDs).
inline constexpr const char* kQuantityPattern =
    "^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\."
    "[0-9]*)?)|(\\.[0-9]+))))?$";

// What ParseDuration accepts: "500ms", "30s", "1h30m".
inline constexpr const char* kDurationPattern = "^([0-9]+(ms|h|m|s))+$";

}  // namespace strata::api
