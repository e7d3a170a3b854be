#include "server/control_loops.h"

#include <spdlog/spdlog.h>

#include <filesystem>
#include <thread>

#include "controller/idle_reclaim.h"
#include "controller/job_controller.h"
#include "controller/node_controller.h"
#include "controller/scheduler_loop.h"
#include "gateway/config.h"
#include "gateway/gateway_stats.h"
#include "kubecompat/inference_pool_watch.h"
#include "kubecompat/pytorchjob_operator.h"
#include "node/process_runtime.h"
#include "server/history_recorder.h"
#include "server/serving_loop.h"
#include "server/tenant_sync.h"

namespace strata::server {
namespace {

Duration Seconds(double seconds) {
  return std::chrono::duration_cast<Duration>(std::chrono::duration<double>(seconds));
}

// Starts the gateway and, on `plane`, the serving loop. Null when the gateway is off.
Result<std::shared_ptr<gateway::GatewayServer>> StartServing(
    ControlPlane& plane, const ControlLoopsOptions& options,
    std::shared_ptr<ServiceTokenLedger> tokens, std::ostream& out) {
  if (options.gateway_listen == "off") return std::shared_ptr<gateway::GatewayServer>();
  gateway::GatewayConfig config;
  if (!options.gateway_config.empty()) {
    ASSIGN_OR_RETURN(config, gateway::LoadGatewayConfig(options.gateway_config,
                                                        gateway::ModelSource::kServices));
  }
  Result<std::pair<std::string, int>> address = ParseListenAddress(options.gateway_listen);
  if (!address) {
    return Err(InvalidArgumentError("--gateway-listen: " + address.error().message()));
  }
  // The store's tenants from the first request on: a gateway that started without them and
  // learnt them a pass later would let anyone in meanwhile.
  const std::vector<gateway::TenantConfig> configured = config.tenants;
  ASSIGN_OR_RETURN(GatewayTenants tenants, ReadGatewayTenants(plane.cache(), configured));
  for (const std::string& warning : tenants.warnings) out << "strata: gateway: " << warning << "\n";
  config.tenants = tenants.tenants;
  const Clock& clock = RealClock::Instance();
  Result<std::unique_ptr<gateway::GatewayServer>> started = gateway::GatewayServer::Start(
      config, address->first, static_cast<uint16_t>(address->second), clock);
  if (!started && !options.gateway_listen_given &&
      started.error().code() == StatusCode::kUnavailable) {
    // The default port is taken (another strata up, a local vLLM): any free one will do, and
    // the line below names it.
    out << "strata: " << options.gateway_listen
        << " is in use; the gateway takes a free port instead" << std::endl;
    started = gateway::GatewayServer::Start(std::move(config), address->first, 0, clock);
  }
  if (!started) return Err(started.error());
  std::shared_ptr<gateway::GatewayServer> gateway = std::move(*started);
  // The control plane's /metrics carries the gateway's series too (TTFT, TPOT, tokens, picks).
  plane.registry().AddCollector(gateway::GatewayStats::FamilyNames("gateway"),
                                [gateway](const metrics::FamilySelection&, std::string& text) {
                                  text += gateway->MetricsText();
                                });
  controller::ServiceControllerOptions controller_options;
  controller_options.drain_grace = std::chrono::seconds(options.drain_grace_seconds);
  auto serving = std::make_shared<ServingLoop>(plane.store(), plane.cache(), clock, *gateway,
                                               plane.registry(), controller_options, tokens.get());
  // Every plane's gateway routes; the leader's alone drains, rolls out and scales.
  serving->ActOnlyWhile([&plane] { return plane.leading(); });
  std::string pools_note;
  if (kube::Client* client = plane.kube_client()) {
    // On a cluster, the users' GAIE InferencePools route too, on every plane: a loop of its own
    // follows them and their pods (its pass waits on their watches), the serving loop reads
    // what it last built.
    auto pools = std::make_shared<kubecompat::InferencePoolWatch>(*client);
    serving->AddRouteSource([pools] { return pools->Routes(); });
    plane.AddLoop("inference pools", std::chrono::milliseconds(50),
                  [pools] { return pools->RunOnce(); });
    pools_note = " and InferencePools";
  }
  // Woken by Service and Pod changes, so a service applied is routable, and a replica that
  // became ready takes traffic, within milliseconds rather than at the next tick; the tick is
  // short because the autoscaler's signals move without any change in the store.
  plane.AddLoop("serving", std::chrono::milliseconds(100),
                [serving, gateway, tokens] { return serving->RunOnce(); }, {"Service", "Pod"});
  // Woken by Tenant changes: a key revoked is refused within milliseconds.
  auto tenant_sync =
      std::make_shared<TenantSync>(plane.cache(), *gateway, configured, std::move(tenants.tenants));
  plane.AddLoop("tenants", std::chrono::seconds(1),
                [tenant_sync, gateway] { return tenant_sync->RunOnce(); }, {"Tenant"});
  out << "strata: gateway listening on http://" << address->first << ":" << gateway->port()
      << " (OpenAI API; models from Services" << pools_note << ", API keys from Tenants)"
      << std::endl;
  return gateway;
}

// The node agent for every node the plane registered, on its own loop, into `running`.
Status StartNodeAgent(ControlPlane& plane, const std::string& data_dir,
                      const ControlLoopsOptions& options, RunningLoops& running,
                      std::ostream& out) {
  node::ProcessRuntime::Options runtime_options;
  runtime_options.data_dir = data_dir;
  Result<std::unique_ptr<node::ProcessRuntime>> created =
      node::ProcessRuntime::Create(std::move(runtime_options));
  if (!created) return created.error();
  std::shared_ptr<node::ProcessRuntime> runtime = std::move(*created);
  if (!runtime->limits_notice().empty()) {
    out << "strata: pods run without CPU and memory limits: " << runtime->limits_notice() << "\n";
  }
  node::NodeAgentOptions agent_options;
  agent_options.node_names = plane.node_names();
  agent_options.data_dir = data_dir;
  agent_options.stop_grace = std::chrono::seconds(options.stop_grace_seconds);
  agent_options.allow_root_pods = options.allow_root_pods;
  agent_options.base_env = node::DefaultBaseEnvironment();
  agent_options.gpu_activity_window = Seconds(options.gpu_activity_window_seconds);
  // Workers report checkpoints over loopback; behind --token-file they have no token, and only
  // their checkpoint directory counts.
  agent_options.api_url = "http://127.0.0.1:" + std::to_string(plane.port());
  if (plane.simulated()) {
    // Simulated GPUs run no real engine: Service replicas run engine-sim in its place.
    node::EngineSimSubstitution engine_sim;
    engine_sim.strata_path = options.strata_path;
    engine_sim.startup_delay = Seconds(options.sim_startup_delay_seconds);
    agent_options.engine_sim = std::move(engine_sim);
  }
  // The agent refers to the runtime; the agent's deleter keeps the runtime alive as long.
  std::shared_ptr<node::NodeAgent> agent(
      new node::NodeAgent(plane.store(), plane.cache(), *runtime, RealClock::Instance(),
                          std::move(agent_options)),
      [runtime](node::NodeAgent* gone) { delete gone; });
  plane.AddLoop("node agent", options.interval, [agent] { return agent->RunOnce(); }, {"Pod"});
  running.agent = std::move(agent);
  running.runtime = std::move(runtime);
  return Status::Ok();
}

// The uids of the pods `runtime` runs now: its pod directories under `data_dir` whose
// processes are still running.
std::vector<std::string> RunningPods(const node::ProcessRuntime& runtime,
                                     const std::string& data_dir) {
  std::vector<std::string> uids;
  std::error_code error;
  for (std::filesystem::directory_iterator it(std::filesystem::path(data_dir) / "pods", error);
       !error && it != std::filesystem::directory_iterator(); it.increment(error)) {
    std::string uid = it->path().filename().string();
    Result<node::PodStatus> status = runtime.GetStatus(uid);
    if (status && status->Running()) uids.push_back(std::move(uid));
  }
  return uids;
}

}  // namespace

Result<RunningLoops> StartControlLoops(ControlPlane& plane, const std::string& data_dir,
                                       const ControlLoopsOptions& options,
                                       std::shared_ptr<ServiceTokenLedger> tokens,
                                       std::ostream& out) {
  const Clock& clock = RealClock::Instance();
  store::Store& store = plane.store();
  cluster::Cache& cache = plane.cache();
  RunningLoops running;
  running.stop_grace = std::chrono::seconds(options.stop_grace_seconds);
  running.data_dir = data_dir;
  if (options.run_node_agent) {
    RETURN_IF_ERROR(StartNodeAgent(plane, data_dir, options, running, out));
  }

  controller::SchedulerLoopOptions scheduler_options;
  scheduler_options.first_master_port = options.first_master_port;
  scheduler_options.registry = &plane.registry();
  auto scheduler = std::make_shared<controller::SchedulerLoop>(store, cache, clock,
                                                               std::move(scheduler_options));
  auto jobs = std::make_shared<controller::JobController>(store, cache, clock);
  controller::NodeControllerOptions node_options;
  node_options.leases = plane.node_leases();
  // On Kubernetes, kube-controller-manager judges nodes by their Leases.
  node_options.mark_lost = plane.kube_client() == nullptr;
  auto nodes = std::make_shared<controller::NodeController>(store, cache, clock, node_options);
  plane.AddLeaderLoop("scheduler", options.interval, [scheduler] { return scheduler->RunOnce(); },
                      {"Node", "Queue", "ResourceFlavor", "Job", "Pod"});
  plane.AddLeaderLoop("job controller", options.interval, [jobs] { return jobs->RunOnce(); },
                      {"Job", "Pod"});
  // Time alone loses a node: this loop ticks, and wakes on nothing.
  plane.AddLeaderLoop("node controller", options.interval, [nodes] { return nodes->RunOnce(); });
  // Jobs idling on their GPUs are warned about and, where their queue says so, reclaimed first:
  // judged on NVML's readings for real GPUs, and for simulated GPUs on the readings derived
  // from the busy share the agent measures from each pod's CPU use.
  auto idle = std::make_shared<controller::IdleReclaimLoop>(store, cache, plane.cluster_objects(),
                                                            clock, plane.gpu_readings());
  plane.AddLeaderLoop("idle reclaim", std::chrono::seconds(30), [idle] { return idle->RunOnce(); });
  if (kube::Client* client = plane.kube_client()) {
    // On a cluster, kubeflow.org/v1 PyTorchJobs, where strata's CRD serves them.
    auto pytorchjobs = std::make_shared<kubecompat::PyTorchJobOperator>(*client, cache, clock);
    plane.AddLeaderLoop("pytorchjobs", options.interval,
                        [pytorchjobs] { return pytorchjobs->RunOnce(); }, {"Job", "Pod"});
  }
  out << "strata: scheduler, job and node controllers"
      << (running.agent
              ? ", and a node agent for " + std::to_string(plane.node_names().size()) + " node(s)"
              : std::string())
      << " running" << std::endl;
  ASSIGN_OR_RETURN(running.gateway, StartServing(plane, options, std::move(tokens), out));
  // What the dashboard's pages open with, on every plane (each records its own gateway).
  GatewaySignalSource signals;
  if (std::shared_ptr<gateway::GatewayServer> gateway = running.gateway) {
    signals = [gateway] { return gateway->Signals(); };
  }
  auto history = std::make_shared<HistoryRecorder>(cache, plane.registry(), *plane.history(), clock,
                                                   std::move(signals));
  plane.AddLoop("history", plane.history()->options().step,
                [history] { return history->RecordOnce(); });
  return running;
}

void StopControlLoops(RunningLoops& loops, bool keep_pods) {
  if (loops.gateway) loops.gateway->Stop();
  // The control loops are stopped, so nothing else touches the agent now.
  if (loops.agent && !keep_pods) loops.agent->StopEverything();
}

int StopPodsNow(const RunningLoops& loops) {
  if (!loops.runtime) return 0;
  int stopped = 0;
  for (int sweep = 0; sweep < 2; ++sweep) {
    std::vector<std::thread> stoppers;
    for (std::string& uid : RunningPods(*loops.runtime, loops.data_dir)) {
      stoppers.emplace_back([runtime = loops.runtime, uid = std::move(uid), &loops] {
        Status status = runtime->Stop(uid, loops.stop_grace);
        if (!status.ok()) spdlog::warn("stopping pod {}: {}", uid, status.ToString());
      });
    }
    stopped += static_cast<int>(stoppers.size());
    for (std::thread& stopper : stoppers) stopper.join();
  }
  return stopped;
}

}  // namespace strata::server
