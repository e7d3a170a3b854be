#include "common/json_member.h"

namespace strata {

const nlohmann::json& JsonNull() {
  static const nlohmann::json kNull;
  return kNull;
}

const nlohmann::json& MemberOrNull(const nlohmann::json& object, std::string_view key) {
  if (!object.is_object()) return JsonNull();
  auto it = object.find(key);
  return it == object.end() ? JsonNull() : *it;
}

std::string StringMemberOr(const nlohmann::json& object, std::string_view key,
                           std::string_view fallback) {
  const nlohmann::json& value = MemberOrNull(object, key);
  return value.is_string() ? value.get<std::string>() : std::string(fallback);
}

int64_t IntegerMemberOr(const nlohmann::json& object, std::string_view key, int64_t fallback) {
  const nlohmann::json& value = MemberOrNull(object, key);
  return value.is_number_integer() ? value.get<int64_t>() : fallback;
}

}  // namespace strata
