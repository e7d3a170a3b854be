#include "server/secure_api.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

namespace strata::server {
namespace {

// Replaces `path` with `text`, readable (and writable) by its owner only when `mode` says so.
Result<std::string> ReplaceFile(const std::string& path, const std::string& text, mode_t mode) {
  const std::string temporary = path + ".tmp";
  int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  bool written = fd >= 0 && ::fchmod(fd, mode) == 0 &&
                 ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  if (fd >= 0) ::close(fd);
  if (!written || ::rename(temporary.c_str(), path.c_str()) != 0) {
    return Err(UnavailableError("\"" + path + "\" cannot be written: " + std::strerror(errno)));
  }
  return path;
}

}  // namespace

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
  return ReplaceFile(data_dir + "/" + kKubeconfigFileName, config.dump(2) + "\n", 0600);
}

Result<std::string> WriteApiCertificate(const std::string& data_dir, const std::string& pem) {
  return ReplaceFile(data_dir + "/" + kApiCertificateFileName, pem, 0644);
}

}  // namespace strata::server
