// `strata up`: run the control plane on this machine until SIGINT or SIGTERM.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <future>
#include <iostream>
#include <memory>
#include <thread>

#include "cli/command_registry.h"
#include "client/credentials.h"
#include "kubesched/scheduler_service.h"
#include "server/control_loops.h"
#include "server/control_plane.h"
#include "server/service_token_ledger.h"

namespace strata::cli {
namespace {

// Blocks SIGINT and SIGTERM in this thread and the threads it starts afterwards, so that only
// the caller's sigwait receives them; returns that set. Call before any thread starts.
sigset_t BlockStopSignals() {
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  return stop_signals;
}

// Records the plane's admin credential for the URL the CLI on this machine reaches it at, so
// that `strata get ...` works without --token (kubectl's kubeconfig, which kind writes too).
void RememberAdminCredential(const server::ControlPlane& plane, std::ostream& out) {
  if (plane.admin_token().empty()) return;  // users' tokens came from --token-file
  const std::string server = "http://127.0.0.1:" + std::to_string(plane.port());
  const std::string path = client::CredentialsPath();
  Status remembered = path.empty() ? UnavailableError("no home directory")
                                   : client::RememberCredential(path, server, plane.admin_token());
  out << "strata: dashboard at " << server << "/ (sign in as admin: open " << server
      << "/?token=$(cat " << plane.admin_token_file() << "))" << std::endl;
  if (remembered.ok()) {
    out << "strata: the CLI's credential for " << server << " is in " << path << std::endl;
  } else {
    out << "strata: the CLI cannot find the admin credential by itself (" << remembered.message()
        << "); give it --token or $STRATA_TOKEN" << std::endl;
  }
}

// How long the control loops get, once asked to stop, to end the pass they are in.
constexpr std::chrono::seconds kLoopStopTimeout{5};

// Runs `stop` on a thread of its own and waits for it. Returns "" once it returned; otherwise,
// after kLoopStopTimeout or at a second SIGINT or SIGTERM, why it was not waited for (the
// thread is left running: the caller is to exit at once, with std::_Exit).
std::string StopInTime(std::function<void()> stop, const sigset_t& stop_signals) {
  std::packaged_task<void()> task(std::move(stop));
  std::future<void> stopped = task.get_future();
  std::thread stopper(std::move(task));
  const auto deadline = std::chrono::steady_clock::now() + kLoopStopTimeout;
  const timespec tick{0, 50'000'000};
  while (stopped.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
    if (sigtimedwait(&stop_signals, nullptr, &tick) > 0) {
      stopper.detach();
      return "stopping again";
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      stopper.detach();
      return "still busy after " + std::to_string(kLoopStopTimeout.count()) + " s";
    }
  }
  stopper.join();
  return "";
}

// Stops the plane and then the loops' gateway and pods, as asked. A control loop still in its
// pass after kLoopStopTimeout (or a second SIGINT or SIGTERM meanwhile) is left behind: the
// pods' processes are stopped directly, and the process exits at once with status 1. So strata
// up ends within kLoopStopTimeout plus the pods' stop grace, however busy it is.
void StopUp(server::ControlPlane& plane, server::RunningLoops& running, bool keep_pods,
            const sigset_t& stop_signals) {
  std::string late = StopInTime([&plane] { plane.Stop(); }, stop_signals);
  if (!late.empty()) {
    std::cerr << "strata up: " << late << "; stopping the pods and exiting now" << std::endl;
    int stopped = keep_pods ? 0 : server::StopPodsNow(running);
    std::cout << "strata: " << stopped << " pod(s) stopped; exiting" << std::endl;
    // The busy loop's thread cannot be joined: leave without running destructors. The store
    // stays consistent (every commit is whole in SQLite's write-ahead log).
    std::_Exit(1);
  }
  server::StopControlLoops(running, keep_pods);
}

void RunUp(const server::ControlPlaneOptions& options, server::ControlLoopsOptions loops,
           bool keep_pods) {
  const sigset_t stop_signals = BlockStopSignals();

  // The gateway's token counts, per service, for the cost endpoint's cost per million tokens.
  auto tokens = std::make_shared<server::ServiceTokenLedger>();
  server::ControlPlaneOptions plane_options = options;
  // Absolute, so that the paths pods are given under it (checkpoints, logs) hold wherever
  // their processes run from.
  std::error_code ignored;
  std::filesystem::path absolute = std::filesystem::absolute(options.data_dir, ignored);
  if (!absolute.empty()) plane_options.data_dir = absolute.lexically_normal().string();
  plane_options.service_tokens = [tokens](TimePoint from, TimePoint to) {
    return tokens->Between(from, to);
  };
  plane_options.on_serving = [](const server::ControlPlane& plane) {
    RememberAdminCredential(plane, std::cout);
  };
  Result<std::unique_ptr<server::ControlPlane>> plane =
      server::ControlPlane::Start(plane_options, std::cout);
  if (!plane) {
    std::cerr << "strata up: " << plane.error().message() << "\n";
    SetExitCode(plane.error().code() == StatusCode::kInvalidArgument ? 2 : 1);
    return;
  }
  // Its finished minutes are kept in the cost ledger, so they survive a restart.
  tokens->Persist((*plane)->cost_ledger());
  loops.strata_path = SelfPath();
  Result<server::RunningLoops> running =
      server::StartControlLoops(**plane, plane_options.data_dir, loops, tokens, std::cout);
  if (!running) {
    std::cerr << "strata up: " << running.error().message() << "\n";
    SetExitCode(running.error().code() == StatusCode::kInvalidArgument ? 2 : 1);
    (*plane)->Stop();
    return;
  }
  const timespec tick{0, 200'000'000};
  for (;;) {
    if ((*plane)->lost_leadership()) {
      std::cerr << "strata up: leadership lost; stopping (start again to stand by)\n";
      SetExitCode(1);
      break;
    }
    int signal_number = sigtimedwait(&stop_signals, nullptr, &tick);
    if (signal_number > 0) {
      std::cout << "strata: stopping (signal " << signal_number << ")" << std::endl;
      break;
    }
  }
  StopUp(**plane, *running, keep_pods, stop_signals);
  if (keep_pods) {
    std::cout << "strata: pods keep running (--keep-pods); the next strata up adopts them"
              << std::endl;
  }
}

// `strata up --kubernetes`: strata schedules a Kubernetes cluster's pods until SIGINT or SIGTERM,
// or until it loses the scheduler lease (exit 1, as kube-scheduler).
void RunUpKubernetes(const kubesched::SchedulerServiceOptions& options) {
  const sigset_t stop_signals = BlockStopSignals();
  Result<std::unique_ptr<kubesched::SchedulerService>> service =
      kubesched::SchedulerService::Start(options, std::cout);
  if (!service) {
    std::cerr << "strata up --kubernetes: " << service.error().message() << "\n";
    SetExitCode(service.error().code() == StatusCode::kInvalidArgument ? 2 : 1);
    return;
  }
  const timespec tick{0, 200'000'000};
  while (!(*service)->done()) {
    int signal_number = sigtimedwait(&stop_signals, nullptr, &tick);
    if (signal_number > 0) {
      std::cout << "strata: stopping (signal " << signal_number << ")" << std::endl;
      break;
    }
  }
  Status ended;
  std::string late = StopInTime([&] { ended = (*service)->Stop(); }, stop_signals);
  if (!late.empty()) {
    std::cerr << "strata up --kubernetes: " << late << "; exiting now" << std::endl;
    std::_Exit(1);
  }
  if (!ended.ok()) {
    std::cerr << "strata up --kubernetes: " << ended.message() << "\n";
    SetExitCode(1);
  }
}

}  // namespace

STRATA_REGISTER_COMMANDS("up", [](CLI::App& app) {
  auto options = std::make_shared<server::ControlPlaneOptions>();
  auto loops = std::make_shared<server::ControlLoopsOptions>();
  auto keep_pods = std::make_shared<bool>(false);
  auto no_nodes = std::make_shared<bool>(false);
  auto kubernetes = std::make_shared<bool>(false);
  auto kube = std::make_shared<kubesched::SchedulerServiceOptions>();
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
  up->add_option("--secure-listen", options->secure_listen,
                 "HOST:PORT for the same API over HTTPS, for kubectl and client-go (which send "
                 "credentials only over TLS), with DATA_DIR/kubeconfig written for it; off: none")
      ->capture_default_str();
  up->add_option("--simulate", options->simulate,
                 "Simulated inventory NODESxGPUS:MODEL[,racks=R][,prefix=NAME], e.g. "
                 "4x8:H100-80GB,racks=2 (default: NVML, else that shape); the nodes are "
                 "NAME-0.. (default sim-node)");
  up->add_option("--join-token-file", options->join_token_file,
                 "Join tokens for node agents on other machines (strata agent --join-token), one "
                 "per line");
  up->add_option("--token-file", options->token_file,
                 "Users' bearer tokens, one per line: TOKEN [user=NAME] [namespaces=NS,...] (a "
                 "token without namespaces is an admin); default: DATA_DIR/admin-token, made at "
                 "the first start");
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
  up->add_flag("--allow-root-pods", loops->allow_root_pods,
               "When strata runs as root, let pods that ask for it (securityContext.runAsUser: 0) "
               "run as root; other pods run as nobody or the user they name");
  up->add_option("--stop-grace", loops->stop_grace_seconds,
                 "Seconds a stopped pod's processes get between SIGTERM and SIGKILL. SIGINT or "
                 "SIGTERM stops strata up within 5 s (the control loops' pass) plus this")
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
  up->add_option_function<double>(
        "--history-step",
        [options](double seconds) {
          options->history.step =
              std::chrono::duration_cast<Duration>(std::chrono::duration<double>(seconds));
        },
        "Seconds between two samples of the history the dashboard's charts open with (default "
        "15)")
      ->check(CLI::Range(0.1, 3600.0));
  up->add_option_function<double>(
        "--history-hours",
        [options](double hours) {
          options->history.window = std::chrono::duration_cast<Duration>(
              std::chrono::duration<double, std::ratio<3600>>(hours));
        },
        "Hours of history kept for the dashboard (default 6; memory: about 6 KB per series "
        "per 1,440 samples)")
      ->check(CLI::Range(0.01, 168.0));
  up->add_option("--drain-grace", loops->drain_grace_seconds,
                 "Seconds a draining replica may keep streams open before it is stopped")
      ->capture_default_str()
      ->check(CLI::Range(0, 86400));
  up->add_flag("--no-nodes", *no_nodes,
               "Run no node here (no inventory, no node agent): the control plane alone, its "
               "nodes joining with strata agent");
  up->add_flag("--keep-pods", *keep_pods,
               "Leave the pods' processes running when strata up stops (SIGINT, SIGTERM); the "
               "next strata up on this data dir adopts them. Default: they are stopped too");
  up->add_option("--store", options->store,
                 "Where the state lives: sqlite (in the data dir) or kubernetes (the API server "
                 "of --kubeconfig, with strata's CRDs installed: strata kubernetes manifests)")
      ->check(CLI::IsMember({"sqlite", "kubernetes"}))
      ->capture_default_str();
  up->add_flag("--kubernetes", *kubernetes,
               "Schedule a Kubernetes cluster instead (pods whose schedulerName is "
               "--scheduler-name, bound through pods/binding); the embedded control plane's "
               "flags do not apply");
  up->add_option("--kubeconfig", kube->kubeconfig,
                 "With --kubernetes or --store kubernetes: the kubeconfig (default: $KUBECONFIG, "
                 "~/.kube/config, then the in-cluster service account)");
  up->add_option("--scheduler-name", kube->scheduler.scheduler_name,
                 "With --kubernetes: the spec.schedulerName of the pods strata places")
      ->capture_default_str();
  up->add_option("--kube-api-qps", kube->qps,
                 "With --kubernetes or --store kubernetes: the API client's requests per second "
                 "(0: unlimited)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 100000.0));
  up->add_option("--kube-api-burst", kube->burst,
                 "With --kubernetes or --store kubernetes: the API client's burst")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  up->add_option("--kube-api-workers", kube->scheduler.api_workers,
                 "With --kubernetes: binds and status writes in flight at once")
      ->capture_default_str()
      ->check(CLI::Range(1, 1024));
  up->add_option("--topology-levels", kube->scheduler.topology_levels,
                 "With --kubernetes: the node label keys that are topology levels, outermost "
                 "first (a Kueue Topology's levels); kubernetes.io/hostname is always the "
                 "innermost")
      ->delimiter(',')
      ->capture_default_str();
  up->add_option("--dra-gpu-driver", kube->scheduler.dra_gpu_driver,
                 "With --kubernetes: the Dynamic Resource Allocation driver whose devices are "
                 "GPUs (their ResourceSlices a node's GPUs, allocated to pods' ResourceClaims)")
      ->capture_default_str();
  up->add_option("--kueue-quotas", kube->scheduler.kueue_quotas,
                 "With --kubernetes: enforce the quotas of Kueue's ClusterQueues on pods that "
                 "name a LocalQueue (kueue.x-k8s.io/queue-name), when Kueue's CRDs are installed; "
                 "false when Kueue's own controller admits them")
      ->capture_default_str();
  up->add_option("--leader-elect", kube->leader_elect,
                 "With --kubernetes or --store kubernetes: one active scheduler (or set of "
                 "controllers) through a Lease; the others stand by")
      ->capture_default_str();
  up->add_option("--leader-elect-resource-namespace", kube->election.lease_namespace,
                 "With --kubernetes or --store kubernetes: the Lease's namespace")
      ->capture_default_str();
  up->add_option("--kubelet-listen", options->kubelet_listen,
                 "With --store kubernetes: HOST:PORT of the nodes' kubelet endpoint, through which "
                 "the API server serves kubectl logs (port 0: any free one)")
      ->capture_default_str();
  up->add_option("--kubelet-client-ca-file", options->kubelet_client_ca_file,
                 "With --store kubernetes: the CA of the API server's kubelet client certificate "
                 "(default: the CA the kubeconfig trusts)");
  CLI::Option* lease_name =
      up->add_option("--leader-elect-resource-name", kube->election.lease_name,
                     "The Lease's name (default: strata-scheduler with --kubernetes, "
                     "strata-control-plane with --store kubernetes)");
  up->callback([options, loops, keep_pods, no_nodes, gateway_listen, kubernetes, kube, lease_name] {
    if (*kubernetes) {
      RunUpKubernetes(*kube);
      return;
    }
    loops->gateway_listen_given = gateway_listen->count() > 0;
    options->local_nodes = !*no_nodes;
    loops->run_node_agent = !*no_nodes;
    options->kubeconfig = kube->kubeconfig;
    options->kube_api_qps = kube->qps;
    options->kube_api_burst = kube->burst;
    options->leader_elect = kube->leader_elect;
    options->election.lease_namespace = kube->election.lease_namespace;
    if (lease_name->count() > 0) options->election.lease_name = kube->election.lease_name;
    RunUp(*options, *loops, *keep_pods);
  });
});

}  // namespace strata::cli
