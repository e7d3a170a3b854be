#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "api/duration.h"
#include "common/quantity.h"

// How the canonical encoding writes a field: left out when it holds its zero default. Shared by
// the encoders of specs (encode.cc) and of statuses (status_codec.cc).
namespace strata::api {

using nlohmann::json;

inline void PutString(json& out, const char* key, const std::string& value) {
  if (!value.empty()) out[key] = value;
}

inline void PutQuantity(json& out, const char* key, const Quantity& value) {
  if (!value.IsZero()) out[key] = value.ToString();
}

inline void PutInt(json& out, const char* key, int64_t value) {
  if (value != 0) out[key] = value;
}

inline void PutDuration(json& out, const char* key, Duration value) {
  if (value.count() != 0) out[key] = FormatDuration(value);
}

inline void PutStrings(json& out, const char* key, const std::vector<std::string>& values) {
  if (!values.empty()) out[key] = values;
}

inline void PutMap(json& out, const char* key, const std::map<std::string, std::string>& values) {
  if (!values.empty()) out[key] = values;
}

inline void PutObject(json& out, const char* key, json value) {
  if (!value.empty()) out[key] = std::move(value);
}

}  // namespace strata::api
