#include "server/secure_api.h"

#include <nlohmann/json.hpp>

#include "common/atomic_file.h"

namespace strata::server {

std::string ReachableHost(const std::string& listen_host) {
  return listen_host == "0.0.0.0" || listen_host == "::" ? "127.0.0.1" : listen_host;
}

Result<std::string> WriteAdminKubeconfig(const std::string& data_dir, const std::string& server,
                                         const std::string& certificate_file,
                                         const std::string& token) {
  // JSON is YAML: kubectl reads it as any kubeconfig.
  nlohmann::json config = {
      {"apiVersion", "v1"},
      {"kind", "Config"},
      {"clusters",
       {{{"name", "strata"},
         {"cluster", {{"server", server}, {"certificate-authority", certificate_file}}}}}},
      {"users", {{{"name", "admin"}, {"user", {{"token", token}}}}}},
      {"contexts", {{{"name", "strata"}, {"context", {{"cluster", "strata"}, {"user", "admin"}}}}}},
      {"current-context", "strata"}};
  const std::string path = data_dir + "/" + kKubeconfigFileName;
  RETURN_IF_ERROR(ReplaceFileAtomically(path, config.dump(2) + "\n", 0600));
  return path;
}

Result<std::string> WriteApiCertificate(const std::string& data_dir, const std::string& pem) {
  const std::string path = data_dir + "/" + kApiCertificateFileName;
  RETURN_IF_ERROR(ReplaceFileAtomically(path, pem, 0644));
  return path;
}

}  // namespace strata::server
