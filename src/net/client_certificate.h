#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"

namespace strata::net {

// A new private key (ECDSA P-256) and a PKCS#10 request for a client certificate of it, whose
// subject is `common_name` in the organizations `organizations` (to a Kubernetes API server: the
// user and its groups, as system:node:NAME in system:nodes): {request PEM, key PEM}.
Result<std::pair<std::string, std::string>> ClientCertificateRequest(
    const std::string& common_name, const std::vector<std::string>& organizations);

// What a certificate (the first of a PEM bundle) says of its holder and its life.
struct CertificateFacts {
  std::string common_name;  // the subject's CN
  std::chrono::system_clock::time_point not_after;
};

// InvalidArgument when `pem` holds no certificate.
Result<CertificateFacts> ReadCertificate(const std::string& pem);

}  // namespace strata::net
