#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/quantity.h"

namespace strata::api {

// Typed, read-only access to the fields of a JSON object that has already passed
// ValidateAgainstSchema: absent and null fields read as the given default, and values are known
// to have the right type, so no accessor fails. Also carries the object's field path, so that
// semantic checks can name the field they complain about. Cheap to copy (holds a pointer to the
// JSON, which must outlive it); thread-compatible.
class FieldView {
 public:
  // `value` may be null (an absent object reads as empty).
  FieldView(const nlohmann::json& value, std::string path);

  const std::string& path() const { return path_; }
  // The path of child `name`: "spec" -> "spec.replicas".
  std::string PathOf(std::string_view name) const;
  const nlohmann::json& json() const { return *value_; }

  bool Has(std::string_view name) const;
  std::string String(std::string_view name, std::string_view fallback = "") const;
  bool Bool(std::string_view name, bool fallback) const;
  int64_t Integer(std::string_view name, int64_t fallback) const;
  double Number(std::string_view name, double fallback) const;
  Quantity GetQuantity(std::string_view name, Quantity fallback = Quantity()) const;
  std::optional<Quantity> OptionalQuantity(std::string_view name) const;
  Duration GetDuration(std::string_view name, Duration fallback = Duration(0)) const;
  std::vector<std::string> StringList(std::string_view name) const;
  std::map<std::string, std::string> StringMap(std::string_view name) const;
  std::map<std::string, Quantity> QuantityMap(std::string_view name) const;
  // A nested object (empty if absent).
  FieldView Object(std::string_view name) const;
  // The items of a list of objects, each with its indexed path.
  std::vector<FieldView> ObjectList(std::string_view name) const;
  // The raw value (null if absent).
  const nlohmann::json& Raw(std::string_view name) const;

 private:
  const nlohmann::json* value_;
  std::string path_;
};

}  // namespace strata::api
