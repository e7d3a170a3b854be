// `strata agent`: a node agent for another machine (or a simulated node) that
// joins a control plane with a join token, then runs the pods bound to its node
// and heartbeats, over the REST API with the node credential it was given
// (client::RemoteStore), until SIGINT or SIGTERM. With --kubeconfig instead, it
// joins a Kubernetes cluster whose state strata keeps there (strata up --store
// kubernetes) as a virtual kubelet: its v1 Node, its Lease in kube-node-lease,
// the pods bound to it run here, and the kubelet endpoint for kubectl logs. With
// --inventory, the inventory role on a node whose kubelet is the real one: its GPUs on its Node.
// Pods' logs stay in this agent's data dir. Exit codes: 0 after a signal, 1 when
// joining or starting fails, 2 usage.
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <string>

#include "api/annotations.h"
#include "api/encode.h"
#include "api/pod_contract.h"
#include "cli/command_registry.h"
#include "client/api_client.h"
#include "client/remote_store.h"
#include "cluster/indexes.h"
#include "common/atomic_file.h"
#include "common/clock.h"
#include "kube/client.h"
#include "kube/node_bootstrap.h"
#include "kubestore/kube_store.h"
#include "net/http_server.h"
#include "node/node_agent.h"
#include "node/nvml_inventory.h"
#include "node/pod_cidr.h"
#include "node/process_runtime.h"
#include "node/simulated_inventory.h"
#include "server/access_tokens.h"
#include "server/control_plane.h"
#include "server/inventory_agent.h"
#include "server/kubelet_endpoint.h"
#include "server/node_access.h"
#include "server/node_heartbeat.h"
#include "server/node_registration.h"

