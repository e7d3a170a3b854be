#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

#include "common/field_errors.h"

namespace strata::api {

// The shape of a manifest field's value. Every kind strata reads (native and compatible) is
// described by TypeSchema tables built from these; the same tables drive unknown-field
// detection, type checking and `strata explain`, so the three cannot drift apart.
enum class FieldType {
  kString,
  kBool,
  kInteger,             // any int64
  kNonNegativeInteger,  // int64 >= 0
  kNumber,              // finite number
  kQuantity,            // Kubernetes quantity: "8", "500m", "24Gi" (or a plain number)
  kDuration,            // "500ms", "30s", "5m", "1h30m"
  kTimestamp,           // RFC 3339: "2026-01-01T00:00:00Z"
  kEnum,                // one of FieldSpec::values
  kIntOrString,         // an integer or a string (decoder checks the string's meaning)
  kStringList,
  kStringMap,
  kQuantityMap,  // resource name -> quantity ("limits", "nominal quotas")
  kObject,       // a nested TypeSchema
  kObjectList,   // a list of a nested TypeSchema
  kObjectMap,    // string -> a nested TypeSchema (PyTorchJob replica specs)
  kFreeForm,     // any JSON object, kept as given (a managedFields entry's fieldsV1)
  kUnsupported,  // a field of a compatible kind that strata does not honour: an error
  kIgnored,      // a field that means nothing in this mode: accepted, reported as a warning
};

struct TypeSchema;

// One field of a TypeSchema. `doc` is what `strata explain` prints; for kUnsupported it is the
// reason given in the error, for kIgnored the one given in the warning.
struct FieldSpec {
  std::string_view name;
  FieldType type = FieldType::kString;
  std::string_view doc;
  const TypeSchema* (*nested)() = nullptr;    // kObject, kObjectList, kObjectMap
  std::vector<std::string_view> values = {};  // kEnum
  bool required = false;
  int64_t maximum = 0;  // kNonNegativeInteger: the largest value accepted (0: no limit)
};

// A JSON object's shape: its name for `explain` (e.g. "JobSpec"), what it is, and its fields.
// Schemas are immutable statics, built once; thread-safe to read.
struct TypeSchema {
  std::string_view name;
  std::string_view doc;
  std::vector<FieldSpec> fields;

  // The field named `name`, or nullptr.
  const FieldSpec* Find(std::string_view name) const;
};

// Checks `value` against `schema` and reports, under `path`, every unknown field (with a
// suggestion when a known one is one edit away), every field strata does not honour, every
// missing required field and every value of the wrong type, and warns of every field ignored in
// this mode. A null value counts as absent.
// After a clean pass, FieldView may read the value without further type checks.
void ValidateAgainstSchema(const nlohmann::json& value, const TypeSchema& schema,
                           std::string_view path, FieldErrors& errors);

// The type as `explain` prints it: "<string>", "<integer>", "<Object>", "<[]Object>".
std::string TypeName(const FieldSpec& field);

// How a value is described in "expected X, got Y": "\"three\"", "3", "an object", "a list".
std::string DescribeValue(const nlohmann::json& value);

}  // namespace strata::api
