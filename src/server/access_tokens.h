#pragma once

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace strata::server {

// A bearer token users present to the REST API, and what it may reach: every namespace and
// every cluster-scoped object (an admin), or only the objects of `namespaces` (see
// AuthorizeUser in user_access.h).
struct AccessToken {
  std::string token;
  std::string user;                     // for messages and logs: "admin", "team-b", ...
  std::vector<std::string> namespaces;  // empty: cluster-wide (an admin)

  bool admin() const { return namespaces.empty(); }
};

// The name of the admin credential `strata up` keeps in its data directory when it is given no
// --token-file.
inline constexpr char kAdminTokenFileName[] = "admin-token";

// Reads the --token-file format: one token per non-empty line, optionally followed by
// space-separated settings, `#` starting a comment line:
//
//   TOKEN                                      an admin (cluster-wide)
//   TOKEN user=team-b namespaces=team-b,dev    scoped to namespaces team-b and dev
//
// A token without user= is named "token N" (its line). Returns InvalidArgument naming `flag`,
// the file and the line for a file that cannot be read, holds no token, repeats a token, or has
// an unknown setting or an invalid namespace name.
Result<std::vector<AccessToken>> ReadAccessTokenFile(const std::string& path,
                                                     std::string_view flag);

// The admin credential at `path`: read when the file exists (it must hold exactly one token
// line), otherwise a new random token written there, readable by its owner only (as kubeadm
// writes admin.conf), and said on `out`. The token persists across restarts, so clients keep
// working.
Result<AccessToken> ReadOrCreateAdminToken(const std::string& path, std::ostream& out);

// Bearer tokens, one per non-empty line, without settings (join tokens). Returns InvalidArgument
// naming `flag` and the file when it cannot be read or holds no token.
Result<std::vector<std::string>> ReadTokenFile(const std::string& path, std::string_view flag);

// The join tokens of `path`; when the file does not exist yet, one new token written there,
// readable by its owner only (as kubeadm makes a bootstrap token), so that the first start needs
// no token made by hand.
Result<std::vector<std::string>> ReadOrCreateJoinTokens(const std::string& path, std::ostream& out);

}  // namespace strata::server
