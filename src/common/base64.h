#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace strata {

// RFC 4648 base64 with padding: how Kubernetes carries a Secret's data and a ConfigMap's
// binaryData in JSON. Pure; thread-safe.

std::string Base64Encode(std::string_view bytes);

// The bytes `text` encodes, or nullopt when it is not padded standard base64 (an alphabet
// other than A-Z a-z 0-9 + /, a length not a multiple of 4, padding anywhere but the end).
std::optional<std::string> Base64Decode(std::string_view text);

}  // namespace strata
