#pragma once

#include <string>
#include <utility>

#include "common/status.h"

namespace strata::net {

// A self-signed serving certificate for `host` (an IP address or a DNS name, in the subject
// alternative names), ECDSA P-256, valid for a year from now: {certificate PEM, key PEM}.
Result<std::pair<std::string, std::string>> SelfSignedCertificate(const std::string& host);

}  // namespace strata::net
