#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

// Reading JSON whose shape is not trusted (objects an API server returns, documents already
// checked elsewhere) without exceptions: a member of something that is not an object, or one
// that is absent, reads as null. Pure; thread-safe. For files users write, which must be read
// strictly, see field_decoder.h.

namespace strata {

// The JSON null, for readers that hand out a reference to a value that is not there.
const nlohmann::json& JsonNull();

// `object[key]`, or null when `object` is not an object or has no such member.
const nlohmann::json& MemberOrNull(const nlohmann::json& object, std::string_view key);

// `object[key]` when it is a string, else `fallback`.
std::string StringMemberOr(const nlohmann::json& object, std::string_view key,
                           std::string_view fallback = "");

// `object[key]` when it is an integer, else `fallback`.
int64_t IntegerMemberOr(const nlohmann::json& object, std::string_view key, int64_t fallback);

}  // namespace strata
