#include "controller/status_json.h"

namespace strata::controller::status_json {

std::string Text(const nlohmann::json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

int64_t Integer(const nlohmann::json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
}

double Number(const nlohmann::json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_number() ? it->get<double>() : 0.0;
}

void PutText(nlohmann::json& object, const char* key, const std::string& value) {
  if (!value.empty()) object[key] = value;
}

}  // namespace strata::controller::status_json
