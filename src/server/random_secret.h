#pragma once

#include <string>

#include "common/status.h"

namespace strata::server {

inline constexpr size_t kSecretBytes = 32;

// 2 x kSecretBytes hex digits from the kernel's random source: node credentials, join tokens.
Result<std::string> NewSecret();

}  // namespace strata::server
