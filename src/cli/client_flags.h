#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "client/api_client.h"

namespace strata::cli {

// How a client verb reaches the control plane: --server (default $STRATA_SERVER, else
// http://127.0.0.1:7070), --token (default $STRATA_TOKEN) and, for namespaced verbs, -n.
struct ClientFlags {
  std::string server;
  std::string token;
  std::string namespace_name = "default";
  bool all_namespaces = false;
};

// Adds --server and --token (and -n when `namespaced_verbs`) to `command`, with the environment's
// defaults. `flags` must outlive the parse.
void AddClientFlags(CLI::App* command, ClientFlags& flags, bool namespaced_verbs);

// A client for flags.server, or nullptr after printing the error and setting exit code 2.
std::unique_ptr<client::ApiClient> Connect(const ClientFlags& flags);

}  // namespace strata::cli
