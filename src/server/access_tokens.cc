#include "server/access_tokens.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "api/validation.h"
#include "common/field_errors.h"
#include "server/random_secret.h"

namespace strata::server {
namespace {

std::string Trim(std::string_view text) {
  const size_t first = text.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return "";
  const size_t last = text.find_last_not_of(" \t\r");
  return std::string(text.substr(first, last - first + 1));
}

// The non-empty, non-comment lines of `path`, with their 1-based numbers.
Result<std::vector<std::pair<int, std::string>>> TokenLines(const std::string& path,
                                                            std::string_view flag) {
  std::ifstream file(path);
  if (!file) {
    return Err(InvalidArgumentError(std::string(flag) + " \"" + path + "\": cannot be read"));
  }
  std::vector<std::pair<int, std::string>> lines;
  std::string line;
  for (int number = 1; std::getline(file, line); ++number) {
    std::string trimmed = Trim(line);
    if (!trimmed.empty() && trimmed[0] != '#') lines.emplace_back(number, std::move(trimmed));
  }
  if (lines.empty()) {
    return Err(InvalidArgumentError(std::string(flag) + " \"" + path + "\": holds no token"));
  }
  return lines;
}

// Writes `line` to a new file at `path`, readable and writable by its owner only; fails when
// the file exists.
Status CreatePrivateFile(const std::string& path, const std::string& line, std::string_view flag) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    return InvalidArgumentError(std::string(flag) + " \"" + path +
                                "\": cannot be created: " + std::strerror(errno));
  }
  bool written = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
  written = ::fsync(fd) == 0 && written;
  ::close(fd);
  if (!written) return InternalError(std::string(flag) + " \"" + path + "\": write failed");
  return Status::Ok();
}

}  // namespace

Result<std::vector<AccessToken>> ReadAccessTokenFile(const std::string& path,
                                                     std::string_view flag) {
  ASSIGN_OR_RETURN(auto lines, TokenLines(path, flag));
  std::vector<AccessToken> tokens;
  std::set<std::string> seen;
  for (const auto& [number, line] : lines) {
    auto bad = [&, number = number](const std::string& why) {
      return Err(InvalidArgumentError(std::string(flag) + " \"" + path + "\" line " +
                                      std::to_string(number) + ": " + why));
    };
    std::istringstream words(line);
    AccessToken token;
    words >> token.token;
    token.user = "token " + std::to_string(number);
    for (std::string setting; words >> setting;) {
      const size_t equals = setting.find('=');
      const std::string key = setting.substr(0, equals);
      const std::string value = equals == std::string::npos ? "" : setting.substr(equals + 1);
      if (key == "user" && !value.empty()) {
        token.user = value;
      } else if (key == "namespaces" && !value.empty()) {
        std::istringstream names(value);
        for (std::string name; std::getline(names, name, ',');) {
          FieldErrors errors;
          api::ValidateLabelName(name, "namespaces", errors);
          if (!errors.empty()) return bad(errors.list()[0].message);
          token.namespaces.push_back(name);
        }
      } else {
        return bad("unknown setting \"" + setting +
                   "\" (expected user=NAME or namespaces=NS[,NS...])");
      }
    }
    if (!seen.insert(token.token).second) return bad("repeats the token of an earlier line");
    tokens.push_back(std::move(token));
  }
  return tokens;
}

Result<AccessToken> ReadOrCreateAdminToken(const std::string& path, std::ostream& out) {
  if (!std::filesystem::exists(path)) {
    ASSIGN_OR_RETURN(std::string secret, NewSecret());
    RETURN_IF_ERROR(CreatePrivateFile(path, secret + "\n", "the admin credential"));
    out << "strata: wrote a new admin credential" << std::endl;
  }
  ASSIGN_OR_RETURN(std::vector<std::string> tokens, ReadTokenFile(path, "the admin credential"));
  if (tokens.size() != 1 || tokens[0].find_first_of(" \t") != std::string::npos) {
    return Err(InvalidArgumentError("the admin credential \"" + path +
                                    "\": expected one token on one line"));
  }
  return AccessToken{tokens[0], "admin", {}};
}

Result<std::vector<std::string>> ReadTokenFile(const std::string& path, std::string_view flag) {
  ASSIGN_OR_RETURN(auto lines, TokenLines(path, flag));
  std::vector<std::string> tokens;
  for (auto& line : lines) tokens.push_back(std::move(line.second));
  return tokens;
}

Result<std::vector<std::string>> ReadOrCreateJoinTokens(const std::string& path,
                                                        std::ostream& out) {
  if (!std::filesystem::exists(path)) {
    ASSIGN_OR_RETURN(std::string token, NewSecret());
    RETURN_IF_ERROR(CreatePrivateFile(path, token + "\n", "--join-token-file"));
    out << "strata: wrote a new join token to " << path << " (strata agent --join-token " << path
        << ")" << std::endl;
  }
  return ReadTokenFile(path, "--join-token-file");
}

}  // namespace strata::server
