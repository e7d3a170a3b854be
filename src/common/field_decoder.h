#pragma once

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/quantity.h"
#include "common/status.h"

namespace strata {

// InvalidArgument "<path>: <what>" (just "<what>" when the path is empty): the error of a field
// that a decoder read but a later check refuses (a duplicate name, a weight of zero).
Status InvalidField(std::string_view path, std::string_view what);

// A quantity written as Kubernetes reads them, as a string or a number ("80Gi", "500m", 4, 1.5);
// InvalidArgument when it is neither or does not parse.
Result<Quantity> QuantityFromJson(const nlohmann::json& value);

// Whether a list field must be there and hold something.
enum class Presence { kOptional, kRequired };

// Decodes a JSON value (parsed from JSON or YAML) that a user wrote by hand, strictly and one
// field at a time: every accessor checks its field's type and range, and fails with an
// InvalidArgument error "<path>: <what>" that names the field by its path (field_errors.h:
// "models[0].versions[1].weight"). An object read with a list of known fields refuses every
// other field ("unknown field; did you mean \"weight\"?"), so a misspelt field is an error,
// never ignored. Absent and null fields read as the accessor's fallback.
//
// The decoder of strata's own files: the gateway's config, the scheduler's scenarios, the price
// table, and the lines of the public traces. Each stops at its first error. Manifests are first
// checked against their kind's schema (api/field_schema.h), which reports all of a document's
// errors at once, and then read with api::FieldView; both name fields by the same paths.
//
// Cheap to copy: holds a pointer to the JSON, which must outlive it. Thread-compatible.
class FieldDecoder {
 public:
  // The object `value` at `path` ("" for a document's root), whose fields must be in `known`.
  static Result<FieldDecoder> Of(const nlohmann::json& value, std::string path,
                                 std::initializer_list<std::string_view> known);
  // The object `value` at `path` with any fields: for a line of a published trace, which may
  // carry more than strata reads, and for mappings whose keys are the user's (prices per model).
  static Result<FieldDecoder> OfAnyFields(const nlohmann::json& value, std::string path);

  const std::string& path() const { return path_; }
  // The path of field `name`: "limits" -> "limits.maxInFlight".
  std::string PathOf(std::string_view name) const;
  // InvalidArgument "<path of name>: <what>".
  Status Error(std::string_view name, std::string_view what) const;
  // InvalidArgument "<path>: <what>", about the object itself.
  Status ObjectError(std::string_view what) const;

  bool Has(std::string_view name) const;
  // The field's raw value; null when absent.
  const nlohmann::json& Raw(std::string_view name) const;
  // The object's field names, in sorted order.
  std::vector<std::string> Keys() const;

  Result<std::string> String(std::string_view name, std::string_view fallback = "") const;
  // A string that must be present and not empty.
  Result<std::string> RequiredString(std::string_view name) const;
  // A string that must be one of `choices`: `must be "Any" or "Never"`.
  Result<std::string> Choice(std::string_view name, std::initializer_list<std::string_view> choices,
                             std::string_view fallback) const;
  Result<bool> Bool(std::string_view name, bool fallback) const;
  // An integer in [minimum, maximum].
  Result<int64_t> Integer(std::string_view name, int64_t fallback,
                          int64_t minimum = std::numeric_limits<int64_t>::min(),
                          int64_t maximum = std::numeric_limits<int64_t>::max()) const;
  // An integer in [minimum, maximum] that must be present.
  Result<int64_t> RequiredInteger(std::string_view name, int64_t minimum,
                                  int64_t maximum = std::numeric_limits<int64_t>::max()) const;
  // A finite number >= minimum.
  Result<double> Number(std::string_view name, double fallback,
                        double minimum = -std::numeric_limits<double>::infinity()) const;
  // A quantity written as Kubernetes writes them, as a string or a number ("80Gi", 4, "500m"),
  // that is not negative; nullopt when absent.
  Result<std::optional<Quantity>> OptionalQuantity(std::string_view name) const;
  // A list of strings; kRequired: present and not empty.
  Result<std::vector<std::string>> StringList(std::string_view name,
                                              Presence presence = Presence::kOptional) const;
  // A mapping of string to string (labels, selectors).
  Result<std::map<std::string, std::string, std::less<>>> StringMap(std::string_view name) const;
  // A nested object whose fields must be in `known`; an absent one reads as empty.
  Result<FieldDecoder> Object(std::string_view name,
                              std::initializer_list<std::string_view> known) const;
  // A nested mapping whose keys are the user's; an absent one reads as empty.
  Result<FieldDecoder> Mapping(std::string_view name) const;
  // A list of objects whose fields must be in `known`, each at its indexed path; kRequired:
  // present and not empty.
  Result<std::vector<FieldDecoder>> ObjectList(std::string_view name,
                                               std::initializer_list<std::string_view> known,
                                               Presence presence = Presence::kOptional) const;
  // The raw items of a list (for lists whose items are not all objects); kRequired: present
  // and not empty. Item i's path is ItemPath(name, i), made only for an error.
  Result<std::span<const nlohmann::json>> List(std::string_view name,
                                               Presence presence = Presence::kOptional) const;
  // The path of item `index` of list `name`: "stages" -> "config.load.stages[2]".
  std::string ItemPath(std::string_view name, size_t index) const;

 private:
  FieldDecoder(const nlohmann::json& value, std::string path)
      : value_(&value), path_(std::move(path)) {}

  const nlohmann::json* value_;
  std::string path_;
};

}  // namespace strata
