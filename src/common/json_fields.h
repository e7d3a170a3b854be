#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace strata {

// Reading objects as the REST API serves them (JSON), for tables and descriptions: a missing
// field reads as a fallback, never an error. Pure; thread-safe.

// The value at the JSON pointer `pointer` ("/status/phase") as text: a string as it is, another
// value as JSON, `fallback` when absent or null.
std::string TextAt(const nlohmann::json& object, std::string_view pointer,
                   std::string fallback = "");

// The value at `pointer`, or null when absent.
const nlohmann::json& FieldAt(const nlohmann::json& object, std::string_view pointer);

}  // namespace strata
