#pragma once

#include <nlohmann/json.hpp>
#include <string>

// Reading fields of objects the API server returns without trusting their shape: a field of
// something that is not an object, or of the wrong type, reads as absent (no exception).

namespace strata::kubesched {

// `object[key]`, or null when `object` is not an object or has no such field.
inline const nlohmann::json& Field(const nlohmann::json& object, const char* key) {
  static const nlohmann::json kNull;
  if (!object.is_object()) return kNull;
  auto it = object.find(key);
  return it == object.end() ? kNull : *it;
}

// `object[key]` when it is a string, else `fallback`.
inline std::string StringField(const nlohmann::json& object, const char* key,
                               const std::string& fallback = "") {
  const nlohmann::json& value = Field(object, key);
  return value.is_string() ? value.get<std::string>() : fallback;
}

}  // namespace strata::kubesched
