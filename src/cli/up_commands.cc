// `strata up`: run the control plane on this machine until SIGINT or SIGTERM.
#include <signal.h>
#include <unistd.h>

#include <climits>
#include <iostream>
#include <memory>

#include "cli/command_registry.h"
#include "controller/idle_reclaim.h"
#include "controller/job_controller.h"
#include "controller/node_controller.h"
#include "controller/scheduler_loop.h"
#include "gateway/config.h"
#include "gateway/gateway_stats.h"
#include "gateway/server.h"
#include "node/node_agent.h"
#include "node/process_runtime.h"
#include "server/control_plane.h"
#include "server/service_token_ledger.h"
#include "server/serving_loop.h"

namespace strata::cli {
namespace {

// What `strata up` runs besides the API: the control loops, and the in-process node agent.
struct LoopOptions {
  // How often each loop runs a pass.
  Duration interval = std::chrono::milliseconds(200);
  // The first rendezvous port handed to a training job on an address.
  int first_master_port = controller::kFirstMasterPort;
  // SIGTERM to SIGKILL for a stopped pod.
  int stop_grace_seconds = 10;
  // The OpenAI-compatible gateway: HOST:PORT, or "off". When the default is not overridden
  // and its port is taken, any free port.
  std::string gateway_listen = "127.0.0.1:8000";
  bool gateway_listen_given = false;
  // Tenants, limits and picker policy for the gateway (its models come from the Services).
  std::string gateway_config;
  // Engine-sim in place of real engines on simulated GPUs: its start-up delay (weights
  // loading) in seconds.
  double sim_startup_delay_seconds = 5;
  // How long a draining replica may keep streams open before it is stopped anyway.
  int drain_grace_seconds = 60;
  // Leave the pods' processes running when strata up stops (a later strata up adopts them).
  bool keep_pods = false;
  // How long each measurement of a pod's CPU use lasts, from which the busy share of its
  // simulated GPUs is derived.
  double gpu_activity_window_seconds = 30;
};

// This binary's path, for engine-sim replicas.
std::string SelfPath() {
  char path[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (n <= 0) return "strata";
  return std::string(path, static_cast<size_t>(n));
}

// Starts the gateway on `options.gateway_listen` and, on `plane`, the serving loop that feeds
// it the Services' ready replicas and scales them (server/serving_loop.h). Null when the
// gateway is off.
Result<std::shared_ptr<gateway::GatewayServer>> StartServing(
    server::ControlPlane& plane, const LoopOptions& options,
    std::shared_ptr<server::ServiceTokenLedger> tokens) {
  if (options.gateway_listen == "off") return std::shared_ptr<gateway::GatewayServer>();
  gateway::GatewayConfig config;
  if (!options.gateway_config.empty()) {
    ASSIGN_OR_RETURN(config, gateway::LoadGatewayConfig(options.gateway_config));
    if (!config.models.empty()) {
      return Err(InvalidArgumentError(
          "--gateway-config " + options.gateway_config +
          ": models: must be empty; under strata up the gateway serves the Services' models"));
    }
  }
  Result<std::pair<std::string, int>> address = server::ParseListenAddress(options.gateway_listen);
  if (!address) {
    return Err(InvalidArgumentError("--gateway-listen: " + address.error().message()));
  }
  const Clock& clock = RealClock::Instance();
  Result<std::unique_ptr<gateway::GatewayServer>> started = gateway::GatewayServer::Start(
      config, address->first, static_cast<uint16_t>(address->second), clock);
  if (!started && !options.gateway_listen_given &&
      started.error().code() == StatusCode::kUnavailable) {
    // The default port is taken (another strata up, a local vLLM): any free one will do, and
    // the line below names it.
    std::cout << "strata: " << options.gateway_listen
              << " is in use; the gateway takes a free port instead" << std::endl;
    started = gateway::GatewayServer::Start(std::move(config), address->first, 0, clock);
  }
  if (!started) return Err(started.error());
  std::shared_ptr<gateway::GatewayServer> gateway = std::move(*started);
  // The control plane's /metrics carries the gateway's series too (TTFT, TPOT, tokens, picks).
  plane.registry().AddCollector(gateway::GatewayStats::FamilyNames("gateway"),
                                [gateway](const telemetry::FamilySelection&, std::string& out) {
                                  out += gateway->MetricsText();
                                });
  controller::ServiceControllerOptions controller_options;
  controller_options.drain_grace = std::chrono::seconds(options.drain_grace_seconds);
  auto serving = std::make_shared<server::ServingLoop>(
      plane.store(), clock, *gateway, plane.registry(), controller_options, tokens.get());
  // Woken by Service and Pod changes, so a service applied is routable, and a replica that
  // became ready takes traffic, within milliseconds rather than at the next tick.
  plane.AddLoop("serving", std::chrono::milliseconds(100),
                [serving, gateway, tokens] { return serving->RunOnce(); }, {"Service", "Pod"});
  std::cout << "strata: gateway listening on http://" << address->first << ":" << gateway->port()
            << " (OpenAI API; models from Services)" << std::endl;
  return gateway;
}

// Starts, on `plane`, each on a thread of its own: the scheduler adapter, the training job
// controller, the node controller, and one node agent that serves every registered node. A
// simulated multi-node inventory is thus one process running all of its nodes' pods as real
// processes (their state files, logs and checkpoints under the data dir). Each loop's lambda
// owns what it runs, so everything lives until plane.Stop(). Returns the agent (which holds on
// to its runtime through its loop), so that the pods can be stopped with the plane.
Result<std::shared_ptr<node::NodeAgent>> StartControlLoops(server::ControlPlane& plane,
                                                           const std::string& data_dir,
                                                           const LoopOptions& options) {
  node::ProcessRuntime::Options runtime_options;
  runtime_options.data_dir = data_dir;
  Result<std::unique_ptr<node::ProcessRuntime>> created =
      node::ProcessRuntime::Create(std::move(runtime_options));
  if (!created) return Err(created.error());
  std::shared_ptr<node::ProcessRuntime> runtime = std::move(*created);
  if (!runtime->limits_notice().empty()) {
    std::cout << "strata: pods run without CPU and memory limits: " << runtime->limits_notice()
              << "\n";
  }
  const Clock& clock = RealClock::Instance();
  store::Store& store = plane.store();

  controller::SchedulerLoopOptions scheduler_options;
  scheduler_options.first_master_port = options.first_master_port;
  scheduler_options.registry = &plane.registry();
  auto scheduler =
      std::make_shared<controller::SchedulerLoop>(store, clock, std::move(scheduler_options));
  auto jobs = std::make_shared<controller::JobController>(store, clock);
  auto nodes = std::make_shared<controller::NodeController>(store, clock);
  node::NodeAgentOptions agent_options;
  agent_options.node_names = plane.node_names();
  size_t node_count = agent_options.node_names.size();
  agent_options.data_dir = data_dir;
  agent_options.stop_grace = std::chrono::seconds(options.stop_grace_seconds);
  agent_options.base_env = node::DefaultBaseEnvironment();
  agent_options.gpu_activity_window = std::chrono::duration_cast<Duration>(
      std::chrono::duration<double>(options.gpu_activity_window_seconds));
  // Workers report checkpoints over loopback; behind --token-file they have no token, and only
  // their checkpoint directory counts.
  agent_options.api_url = "http://127.0.0.1:" + std::to_string(plane.port());
  if (plane.simulated()) {
    // Simulated GPUs run no real engine: Service replicas run engine-sim in its place.
    node::EngineSimSubstitution engine_sim;
    engine_sim.strata_path = SelfPath();
    engine_sim.startup_delay = std::chrono::duration_cast<Duration>(
        std::chrono::duration<double>(options.sim_startup_delay_seconds));
    agent_options.engine_sim = std::move(engine_sim);
  }
  // The agent refers to the runtime; the agent's deleter keeps the runtime alive as long.
  std::shared_ptr<node::NodeAgent> agent(
      new node::NodeAgent(store, *runtime, clock, std::move(agent_options)),
      [runtime](node::NodeAgent* gone) { delete gone; });

  plane.AddLoop("node agent", options.interval, [agent] { return agent->RunOnce(); });
  plane.AddLoop("scheduler", options.interval, [scheduler] { return scheduler->RunOnce(); });
  plane.AddLoop("job controller", options.interval, [jobs] { return jobs->RunOnce(); });
  plane.AddLoop("node controller", options.interval, [nodes] { return nodes->RunOnce(); });
  // Jobs idling on their GPUs are warned about and, where their queue says so, reclaimed first:
  // judged on NVML's readings for real GPUs, and for simulated GPUs on the readings derived
  // from the busy share the agent measures from each pod's CPU use.
  auto idle = std::make_shared<controller::IdleReclaimLoop>(store, plane.cluster_objects(), clock,
                                                            plane.gpu_readings());
  plane.AddLoop("idle reclaim", std::chrono::seconds(30), [idle] { return idle->RunOnce(); });
  std::cout << "strata: scheduler, job and node controllers, and a node agent for " << node_count
            << " node(s) running" << std::endl;
  return agent;
}

void RunUp(const server::ControlPlaneOptions& options, const LoopOptions& loops) {
  // Block the stop signals before any thread starts, so that only sigwait below receives them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  // The gateway's token counts, per service, for the cost endpoint's cost per million tokens.
  auto tokens = std::make_shared<server::ServiceTokenLedger>();
  server::ControlPlaneOptions plane_options = options;
  plane_options.service_tokens = [tokens](Duration window) { return tokens->Over(window); };
  Result<std::unique_ptr<server::ControlPlane>> plane =
      server::ControlPlane::Start(plane_options, std::cout);
  if (!plane) {
    std::cerr << "strata up: " << plane.error().message() << "\n";
    SetExitCode(plane.error().code() == StatusCode::kInvalidArgument ? 2 : 1);
    return;
  }
  Result<std::shared_ptr<node::NodeAgent>> agent =
      StartControlLoops(**plane, options.data_dir, loops);
  if (!agent) {
    std::cerr << "strata up: " << agent.error().message() << "\n";
    SetExitCode(1);
    return;
  }
  Result<std::shared_ptr<gateway::GatewayServer>> gateway = StartServing(**plane, loops, tokens);
  if (!gateway) {
    std::cerr << "strata up: " << gateway.error().message() << "\n";
    SetExitCode(gateway.error().code() == StatusCode::kInvalidArgument ? 2 : 1);
    (*plane)->Stop();
    return;
  }
  int signal_number = 0;
  sigwait(&stop_signals, &signal_number);
  std::cout << "strata: stopping (signal " << signal_number << ")" << std::endl;
  (*plane)->Stop();
  if (*gateway) (*gateway)->Stop();
  if (loops.keep_pods) {
    std::cout << "strata: pods keep running (--keep-pods); the next strata up adopts them"
              << std::endl;
  } else {
    // The control loops are stopped, so nothing else touches the agent now.
    (*agent)->StopEverything();
  }
}

}  // namespace

STRATA_REGISTER_COMMANDS("up", [](CLI::App& app) {
  auto options = std::make_shared<server::ControlPlaneOptions>();
  auto loops = std::make_shared<LoopOptions>();
  options->version = STRATA_VERSION;
  CLI::App* up = app.add_subcommand(
      "up",
      "Run the control plane here: REST API, SQLite store, scheduler and controllers, the "
      "OpenAI-compatible gateway for the Services, and a node "
      "agent for this machine (a simulated GPU inventory when NVML is absent)");
  up->add_option("--data-dir", options->data_dir, "Where the store lives")->capture_default_str();
  up->add_option("--listen", options->listen,
                 "HOST:PORT for the API (port 0: any free port); off loopback needs --token-file")
      ->capture_default_str();
  up->add_option("--simulate", options->simulate,
                 "Simulated inventory NODESxGPUS:MODEL[,racks=R], e.g. 4x8:H100-80GB,racks=2 "
                 "(default: NVML, else that shape)");
  up->add_option("--join-token-file", options->join_token_file,
                 "Join tokens for node agents on other machines (strata agent --join-token), one "
                 "per line");
  up->add_option("--token-file", options->token_file,
                 "Bearer tokens accepted by the API, one per line");
  up->add_option("--price-table", options->price_table_file,
                 "Prices for cost: per GPU model per hour, CPU core-hour, memory GiB-hour "
                 "(YAML or JSON; default: public cloud list prices)");
  up->add_option("--nvml-library", options->nvml_library, "Where NVML is loaded from")
      ->capture_default_str();
  up->add_option("--first-master-port", loops->first_master_port,
                 "The rendezvous port (MASTER_PORT) of the first training job on an address; "
                 "later jobs there get the next free ones")
      ->capture_default_str()
      ->check(CLI::Range(1, 65535));
  up->add_option("--stop-grace", loops->stop_grace_seconds,
                 "Seconds a stopped pod's processes get between SIGTERM and SIGKILL")
      ->capture_default_str()
      ->check(CLI::Range(0, 3600));
  CLI::Option* gateway_listen =
      up->add_option("--gateway-listen", loops->gateway_listen,
                     "HOST:PORT of the OpenAI-compatible gateway serving the Services (port 0: "
                     "any free port; the default falls back to one when taken), or off")
          ->capture_default_str();
  up->add_option("--gateway-config", loops->gateway_config,
                 "Gateway tenants, limits and picker policy (YAML; no models: they come from the "
                 "Services)");
  up->add_option("--sim-startup-delay", loops->sim_startup_delay_seconds,
                 "Seconds a simulated engine takes to load its weights (simulated GPUs only)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 3600.0));
  up->add_option("--gpu-activity-window", loops->gpu_activity_window_seconds,
                 "Seconds over which a pod's CPU use is measured to derive how busy it keeps "
                 "its simulated GPUs (one core per GPU: fully busy)")
      ->capture_default_str()
      ->check(CLI::Range(0.1, 86400.0));
  up->add_option("--drain-grace", loops->drain_grace_seconds,
                 "Seconds a draining replica may keep streams open before it is stopped")
      ->capture_default_str()
      ->check(CLI::Range(0, 86400));
  up->add_flag("--keep-pods", loops->keep_pods,
               "Leave the pods' processes running when strata up stops (SIGINT, SIGTERM); the "
               "next strata up on this data dir adopts them. Default: they are stopped too");
  up->callback([options, loops, gateway_listen] {
    loops->gateway_listen_given = gateway_listen->count() > 0;
    RunUp(*options, *loops);
  });
});

}  // namespace strata::cli
