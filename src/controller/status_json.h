#pragma once

#include <nlohmann/json.hpp>
#include <string>

// Lenient readers and terse writers for the status sections the controllers keep in stored
// bodies (job_status.h, service_status.h): a status is written only by strata's loops, so a
// missing field or one of the wrong type reads as its default, and empty fields are left out.
// Pure functions; thread-safe.
namespace strata::controller::status_json {

// object[key] as a string, or "" when absent or not a string.
std::string Text(const nlohmann::json& object, const char* key);
// object[key] as an integer, or 0 when absent or not an integer.
int64_t Integer(const nlohmann::json& object, const char* key);
// object[key] as a number, or 0 when absent or not a number.
double Number(const nlohmann::json& object, const char* key);
// Sets object[key] = value unless value is empty.
void PutText(nlohmann::json& object, const char* key, const std::string& value);

}  // namespace strata::controller::status_json
