#include "client/credentials.h"

#include <fcntl.h>
#include <pwd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "common/atomic_file.h"

namespace strata::client {
namespace {

std::string Environment(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::string(value) : std::string();
}

std::string WithoutTrailingSlash(std::string server) {
  while (!server.empty() && server.back() == '/') server.pop_back();
  return server;
}

// The "SERVER TOKEN" lines of the file, in order; empty when it cannot be read.
std::vector<std::pair<std::string, std::string>> ReadLines(const std::string& path) {
  std::vector<std::pair<std::string, std::string>> lines;
  std::ifstream file(path);
  std::string line;
  while (std::getline(file, line)) {
    std::istringstream words(line);
    std::string server;
    std::string token;
    if (words >> server >> token) lines.emplace_back(std::move(server), std::move(token));
  }
  return lines;
}

Status Unavailable(const std::string& path, const std::string& what) {
  return UnavailableError("the CLI's credentials \"" + path + "\": " + what + ": " +
                          std::strerror(errno));
}

}  // namespace

std::string CredentialsPath() {
  if (std::string path = Environment("STRATA_CREDENTIALS"); !path.empty()) return path;
  if (std::string config = Environment("XDG_CONFIG_HOME"); !config.empty()) {
    return config + "/strata/credentials";
  }
  std::string home = Environment("HOME");
  if (home.empty()) {
    const passwd* entry = getpwuid(getuid());
    if (entry != nullptr && entry->pw_dir != nullptr) home = entry->pw_dir;
  }
  return home.empty() ? std::string() : home + "/.config/strata/credentials";
}

Status RememberCredential(const std::string& path, const std::string& server,
                          const std::string& token) {
  const std::filesystem::path file(path);
  if (file.has_parent_path() && !std::filesystem::exists(file.parent_path())) {
    std::error_code error;
    std::filesystem::create_directories(file.parent_path(), error);
    if (error) {
      return UnavailableError("the CLI's credentials \"" + path +
                              "\": cannot make its directory: " + error.message());
    }
    ::chmod(file.parent_path().c_str(), 0700);
  }
  // The lock lives on a file of its own, so that the rename below never swaps a locked inode.
  const std::string lock_path = path + ".lock";
  int lock = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock < 0) return Unavailable(lock_path, "cannot be opened");
  if (::flock(lock, LOCK_EX) != 0) {
    ::close(lock);
    return Unavailable(lock_path, "cannot be locked");
  }
  const std::string key = WithoutTrailingSlash(server);
  std::vector<std::pair<std::string, std::string>> lines = ReadLines(path);
  std::erase_if(lines, [&](const auto& line) { return line.first == key; });
  lines.emplace_back(key, token);
  if (lines.size() > static_cast<size_t>(kMaxRememberedServers)) {
    lines.erase(lines.begin(), lines.end() - kMaxRememberedServers);
  }
  std::string text;
  for (const auto& [each, secret] : lines) text += each + " " + secret + "\n";
  Status result = ReplaceFileAtomically(path, text, 0600);
  ::close(lock);
  return result;
}

std::optional<std::string> FindCredential(const std::string& path, const std::string& server) {
  const std::string key = WithoutTrailingSlash(server);
  std::optional<std::string> found;
  for (auto& [each, token] : ReadLines(path)) {
    if (each == key) found = std::move(token);
  }
  return found;
}

}  // namespace strata::client
