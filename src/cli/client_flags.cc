#include "cli/client_flags.h"

#include <cstdlib>
#include <iostream>

#include "cli/command_registry.h"

namespace strata::cli {
namespace {

std::string Environment(const char* name, std::string fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::string(value) : fallback;
}

}  // namespace

void AddClientFlags(CLI::App* command, ClientFlags& flags, bool namespaced_verbs) {
  flags.server = Environment("STRATA_SERVER", client::kDefaultServer);
  flags.token = Environment("STRATA_TOKEN", "");
  command->add_option("--server", flags.server, "The strata server URL ($STRATA_SERVER)");
  command->add_option("--token", flags.token, "Bearer token for the server ($STRATA_TOKEN)");
  if (namespaced_verbs) {
    command->add_option("-n,--namespace", flags.namespace_name, "Namespace of namespaced kinds");
  }
}

std::unique_ptr<client::ApiClient> Connect(const ClientFlags& flags) {
  auto client = client::ApiClient::Create(flags.server, flags.token);
  if (!client) {
    Fail(client.error(), 2);
    return nullptr;
  }
  return std::move(*client);
}

}  // namespace strata::cli
