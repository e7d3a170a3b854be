#include "common/json_fields.h"

#include "common/json_member.h"

namespace strata {

std::string TextAt(const nlohmann::json& object, std::string_view pointer, std::string fallback) {
  const nlohmann::json& value = FieldAt(object, pointer);
  if (value.is_string()) return value.get<std::string>();
  if (value.is_null()) return fallback;
  return value.dump();
}

const nlohmann::json& FieldAt(const nlohmann::json& object, std::string_view pointer) {
  nlohmann::json::json_pointer path{std::string(pointer)};
  return object.contains(path) ? object.at(path) : JsonNull();
}

}  // namespace strata
