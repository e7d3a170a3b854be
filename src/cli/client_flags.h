#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "client/api_client.h"

namespace strata::cli {

// How a client verb reaches the control plane: --server (default $STRATA_SERVER, else
// http://127.0.0.1:7070), --token (default $STRATA_TOKEN, else what strata up recorded for the
// server: client/credentials.h) and, for namespaced verbs, -n. Or
// --kubeconfig: strata's state on a Kubernetes cluster (strata up --store kubernetes), reached
// through an API of this process's own over the Kubernetes store, on loopback, with a token
// made for the one verb.
struct KubeBridge;
struct ClientFlags {
  std::string server;
  std::string token;
  std::string kubeconfig;
  // With --kubeconfig: the process's API over the cluster, made by the first Connect and
  // stopped with the flags (the command's options, which the CLI app holds until main returns:
  // before any static is destroyed, which the API's threads may still use).
  mutable std::shared_ptr<KubeBridge> kube_bridge;
  std::string namespace_name = "default";
  bool all_namespaces = false;
};

// Adds --server and --token (and -n when `namespaced_verbs`) to `command`, with the environment's
// defaults. `flags` must outlive the parse.
void AddClientFlags(CLI::App* command, ClientFlags& flags, bool namespaced_verbs);

// The bearer token for flags.server: --token or $STRATA_TOKEN, else what strata up recorded for
// that server in the CLI's credentials (client/credentials.h), else none.
std::string TokenFor(const ClientFlags& flags);

// A client for flags.server (or, with --kubeconfig, for the process's own API over the cluster,
// which serves until the process exits), or nullptr after printing the error and setting exit
// code 2 (1 when the cluster cannot be reached).
std::unique_ptr<client::ApiClient> Connect(const ClientFlags& flags);

}  // namespace strata::cli
