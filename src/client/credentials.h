#pragma once

#include <optional>
#include <string>

#include "common/status.h"

namespace strata::client {

// The credentials the strata CLI finds by itself, one bearer token per server URL, as kubectl
// finds its kubeconfig: `strata up` records its admin credential there for the URL it serves, and
// a client verb given no --token or $STRATA_TOKEN looks its --server up. The file is the user's
// own (0600, in a 0700 directory); every write replaces it whole, under an exclusive lock, so
// that servers starting at once do not lose each other's lines. It keeps the
// kMaxRememberedServers most recently recorded servers.
//
// Format: one "SERVER TOKEN" per line, SERVER without a trailing '/'.

inline constexpr int kMaxRememberedServers = 200;

// $STRATA_CREDENTIALS, else $XDG_CONFIG_HOME/strata/credentials, else
// HOME/.config/strata/credentials (HOME from the environment, else the password database).
// Empty when none of them can be found.
std::string CredentialsPath();

// Records `token` for `server` in the file at `path` (made with its directory when missing),
// replacing what it held for that server. Returns Unavailable naming the path when it cannot be
// written.
Status RememberCredential(const std::string& path, const std::string& server,
                          const std::string& token);

// The token recorded for `server` in the file at `path`; nullopt when none is, or the file
// cannot be read.
std::optional<std::string> FindCredential(const std::string& path, const std::string& server);

}  // namespace strata::client
