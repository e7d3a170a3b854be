#pragma once

#include <string>
#include <utility>

#include "common/status.h"

namespace strata::server {

// What `strata up` writes into its data dir so that kubectl and client-go reach its API over
// HTTPS (they send no credential over plain HTTP): the API's self-signed serving certificate,
// which a kubeconfig trusts as its certificate authority, and that kubeconfig, naming the
// admin credential. Both are replaced at each start (the certificate is new, the port may be).
inline constexpr char kApiCertificateFileName[] = "api-ca.crt";
inline constexpr char kKubeconfigFileName[] = "kubeconfig";

// The host a certificate and a kubeconfig name for an API listening on `listen_host`: the host
// itself, or 127.0.0.1 for every address ("0.0.0.0", "::").
std::string ReachableHost(const std::string& listen_host);

// Writes `data_dir`/kubeconfig, readable by its owner only: one cluster "strata" at `server`
// trusting `certificate_file`, one user "admin" with bearer `token`, and the context "strata"
// joining them as the current one. Returns its path; Unavailable naming it when it cannot be
// written.
Result<std::string> WriteAdminKubeconfig(const std::string& data_dir, const std::string& server,
                                         const std::string& certificate_file,
                                         const std::string& token);

// Writes `pem` to `data_dir`/api-ca.crt; returns its path.
Result<std::string> WriteApiCertificate(const std::string& data_dir, const std::string& pem);

}  // namespace strata::server