namespace strata::cli {
namespace {

struct AgentOptions {
  std::string server;
  std::string join_token_file;
  std::string name;
  std::string simulate;
  std::string data_dir = "strata-agent-data";
  std::string nvml_library = "libnvidia-ml.so.1";
  std::string address;  // where this node's workers are reached; empty: its host name
  // On Kubernetes: the kubeconfig, and the kubelet endpoint's address and client CA.
  std::string kubeconfig;
  std::string bootstrap_kubeconfig;  // with kubeconfig: the kubelet's TLS bootstrap
  bool on_kubernetes = false;
  std::string kubelet_listen = "127.0.0.1:0";
  std::string kubelet_client_ca_file;
  std::string pod_cidr;                  // with --kubeconfig: where foreign pods get their own IPs
  double sim_startup_delay_seconds = 5;  // engine-sim replicas on a simulated node
  int64_t heartbeat_seconds = 10;
  bool allow_root_pods = false;
  int64_t fence_after_seconds = 25;
  int64_t pass_milliseconds = 500;
  // The inventory role: this node's GPUs on its Node, DCGM figures on metrics_listen.
  bool inventory = false;
  std::string metrics_listen = "127.0.0.1:9400";
};

std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

// This machine's node as the agent registers it: the GPUs NVML finds, or the
// first node of the simulated shape, named `options.name`.
Result<api::Node> DiscoverNode(const AgentOptions& options, std::ostream& out) {
  std::vector<node::NodeGpus> found;
  bool simulated = true;
  if (!options.simulate.empty()) {
    ASSIGN_OR_RETURN(node::SimulateSpec spec, node::ParseSimulateSpec(options.simulate));
    node::SimulatedInventory inventory(spec);
    ASSIGN_OR_RETURN(found, inventory.Discover());
    out << "strata agent: using the " << inventory.Describe() << " inventory (--simulate)\n";
  } else {
    ASSIGN_OR_RETURN(node::LocalInventory local,
                     node::OpenLocalInventory(options.nvml_library, options.name, "1x8:H100-80GB"));
    simulated = dynamic_cast<node::SimulatedInventory*>(local.inventory.get()) != nullptr;
    found = std::move(local.nodes);
    out << "strata agent: " << local.notice << "\n";
  }
  if (found.empty()) return Err(FailedPreconditionError("the inventory found no node"));
  found.resize(1);  // one agent serves one node
  if (simulated) {
    node::RenameSimulatedNode(found[0], options.name);
  } else {
    found[0].node_name = options.name;
  }
  return server::NodesFromInventory(
      found, simulated ? server::SimulatedNodeCapacity() : server::HostCapacity(), simulated,
      RealClock::Instance().Now())[0];
}

// Where an agent keeps the node credential it was given, to join again with it after a restart
// (a join token admits a node name once).
std::string CredentialFile(const AgentOptions& options) {
  return options.data_dir + "/node-credential";
}

// POSTs `node` to the join endpoint with `token`; returns the node credential.
Result<std::string> JoinWith(const AgentOptions& options, const api::Node& node,
                             const std::string& token) {
  ASSIGN_OR_RETURN(std::unique_ptr<client::ApiClient> client,
                   client::ApiClient::Create(options.server, token));
  ASSIGN_OR_RETURN(nlohmann::json credential,
                   client->Call("POST", server::NodeAccess::kJoinPath,
                                api::EncodeObject(api::Object(node)).dump(), "application/json"));
  std::string issued = credential.value("token", "");
  if (issued.empty()) return Err(InternalError("the server's join answer holds no token"));
  return issued;
}

// Joins the control plane: with the node credential kept from an earlier join when there is
// one, else with the join token, keeping the credential it is given (readable by this user
// only). Returns the node credential.
Result<std::string> Join(const AgentOptions& options, const api::Node& node) {
  const std::string kept_file = CredentialFile(options);
  if (Result<std::vector<std::string>> kept = server::ReadTokenFile(kept_file, "node credential")) {
    Result<std::string> rejoined = JoinWith(options, node, kept->front());
    if (rejoined || rejoined.error().code() != StatusCode::kUnauthenticated) return rejoined;
    std::cerr << "strata agent: the kept node credential is no longer valid ("
              << rejoined.error().message() << "); joining with the join token" << std::endl;
  }
  ASSIGN_OR_RETURN(std::vector<std::string> join_tokens,
                   server::ReadTokenFile(options.join_token_file, "--join-token"));
  ASSIGN_OR_RETURN(std::string credential, JoinWith(options, node, join_tokens.front()));
  std::error_code made;
  std::filesystem::create_directories(options.data_dir, made);
  RETURN_IF_ERROR(ReplaceFileAtomically(kept_file, credential + "\n", 0600));
  return credential;
}

// Where the agent keeps its node's state: the control plane's REST API (joined with the join
// token), or the Kubernetes API with the kubelet endpoint beside it.
struct AgentStore {
  std::unique_ptr<kube::Client> kube_client;  // null off Kubernetes; outlives the store
  std::unique_ptr<store::Store> store;
  std::unique_ptr<kube::KubeletServer> kubelet;  // reads the store: stopped first
  std::string joined;                            // what it joined, for the first line
  server::LeaseRenewal renew_lease;              // the heartbeat's, through the store's API
  ~AgentStore() {
    if (kubelet) kubelet->Stop();
  }
};

// Registers `node` on Kubernetes, with the kubelet endpoint serving its pods' logs.
Result<std::unique_ptr<AgentStore>> JoinKubernetes(const AgentOptions& options, api::Node node) {
  auto joined = std::make_unique<AgentStore>();
  kube::ClientOptions client_options;
  client_options.user_agent = "strata-agent/" STRATA_VERSION;
  if (!options.bootstrap_kubeconfig.empty()) {
    kube::NodeBootstrap bootstrap;
    bootstrap.node_name = node.metadata.name;
    bootstrap.kubeconfig_path = options.kubeconfig;
    bootstrap.bootstrap_kubeconfig_path = options.bootstrap_kubeconfig;
    RETURN_IF_ERROR(kube::EnsureNodeCredentials(bootstrap, RealClock::Instance()));
  }
  ASSIGN_OR_RETURN(joined->kube_client,
                   kube::Client::FromKubeconfig(options.kubeconfig, client_options));
  // The kubelet's view of pods: those bound to its node, strata's or anyone's.
  kubestore::KubeStoreOptions store_options;
  store_options.kubelet_node = node.metadata.name;
  joined->store = std::make_unique<kubestore::KubeStore>(*joined->kube_client, store_options);
  server::KubeletEndpointOptions kubelet;
  kubelet.listen = options.kubelet_listen;
  kubelet.client_ca_file = options.kubelet_client_ca_file;
  kubelet.pods_dir = options.data_dir + "/pods";
  std::vector<api::Node> nodes = {std::move(node)};
  ASSIGN_OR_RETURN(joined->kubelet, server::StartNodesKubelet(*joined->store, *joined->kube_client,
                                                              kubelet, nodes, std::cout));
  RETURN_IF_ERROR(server::RegisterNodes(*joined->store, nodes));
  joined->joined = joined->kube_client->server();
  joined->renew_lease = server::KubernetesLeaseRenewal(*joined->kube_client);
  return joined;
}

// Joins a strata control plane with the join token, and works through its REST API.
Result<std::unique_ptr<AgentStore>> JoinControlPlane(const AgentOptions& options,
                                                     const api::Node& node) {
  ASSIGN_OR_RETURN(std::string credential, Join(options, node));
  client::RemoteStoreOptions remote_options;
  remote_options.server = options.server;
  remote_options.token = credential;
  remote_options.node_name = options.name;
  auto joined = std::make_unique<AgentStore>();
  ASSIGN_OR_RETURN(std::unique_ptr<client::RemoteStore> remote,
                   client::RemoteStore::Create(remote_options));
  joined->renew_lease = [api = remote.get()](const std::string& name, TimePoint now) {
    return api->RenewNodeLease(name, now);
  };
  joined->store = std::move(remote);
  joined->joined = options.server;
  return joined;
}

// Joins and runs until a stop signal; returns the signal's number.
Result<int> RunAgent(const AgentOptions& options, const sigset_t& stop_signals) {
  ASSIGN_OR_RETURN(api::Node node, DiscoverNode(options, std::cout));
  if (!options.address.empty()) {
    node.metadata.annotations[api::kNodeAddressAnnotation] = options.address;
  }
  if (!options.pod_cidr.empty()) {
    Result<node::PodCidr> cidr = node::PodCidr::Parse(options.pod_cidr);
    if (!cidr) return Err(InvalidArgumentError("--pod-cidr: " + cidr.error().message()));
  }
  if (options.fence_after_seconds <= 2 * options.heartbeat_seconds) {
    return Err(InvalidArgumentError(fmt::format(
        "--fence-after ({} s) must be more than twice --heartbeat-interval ({} s), or one late "
        "renewal would stop every pod",
        options.fence_after_seconds, options.heartbeat_seconds)));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<AgentStore> joined, options.on_kubernetes
                                                           ? JoinKubernetes(options, node)
                                                           : JoinControlPlane(options, node));
  store::Store& remote = *joined->store;
  node::ProcessRuntime::Options runtime_options;
  runtime_options.data_dir = options.data_dir;
  ASSIGN_OR_RETURN(std::unique_ptr<node::ProcessRuntime> runtime,
                   node::ProcessRuntime::Create(runtime_options));
  node::NodeAgentOptions agent_options;
  agent_options.node_names = {options.name};
  agent_options.data_dir = options.data_dir;
  agent_options.base_env = node::DefaultBaseEnvironment();
  agent_options.allow_root_pods = options.allow_root_pods;
  agent_options.pod_cidr = options.pod_cidr;
  if (!options.simulate.empty()) {
    // Simulated GPUs run no real engine: Service replicas run engine-sim in its place.
    node::EngineSimSubstitution engine_sim;
    engine_sim.strata_path = SelfPath();
    engine_sim.startup_delay = std::chrono::duration_cast<Duration>(
        std::chrono::duration<double>(options.sim_startup_delay_seconds));
    agent_options.engine_sim = std::move(engine_sim);
  }
  cluster::Cache cache(remote, cluster::NodeAgentCacheOptions());
  node::NodeAgent agent(remote, cache, *runtime, RealClock::Instance(), agent_options);
  std::cout << "strata agent: joined " << joined->joined << " as node " << options.name << " ("
            << node.status.gpus.size() << " GPU(s)); pods run here with logs under "
            << options.data_dir << std::endl;

  server::NodeHeartbeat heartbeat(remote, cache, joined->renew_lease);
  const RealClock& clock = RealClock::Instance();
  TimePoint next_heartbeat = clock.Now();
  timespec pause{options.pass_milliseconds / 1000, (options.pass_milliseconds % 1000) * 1000000};
  while (true) {
    if (clock.Now() >= next_heartbeat) {
      const TimePoint now = clock.Now();
      Status beat = heartbeat.Beat({options.name}, now);
      if (!beat.ok()) std::cerr << "strata agent: heartbeat: " << beat.message() << "\n";
      // Fencing: pods outlive a renewal only by this long, so their replacements (which the
      // control plane starts 40 s after the node's last renewal) never run beside them.
      Status renewed =
          beat.ok() ? runtime->RenewLease(now + std::chrono::seconds(options.fence_after_seconds))
                    : Status::Ok();
      if (!renewed.ok()) std::cerr << "strata agent: lease: " << renewed.message() << "\n";
      next_heartbeat = clock.Now() + std::chrono::seconds(options.heartbeat_seconds);
    }
    Status pass = agent.RunOnce();
    if (!pass.ok()) std::cerr << "strata agent: " << pass.message() << "\n";
    int signal_number = sigtimedwait(&stop_signals, nullptr, &pause);
    if (signal_number > 0) {
      std::cout << "strata agent: stopping (signal " << signal_number
                << "); the pods' processes keep running for the next agent to adopt, for "
                << options.fence_after_seconds << " s after the last lease renewal" << std::endl;
      return signal_number;
    }
  }
}

// strata agent --inventory: publishes this node's GPUs on its Node, and serves their DCGM
// figures, until a stop signal; returns the signal's number.
Result<int> RunInventory(const AgentOptions& options, const sigset_t& stop_signals) {
  kube::ClientOptions client_options;
  client_options.user_agent = "strata-agent/" STRATA_VERSION;
  ASSIGN_OR_RETURN(std::unique_ptr<kube::Client> client,
                   kube::Client::FromKubeconfig(options.kubeconfig, client_options));
  server::InventoryAgent inventory(*client, {options.name, options.nvml_library});
  ASSIGN_OR_RETURN(auto address, server::ParseListenAddress(options.metrics_listen));
  net::HttpServerOptions http;
  http.host = address.first;
  http.port = address.second;
  net::HttpServer metrics(http);
  metrics.Route("GET", "/metrics", [&inventory](net::HttpRequest, net::ResponseWriter writer) {
    writer.Respond(net::HttpResponse::Text(200, "text/plain; version=0.0.4", inventory.Metrics()));
  });
  metrics.Route("GET", "/healthz", [](net::HttpRequest, net::ResponseWriter writer) {
    writer.Respond(net::HttpResponse::Text(200, "text/plain", "ok"));
  });
  RETURN_IF_ERROR(metrics.Start());
  std::cout << "strata agent: inventory of node " << options.name << " for " << client->server()
            << "; DCGM figures on http://" << address.first << ":" << metrics.port() << "/metrics"
            << std::endl;
  std::string last_outcome;
  const timespec pause{options.heartbeat_seconds, 0};
  while (true) {
    Status pass = inventory.RunOnce();
    std::string outcome = "not published: " + pass.message();
    if (pass.ok()) {
      const nlohmann::json& labels = inventory.written()["labels"];
      outcome = "published " + labels.value(api::kGpuCountLabel, "0") + " GPU(s) in " +
                labels.value(api::kNvlinkIslandsLabel, "0") + " NVLink island(s), " +
                labels.value(api::kUnhealthyGpusLabel, "0") + " unhealthy, MIG " +
                (labels.value(api::kMigEnabledLabel, "") == "true" ? "on" : "off");
    }
    if (outcome != last_outcome) {
      (pass.ok() ? std::cout : std::cerr)
          << "strata agent: node " << options.name << ": " << outcome << std::endl;
      last_outcome = std::move(outcome);
    }
    int signal_number = sigtimedwait(&stop_signals, nullptr, &pause);
    if (signal_number > 0) {
      std::cout << "strata agent: stopping (signal " << signal_number << ")" << std::endl;
      metrics.Stop();
      return signal_number;
    }
  }
}

}  // namespace

STRATA_REGISTER_COMMANDS("agent", [](CLI::App& app) {
  auto options = std::make_shared<AgentOptions>();
  CLI::App* agent = app.add_subcommand("agent",
                                       "Join a control plane as a node and run its pods here (NVML "
                                       "GPUs, else a simulated node)");
  CLI::Option* server =
      agent->add_option("--server", options->server, "The control plane, http://HOST:PORT");
  CLI::Option* join_token =
      agent->add_option("--join-token", options->join_token_file,
                        "File holding the join token (strata up --join-token-file)");
  CLI::Option* kubeconfig = agent->add_option(
      "--kubeconfig", options->kubeconfig,
      "Join the Kubernetes cluster of this kubeconfig instead (strata up --store kubernetes), as "
      "a virtual kubelet: its Node and Lease, its pods, kubectl logs");
  agent
      ->add_option("--bootstrap-kubeconfig", options->bootstrap_kubeconfig,
                   "With --kubeconfig: the kubelet's TLS bootstrap. When --kubeconfig holds no "
                   "certificate of this node's (or one about to expire), a new key's request is "
                   "posted with these credentials (a bootstrap token) and, once approved and "
                   "signed, --kubeconfig is written: the node then acts as system:node:NAME, "
                   "confined to its own Node and pods by the Node authorizer and NodeRestriction")
      ->needs(kubeconfig);
  server->needs(join_token)->excludes(kubeconfig);
  join_token->needs(server)->excludes(kubeconfig);
  agent
      ->add_option("--kubelet-listen", options->kubelet_listen,
                   "With --kubeconfig: HOST:PORT of the kubelet endpoint (kubectl logs)")
      ->capture_default_str();
  agent->add_option("--kubelet-client-ca-file", options->kubelet_client_ca_file,
                    "With --kubeconfig: the CA of the API server's kubelet client certificate "
                    "(default: the CA the kubeconfig trusts)");
  CLI::Option* pod_cidr = agent->add_option(
      "--pod-cidr", options->pod_cidr,
      "With --kubeconfig: the IPv4 range (a loopback one, 127.0.101.0/24, on one machine) from "
      "which each pod strata did not make (a Deployment's, a batch Job's) gets an IP of its own, "
      "as from a kubelet's network plugin; without it, pods share the node's address");
  pod_cidr->needs(kubeconfig);
  agent->add_option("--name", options->name, "This node's name (default: the host name)");
  agent
      ->add_option("--fence-after", options->fence_after_seconds,
                   "Seconds after its last renewal with the control plane that a node's pods "
                   "are stopped when the agent cannot renew (fencing); below the control "
                   "plane's 40 s node grace less the stop grace, so replacements never run "
                   "beside them")
      ->capture_default_str()
      ->check(CLI::Range(5, 30));
  agent->add_flag("--allow-root-pods", options->allow_root_pods,
                  "When the agent runs as root, let pods that ask for it "
                  "(securityContext.runAsUser: 0) run as root; other pods run as nobody or the "
                  "user they name");
  agent->add_option("--simulate", options->simulate,
                    "Simulated inventory NODESxGPUS:MODEL; the first node is this one");
  agent->add_option("--data-dir", options->data_dir, "Where pods' logs and state live")
      ->capture_default_str();
  agent->add_option("--address", options->address,
                    "Where other nodes reach this node's workers (MASTER_ADDR); default: its "
                    "host name");
  agent
      ->add_option("--sim-startup-delay", options->sim_startup_delay_seconds,
                   "With --simulate: seconds a simulated engine takes to load its weights")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 3600.0));
  agent->add_option("--nvml-library", options->nvml_library, "Where NVML is loaded from")
      ->capture_default_str();
  agent
      ->add_option("--heartbeat-interval", options->heartbeat_seconds,
                   "Seconds between heartbeats: Lease renewals (the Node's status is "
                   "written when it changes or every 5 minutes)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  CLI::Option* inventory = agent->add_flag(
      "--inventory", options->inventory,
      "The inventory role, on a GPU node of a Kubernetes cluster (the DaemonSet of strata "
      "kubernetes manifests): NVML's GPUs, NVLink islands, MIG and health as its Node's labels "
      "and annotations, every --heartbeat-interval; no pods run. --kubeconfig: default the "
      "pod's service account");
  inventory->excludes(server)->excludes(join_token);
  agent
      ->add_option("--metrics-listen", options->metrics_listen,
                   "With --inventory: HOST:PORT serving the GPUs' DCGM figures at /metrics")
      ->capture_default_str();
  agent->callback([options, server, kubeconfig] {
    options->on_kubernetes = kubeconfig->count() > 0;
    if (!options->inventory && !options->on_kubernetes && server->count() == 0) {
      std::cerr << "strata agent: give --server and --join-token, or --kubeconfig\n";
      SetExitCode(2);
      return;
    }
    if (options->name.empty()) options->name = HostName();
    // Block the stop signals before any thread starts, so that only
    // sigtimedwait receives them.
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
    Result<int> stopped = options->inventory ? RunInventory(*options, stop_signals)
                                             : RunAgent(*options, stop_signals);
    if (!stopped) {
      std::cerr << "strata agent: " << stopped.error().message() << "\n";
      SetExitCode(stopped.error().code() == StatusCode::kInvalidArgument ? 2 : 1);
    }
  });
});

}  // namespace strata::cli
