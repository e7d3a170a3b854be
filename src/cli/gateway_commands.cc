// `strata gateway --listen ADDR --config FILE`: the OpenAI-compatible gateway.

#include <fmt/format.h>
#include <pthread.h>

#include <csignal>
#include <cstdio>

#include "cli/command_registry.h"
#include "gateway/config.h"
#include "gateway/server.h"

namespace strata::cli {
namespace {

struct GatewayFlags {
  std::string listen = "127.0.0.1:8080";
  std::string config;
  int threads = 0;
};

// Splits "host:port" (":port" means all interfaces). Returns false when malformed.
bool SplitListen(const std::string& listen, std::string* host, uint16_t* port) {
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos) return false;
  *host = colon == 0 ? "0.0.0.0" : listen.substr(0, colon);
  int value = 0;
  for (size_t i = colon + 1; i < listen.size(); ++i) {
    if (listen[i] < '0' || listen[i] > '9' || value > 65535) return false;
    value = value * 10 + (listen[i] - '0');
  }
  if (colon + 1 == listen.size() || value > 65535) return false;
  *port = static_cast<uint16_t>(value);
  return true;
}

void RunGateway(const GatewayFlags& flags) {
  auto config = gateway::LoadGatewayConfig(flags.config);
  if (!config) {
    fmt::print(stderr, "error: {}\n", config.error().message());
    SetExitCode(1);
    return;
  }
  if (flags.threads > 0) config->threads = flags.threads;
  std::string host;
  uint16_t port = 0;
  if (!SplitListen(flags.listen, &host, &port)) {
    fmt::print(stderr, "error: --listen: \"{}\" is not host:port\n", flags.listen);
    SetExitCode(2);
    return;
  }
  // Block the stop signals before the event-loop threads start, so that only sigwait sees them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  auto server =
      gateway::GatewayServer::Start(std::move(*config), host, port, RealClock::Instance());
  if (!server) {
    fmt::print(stderr, "error: {}\n", server.error().message());
    SetExitCode(1);
    return;
  }
  // Tests and scripts read the port from this line.
  fmt::print("strata gateway listening on http://{}:{}\n", host, (*server)->port());
  std::fflush(stdout);
  int signal = 0;
  sigwait(&stop_signals, &signal);
  (*server)->Stop();
  SetExitCode(0);
}

}  // namespace

STRATA_REGISTER_COMMANDS("gateway", [](CLI::App& app) {
  auto flags = std::make_shared<GatewayFlags>();
  CLI::App* gateway = app.add_subcommand(
      "gateway", "Run the OpenAI-compatible gateway (routing, picker, tenants, token quotas)");
  gateway->add_option("--listen", flags->listen, "host:port to serve on (port 0: any free port)")
      ->capture_default_str();
  gateway->add_option("--config", flags->config, "gateway YAML: models, versions, tenants")
      ->required();
  gateway->add_option("--threads", flags->threads,
                      "event loops (default: config, or one per core)");
  gateway->callback([flags] { RunGateway(*flags); });
});

}  // namespace strata::cli
