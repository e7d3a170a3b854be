#include "cli/client_flags.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/command_registry.h"
#include "client/credentials.h"
#include "server/control_plane.h"
#include "server/random_secret.h"

namespace strata::cli {

// strata's REST API over the Kubernetes store, for one verb: no nodes, no controllers, no
// election; its data dir (the token file) a private temporary directory, removed with it.
struct KubeBridge {
  std::filesystem::path dir;
  std::unique_ptr<server::ControlPlane> plane;
  std::string token;
  ~KubeBridge() {
    if (plane) plane->Stop();
    std::error_code ignored;
    if (!dir.empty()) std::filesystem::remove_all(dir, ignored);
  }
};

namespace {

std::string Environment(const char* name, std::string fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::string(value) : fallback;
}

Result<std::unique_ptr<client::ApiClient>> ConnectKubernetes(const std::string& kubeconfig,
                                                             KubeBridge& bridge) {
  auto client = [&bridge] {
    return client::ApiClient::Create("http://127.0.0.1:" + std::to_string(bridge.plane->port()),
                                     bridge.token);
  };
  if (bridge.plane) return client();  // a second connection of the verb (a watch)
  std::string pattern = (std::filesystem::temp_directory_path() / "strata-cli.XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) {
    return Err(UnavailableError("cannot make a temporary directory in " +
                                std::filesystem::temp_directory_path().string()));
  }
  bridge.dir = pattern;
  ASSIGN_OR_RETURN(bridge.token, server::NewSecret());
  const std::string token_file = (bridge.dir / "token").string();
  {
    std::ofstream file(token_file);
    file << bridge.token << "\n";
    if (!file) return Err(UnavailableError("cannot write " + token_file));
  }
  chmod(token_file.c_str(), 0600);
  server::ControlPlaneOptions options;
  options.store = "kubernetes";
  options.kubeconfig = kubeconfig;
  options.local_nodes = false;
  options.leader_elect = false;
  options.listen = "127.0.0.1:0";
  options.token_file = token_file;
  options.data_dir = (bridge.dir / "data").string();
  std::ostringstream lines;  // the plane's start-up lines are not the verb's output
  Result<std::unique_ptr<server::ControlPlane>> started =
      server::ControlPlane::Start(options, lines);
  if (!started) return Err(started.error());
  bridge.plane = std::move(*started);
  return client();
}

}  // namespace

void AddClientFlags(CLI::App* command, ClientFlags& flags, bool namespaced_verbs) {
  flags.server = Environment("STRATA_SERVER", client::kDefaultServer);
  flags.token = Environment("STRATA_TOKEN", "");
  command->add_option("--server", flags.server, "The strata server URL ($STRATA_SERVER)");
  command->add_option(
      "--token", flags.token,
      "Bearer token for the server ($STRATA_TOKEN); by default the one strata up "
      "recorded for --server in the CLI's credentials (~/.config/strata/credentials)");
  command->add_option("--kubeconfig", flags.kubeconfig,
                      "Instead of a server: the Kubernetes cluster strata keeps its state on "
                      "(strata up --store kubernetes), with this kubeconfig's identity");
  if (namespaced_verbs) {
    command->add_option("-n,--namespace", flags.namespace_name, "Namespace of namespaced kinds");
  }
}

std::string TokenFor(const ClientFlags& flags) {
  if (!flags.token.empty()) return flags.token;
  // What strata up recorded for this server, as kubectl reads its kubeconfig.
  const std::string credentials = client::CredentialsPath();
  if (credentials.empty()) return "";
  return client::FindCredential(credentials, flags.server).value_or("");
}

std::unique_ptr<client::ApiClient> Connect(const ClientFlags& flags) {
  if (!flags.kubeconfig.empty()) {
    if (!flags.kube_bridge) flags.kube_bridge = std::make_shared<KubeBridge>();
    Result<std::unique_ptr<client::ApiClient>> bridged =
        ConnectKubernetes(flags.kubeconfig, *flags.kube_bridge);
    if (!bridged) {
      Fail(bridged.error(), bridged.error().code() == StatusCode::kInvalidArgument ? 2 : 1);
      return nullptr;
    }
    return std::move(*bridged);
  }
  auto client = client::ApiClient::Create(flags.server, TokenFor(flags));
  if (!client) {
    Fail(client.error(), 2);
    return nullptr;
  }
  return std::move(*client);
}

}  // namespace strata::cli
