#include "server/control_plane.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "api/annotations.h"
#include "api/pod_contract.h"
#include "cluster/indexes.h"
#include "kube/client.h"
#include "kube/leader_election.h"
#include "kubestore/kube_store.h"
#include "metrics/metrics.h"
#include "net/self_signed_certificate.h"
#include "node/gpu_metrics.h"
#include "node/nvml_inventory.h"
#include "node/simulated_inventory.h"
#include "observe/cluster_cost.h"
#include "server/access_tokens.h"
#include "server/api_listener.h"
#include "server/cost_api.h"
#include "server/dashboard_files.h"
#include "server/history_api.h"
#include "server/kubelet_endpoint.h"
#include "server/node_heartbeat.h"
#include "server/node_registration.h"
#include "server/random_secret.h"
#include "server/rest_api.h"
#include "server/secure_api.h"
#include "store/sqlite_store.h"

namespace strata::server {
namespace {

std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

// "sim-node-0 (8x H100-80GB, rack-0)".
std::string DescribeNode(const api::Node& node) {
  std::map<std::string, int> models;
  for (const api::NodeGpu& gpu : node.status.gpus) ++models[gpu.model];
  std::string text = node.metadata.name + " (";
  for (const auto& [model, count] : models) text += std::to_string(count) + "x " + model + ", ";
  if (models.empty()) text += "no GPU, ";
  auto rack = node.metadata.labels.find(api::kRackLabel);
  text += rack == node.metadata.labels.end() ? "no rack" : rack->second;
  return text + ")";
}

// Runs one step on a thread every interval until stopped, and sooner when the cache says an
// object of one of the `wake_on` kinds changed (no sooner than kMinWakeGap after the last step,
// so that a burst of writes, or the step's own writes, cost one extra step, not one each).
class PeriodicLoop {
 public:
  static constexpr Duration kMinWakeGap = std::chrono::milliseconds(10);

  PeriodicLoop(std::string name, Duration interval, ControlStep step, cluster::Cache& cache,
               std::vector<std::string> wake_on)
      : name_(std::move(name)),
        interval_(interval),
        step_(std::move(step)),
        cache_(cache),
        wake_kinds_(wake_on.begin(), wake_on.end()) {
    thread_ = std::thread([this] { Run(); });
  }
  ~PeriodicLoop() { Stop(); }

  // Asks the loop to stop; the cache's Interrupt ends a wait for a change.
  void RequestStop() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
  }

  void Stop() {
    RequestStop();
    if (thread_.joinable()) thread_.join();
  }

 private:
  bool Stopping() {
    std::lock_guard<std::mutex> lock(mutex_);
    return stopping_;
  }

  void Run() {
    uint64_t seen = cache_.Notifications(wake_kinds_);
    while (!Stopping()) {
      Status status = step_();
      if (!status.ok()) spdlog::warn("{}: {}", name_, status.ToString());
      {
        std::unique_lock<std::mutex> lock(mutex_);
        if (wake_.wait_for(lock, kMinWakeGap, [this] { return stopping_; })) break;
      }
      const auto deadline = std::chrono::steady_clock::now() + (interval_ - kMinWakeGap);
      seen = cache_.WaitForNotification(wake_kinds_, seen, deadline);
    }
  }

  const std::string name_;
  const Duration interval_;
  const ControlStep step_;
  cluster::Cache& cache_;
  const std::set<std::string> wake_kinds_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace

struct ControlPlane::Impl {
  // The Kubernetes API client of a store on Kubernetes (null otherwise); outlives the store.
  std::unique_ptr<kube::Client> kube_client;
  // The campaign for the Lease (null without leader election) on its own thread.
  std::unique_ptr<kube::LeaderElector> elector;
  std::thread campaign;
  std::atomic<bool> leading{true};
  std::atomic<bool> lost_leadership{false};
  std::unique_ptr<store::Store> store;
  // The kubelet endpoint of the plane's nodes on Kubernetes (null otherwise); reads the store.
  std::unique_ptr<kube::KubeletServer> kubelet;
  // The store, decoded once for every loop and reader. Declared after the store, which it
  // watches.
  std::unique_ptr<cluster::Cache> cache;
  // Its Nodes, Pods and Queues as the GPU and cost readers want them (/metrics, cost, idle
  // reclaim).
  std::shared_ptr<observe::ClusterObjectsCache> cluster_objects;
  // What the pods cost, kept as they run in the data dir (read by /metrics and the cost API).
  std::shared_ptr<observe::CostLedger> cost_ledger;
  // What the dashboard plots, for hours (history_api.h).
  std::shared_ptr<history::SeriesStore> history;
  metrics::Registry registry;
  // The node Leases agents renew on an embedded plane (null on Kubernetes, where they are Lease
  // objects); read by the node controller.
  std::unique_ptr<controller::NodeLeases> node_leases;
  std::unique_ptr<RestApi> api;
  std::unique_ptr<ApiListener> listener;
  std::unique_ptr<ApiListener> secure_listener;  // the API over HTTPS; null when off
  std::string secure_url;
  std::vector<std::unique_ptr<PeriodicLoop>> loops;
  std::vector<std::string> node_names;
  observe::GpuReadingSource gpu_readings;
  bool simulated = false;
  bool stopped = false;
  std::string admin_token;
  std::string admin_token_file;
};

Result<std::pair<std::string, int>> ParseListenAddress(std::string_view text) {
  auto bad = [&](std::string_view why) {
    return Err(InvalidArgumentError("--listen \"" + std::string(text) + "\": " + std::string(why)));
  };
  size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) return bad("expected HOST:PORT");
  std::string host(text.substr(0, colon));
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host.empty()) host = "0.0.0.0";
  std::string_view port_text = text.substr(colon + 1);
  int port = -1;
  auto [end, error] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (error != std::errc() || end != port_text.data() + port_text.size() || port < 0 ||
      port > 65535) {
    return bad("the port must be a number from 0 to 65535");
  }
  return std::make_pair(host, port);
}

bool IsLoopbackHost(std::string_view host) {
  return host == "::1" || host == "localhost" || host.substr(0, 4) == "127.";
}

ControlPlane::ControlPlane(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

ControlPlane::~ControlPlane() { Stop(); }

namespace {

// Opens the store `options` names (and the Kubernetes client it runs on, if any, into
// `kube_client`), and says which on `out`.
Result<std::unique_ptr<store::Store>> OpenStore(const ControlPlaneOptions& options,
                                                std::unique_ptr<kube::Client>& kube_client,
                                                std::ostream& out) {
  if (options.store == "sqlite") {
    ASSIGN_OR_RETURN(std::unique_ptr<store::Store> opened,
                     store::OpenSqliteStore(options.data_dir, store::StoreOptions{}));
    out << "strata: store " << options.data_dir << "/" << store::kSqliteStoreFileName
        << " at resourceVersion " << opened->CurrentVersion() << "\n";
    return opened;
  }
  if (options.store != "kubernetes") {
    return Err(
        InvalidArgumentError("--store \"" + options.store + "\": expected sqlite or kubernetes"));
  }
  kube::ClientOptions client_options;
  client_options.qps = options.kube_api_qps;
  client_options.burst = options.kube_api_burst;
  client_options.user_agent = "strata-control-plane/" + options.version;
  ASSIGN_OR_RETURN(kube_client, kube::Client::FromKubeconfig(options.kubeconfig, client_options));
  auto opened = std::make_unique<kubestore::KubeStore>(*kube_client);
  // A first read, so that an unreachable server or missing CRDs fail here, by name.
  Result<store::ListResult> jobs = opened->List({"Job", std::nullopt, {}});
  if (!jobs) {
    return Err(Status(jobs.error().code(),
                      "the store on " + kube_client->server() + ": " + jobs.error().message() +
                          (jobs.error().code() == StatusCode::kNotFound
                               ? " (are strata's CRDs installed? strata kubernetes manifests | "
                                 "kubectl apply -f -)"
                               : "")));
  }
  out << "strata: store on the Kubernetes API at " << kube_client->server()
      << " at resourceVersion " << jobs->resource_version << "\n";
  return std::unique_ptr<store::Store>(std::move(opened));
}

// OK for `host` on loopback; FailedPrecondition saying that `what` ("listening on 0.0.0.0")
// needs --token-file otherwise: the admin credential alone is for this machine's users.
Status LoopbackWithoutTokens(const std::string& what, const std::string& host) {
  if (IsLoopbackHost(host)) return Status::Ok();
  return FailedPreconditionError(what +
                                 " exposes the API beyond this machine; give --token-file with "
                                 "the bearer tokens clients must present, or listen on 127.0.0.1");
}

// The API over HTTPS on options.secure_listen, with a new self-signed certificate, and the
// admin's kubeconfig for it in the data dir (secure_api.h).
// Sets *url to its address ("https://127.0.0.1:PORT").
Result<std::unique_ptr<ApiListener>> StartSecureListener(const ControlPlaneOptions& options,
                                                         ApiListenerOptions listener_options,
                                                         ApiHandler handler,
                                                         const std::string& admin_token,
                                                         std::string* url, std::ostream& out) {
  ASSIGN_OR_RETURN(auto address, ParseListenAddress(options.secure_listen));
  if (options.token_file.empty()) {
    RETURN_IF_ERROR(LoopbackWithoutTokens("--secure-listen on " + address.first, address.first));
  }
  const std::string host = ReachableHost(address.first);
  ASSIGN_OR_RETURN(auto certificate, net::SelfSignedCertificate(host));
  listener_options.host = address.first;
  listener_options.port = address.second;
  listener_options.tls_certificate_pem = certificate.first;
  listener_options.tls_key_pem = certificate.second;
  auto listener = std::make_unique<ApiListener>(listener_options, std::move(handler));
  RETURN_IF_ERROR(listener->Start());
  const std::string shown = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  *url = "https://" + shown + ":" + std::to_string(listener->port());
  ASSIGN_OR_RETURN(std::string certificate_file,
                   WriteApiCertificate(options.data_dir, certificate.first));
  out << "strata: API over TLS listening on " << *url << " (certificate " << certificate_file
      << ")";
  if (!admin_token.empty()) {
    ASSIGN_OR_RETURN(std::string kubeconfig,
                     WriteAdminKubeconfig(options.data_dir, *url, certificate_file, admin_token));
    out << "; kubectl --kubeconfig " << kubeconfig;
  }
  out << std::endl;
  return listener;
}

}  // namespace

Result<std::unique_ptr<ControlPlane>> ControlPlane::Start(const ControlPlaneOptions& options,
                                                          std::ostream& out) {
  ASSIGN_OR_RETURN(auto address, ParseListenAddress(options.listen));
  auto [host, port] = address;
  std::vector<AccessToken> tokens;
  if (!options.token_file.empty()) {
    ASSIGN_OR_RETURN(tokens, ReadAccessTokenFile(options.token_file, "--token-file"));
  } else {
    RETURN_IF_ERROR(LoopbackWithoutTokens("listening on " + host, host));
  }

  if (options.history.step <= Duration::zero() ||
      options.history.window / options.history.step > 100000) {
    return Err(InvalidArgumentError(
        "--history-hours over --history-step: at most 100,000 samples per series are kept"));
  }
  observe::PriceTable prices = observe::DefaultPriceTable();
  if (!options.price_table_file.empty()) {
    ASSIGN_OR_RETURN(prices, observe::ReadPriceTableFile(options.price_table_file));
  }

  // The inventory first: a bad --simulate fails before anything is opened.
  std::unique_ptr<node::GpuInventory> inventory;
  std::vector<node::NodeGpus> found;
  bool simulated = true;
  if (!options.local_nodes) {
    out << "strata: no nodes of its own (--no-nodes): nodes join with strata agent\n";
  } else if (!options.simulate.empty()) {
    ASSIGN_OR_RETURN(node::SimulateSpec spec, node::ParseSimulateSpec(options.simulate));
    inventory = std::make_unique<node::SimulatedInventory>(spec);
    ASSIGN_OR_RETURN(found, inventory->Discover());
    out << "strata: using the " << inventory->Describe() << " inventory (--simulate)\n";
  } else {
    ASSIGN_OR_RETURN(
        node::LocalInventory local,
        node::OpenLocalInventory(options.nvml_library, HostName(), node::kDefaultSimulateSpec));
    simulated = dynamic_cast<node::SimulatedInventory*>(local.inventory.get()) != nullptr;
    inventory = std::move(local.inventory);
    found = std::move(local.nodes);
    out << "strata: " << local.notice << "\n";
  }

  auto impl = std::make_unique<Impl>();
  ASSIGN_OR_RETURN(impl->store, OpenStore(options, impl->kube_client, out));
  // The store (node credentials, tenants' keys), the admin credential and the kubeconfig are
  // their owner's only; others may pass through the data dir (pods that run as another user
  // work in their directories under it) but not list it.
  namespace fs = std::filesystem;
  std::error_code made;  // a Kubernetes store makes no data dir; a failure is the next write's
  fs::create_directories(options.data_dir, made);
  fs::permissions(options.data_dir,
                  fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec, made);
  for (const char* suffix : {"", "-wal", "-shm", ".lock"}) {
    const fs::path file =
        fs::path(options.data_dir) / (store::kSqliteStoreFileName + std::string(suffix));
    if (fs::exists(file, made)) {
      fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write, made);
    }
  }

  std::vector<api::Node> nodes =
      NodesFromInventory(found, simulated ? SimulatedNodeCapacity() : HostCapacity(), simulated,
                         RealClock::Instance().Now());
  if (simulated) {
    // Every simulated node is this machine: workers meet at loopback.
    for (api::Node& each : nodes)
      each.metadata.annotations[api::kNodeAddressAnnotation] = "127.0.0.1";
  }
  if (impl->kube_client != nullptr && !nodes.empty()) {
    // This plane's agent runs strata's pods only (its store reads no other's): kube-scheduler
    // and the like are kept from binding anyone else's pod here, where it would never start.
    for (api::Node& each : nodes)
      each.spec.taints.push_back({api::kStrataPodsOnlyTaint, "", "NoSchedule"});
    KubeletEndpointOptions kubelet;
    kubelet.listen = options.kubelet_listen;
    kubelet.client_ca_file = options.kubelet_client_ca_file;
    kubelet.pods_dir = options.data_dir + "/pods";
    ASSIGN_OR_RETURN(impl->kubelet,
                     StartNodesKubelet(*impl->store, *impl->kube_client, kubelet, nodes, out));
  }
  RETURN_IF_ERROR(RegisterNodes(*impl->store, nodes));
  if (!simulated) {
    // Real GPUs: their live figures (utilisation, memory, power, ...) come from NVML at each read.
    Result<std::unique_ptr<node::NvmlGpuMonitor>> opened =
        node::NvmlGpuMonitor::Open(options.nvml_library);
    if (opened) {
      std::shared_ptr<node::NvmlGpuMonitor> monitor = std::move(*opened);
      auto mutex = std::make_shared<std::mutex>();
      impl->gpu_readings = [monitor, mutex] {
        std::lock_guard lock(*mutex);
        Result<observe::GpuReadingsByUuid> read = monitor->Read();
        if (!read) spdlog::warn("reading the GPUs through NVML: {}", read.error().message());
        return read ? std::move(*read) : observe::GpuReadingsByUuid{};
      };
    } else {
      out << "strata: GPU readings unavailable (" << opened.error().message() << ")\n";
    }
  }
  out << "strata: registered " << nodes.size() << " node(s):";
  for (const api::Node& node : nodes) out << " " << DescribeNode(node);
  out << "\n";

  RestApiOptions api_options;
  if (tokens.empty()) {
    const std::string path = options.data_dir + "/" + kAdminTokenFileName;
    ASSIGN_OR_RETURN(AccessToken admin, ReadOrCreateAdminToken(path, out));
    impl->admin_token = admin.token;
    impl->admin_token_file = path;
    out << "strata: the admin credential is in " << path << " (readable by you only)\n";
    tokens.push_back(std::move(admin));
    api_options.credential_hint = "the admin credential is in " + path;
  }
  api_options.tokens = std::move(tokens);
  if (!options.join_token_file.empty()) {
    ASSIGN_OR_RETURN(api_options.join_tokens, ReadOrCreateJoinTokens(options.join_token_file, out));
  }
  // The node runtime of `strata up` keeps pods' logs under the data dir.
  api_options.pod_logs_dir = options.data_dir + "/pods";
  api_options.version = options.version;
  if (impl->kube_client == nullptr) {
    impl->node_leases = std::make_unique<controller::NodeLeases>(RealClock::Instance().Now());
    api_options.node_leases = impl->node_leases.get();
  }
  impl->cache = std::make_unique<cluster::Cache>(*impl->store, cluster::ControlPlaneCacheOptions());
  // Lists every kind now and starts their watches, so a loop is woken by the first change.
  RETURN_IF_ERROR(impl->cache->Sync());
  impl->api =
      std::make_unique<RestApi>(*impl->store, *impl->cache, impl->registry, std::move(api_options));
  ApiListenerOptions listener_options;
  listener_options.host = host;
  listener_options.port = port;
  listener_options.max_body_bytes = options.max_body_bytes;
  impl->cluster_objects = std::make_shared<observe::ClusterObjectsCache>(*impl->cache);
  ASSIGN_OR_RETURN(impl->cost_ledger,
                   observe::CostLedger::Open(options.data_dir + "/" + observe::kCostLedgerFileName,
                                             prices, RealClock::Instance().Now()));
  // Reconciled with the pods that exist before the API serves (after a crash: open records of
  // pods now gone closed, pods bound meanwhile recorded), so a first read is whole.
  ASSIGN_OR_RETURN(std::shared_ptr<const observe::ClusterObjects> cluster_now,
                   impl->cluster_objects->Get());
  RETURN_IF_ERROR(
      impl->cost_ledger->Sync(observe::CostPodsOf(*cluster_now), RealClock::Instance().Now()));
  // /metrics also carries every GPU under the DCGM exporter's names and the cost series.
  observe::ClusterMetricsOptions metrics_options;
  metrics_options.ledger = impl->cost_ledger;
  metrics_options.prices = prices;
  metrics_options.measured_gpus = impl->gpu_readings;
  if (options.service_tokens) {
    metrics_options.service_tokens = [tokens = options.service_tokens,
                                      window = metrics_options.cost_window] {
      TimePoint now = RealClock::Instance().Now();
      return tokens(now - window, now);
    };
  }
  observe::AddClusterMetrics(impl->registry, impl->cluster_objects, std::move(metrics_options));
  RestApi* api = impl->api.get();
  CostApiOptions cost_options;
  cost_options.currency = prices.currency;
  cost_options.service_tokens = options.service_tokens;
  auto cost = std::make_shared<CostApi>(impl->cost_ledger, std::move(cost_options));
  auto dashboard = std::make_shared<DashboardFiles>();
  impl->history = std::make_shared<history::SeriesStore>(options.history);
  auto history = std::make_shared<HistoryApi>(impl->history);
  // The dashboard's static files need no token (its data comes through the API); the cost
  // endpoint answers admins only (it spans every namespace), and everything else (401, 403
  // included) is the API's.
  ApiHandler handler = [api, cost, dashboard,
                        history](const net::HttpRequest& request) -> ApiReply {
    if (std::optional<ApiReply> page = dashboard->Handle(request)) return std::move(*page);
    Result<Caller> caller = api->Authenticate(request);
    // The history endpoint applies the users' token rules itself (history_api.h).
    if (caller && caller->kind == Caller::Kind::kUser) {
      if (std::optional<ApiReply> reply = history->Handle(request, *caller)) {
        return std::move(*reply);
      }
    }
    if (caller && caller->admin()) {
      if (std::optional<ApiReply> reply = cost->Handle(request)) return std::move(*reply);
    }
    return api->Handle(request);
  };
  impl->listener = std::make_unique<ApiListener>(listener_options, handler);
  RETURN_IF_ERROR(impl->listener->Start());
  if (options.secure_listen != "off") {
    ASSIGN_OR_RETURN(impl->secure_listener,
                     StartSecureListener(options, listener_options, handler, impl->admin_token,
                                         &impl->secure_url, out));
  }

  std::unique_ptr<ControlPlane> plane(new ControlPlane(std::move(impl)));
  std::vector<std::string>& names = plane->impl_->node_names;
  for (const api::Node& node : nodes) names.push_back(node.metadata.name);
  plane->impl_->simulated = simulated;
  kube::Client* kube_client = plane->impl_->kube_client.get();
  LeaseRenewal renew;
  if (kube_client != nullptr) {
    renew = KubernetesLeaseRenewal(*kube_client);
  } else {
    renew = [leases = plane->impl_->node_leases.get()](const std::string& name, TimePoint now) {
      leases->Renew(name, now);
      return Status::Ok();
    };
  }
  auto heartbeat =
      std::make_shared<NodeHeartbeat>(*plane->impl_->store, *plane->impl_->cache, std::move(renew));
  plane->AddLoop("node heartbeat", options.heartbeat_interval, [heartbeat, names] {
    return heartbeat->Beat(names, RealClock::Instance().Now());
  });
  // The ledger follows the pods once a second: a deleted pod's record closes within a second
  // of its deletion. Not woken by each Pod change: a pass reads every pod the cluster holds, so
  // at thousands of pods and a busy scheduler, waking per change would cost a core.
  plane->AddLoop(
      "cost ledger", std::chrono::seconds(1),
      [ledger = plane->impl_->cost_ledger, objects = plane->impl_->cluster_objects]() -> Status {
        Result<std::shared_ptr<const observe::ClusterObjects>> cluster = objects->Get();
        if (!cluster) return cluster.error();
        return ledger->Sync(observe::CostPodsOf(**cluster), RealClock::Instance().Now());
      });
  if (kube_client != nullptr && options.leader_elect) plane->Campaign(options, out);
  std::string shown_host = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  if (options.on_serving) options.on_serving(*plane);
  out << "strata: API listening on http://" << shown_host << ":" << plane->port() << std::endl;
  return plane;
}

void ControlPlane::Campaign(const ControlPlaneOptions& options, std::ostream& out) {
  kube::LeaderElectionConfig lease = options.election;
  lease.identity = kube::CandidateIdentity();
  out << "strata: controllers run on the holder of the lease " << lease.lease_namespace << "/"
      << lease.lease_name << "; campaigning as " << lease.identity << "\n";
  Impl* impl = impl_.get();
  impl->leading = false;
  impl->elector =
      std::make_unique<kube::LeaderElector>(impl->kube_client.get(), lease, &RealClock::Instance());
  impl->campaign = std::thread([impl, identity = lease.identity] {
    kube::LeaderCallbacks callbacks;
    callbacks.on_started_leading = [impl] {
      spdlog::info("control plane: leading; the controllers run here");
      impl->leading = true;
    };
    callbacks.on_stopped_leading = [impl] { impl->leading = false; };
    callbacks.on_new_leader = [identity](const std::string& leader) {
      if (leader != identity) spdlog::info("control plane: the leader is {}", leader);
    };
    Status ended = impl->elector->Run(callbacks);
    if (!ended.ok()) {
      spdlog::error("control plane: leadership lost ({}); stopping", ended.message());
      impl->lost_leadership = true;
    }
  });
}

void ControlPlane::AddLoop(std::string name, Duration interval, ControlStep step,
                           std::vector<std::string> wake_on) {
  impl_->loops.push_back(std::make_unique<PeriodicLoop>(std::move(name), interval, std::move(step),
                                                        *impl_->cache, std::move(wake_on)));
}

void ControlPlane::AddLeaderLoop(std::string name, Duration interval, ControlStep step,
                                 std::vector<std::string> wake_on) {
  AddLoop(
      std::move(name), interval,
      [impl = impl_.get(), step = std::move(step)]() -> Status {
        return impl->leading ? step() : Status::Ok();
      },
      std::move(wake_on));
}

bool ControlPlane::leading() const { return impl_->leading; }

bool ControlPlane::lost_leadership() const { return impl_->lost_leadership; }

store::Store& ControlPlane::store() { return *impl_->store; }

cluster::Cache& ControlPlane::cache() { return *impl_->cache; }

kube::Client* ControlPlane::kube_client() { return impl_->kube_client.get(); }
const controller::NodeLeases* ControlPlane::node_leases() const { return impl_->node_leases.get(); }

metrics::Registry& ControlPlane::registry() { return impl_->registry; }

int ControlPlane::port() const { return impl_->listener->port(); }

const std::string& ControlPlane::admin_token() const { return impl_->admin_token; }

const std::string& ControlPlane::admin_token_file() const { return impl_->admin_token_file; }

const std::string& ControlPlane::secure_url() const { return impl_->secure_url; }

const std::vector<std::string>& ControlPlane::node_names() const { return impl_->node_names; }

bool ControlPlane::simulated() const { return impl_->simulated; }

const observe::GpuReadingSource& ControlPlane::gpu_readings() const { return impl_->gpu_readings; }

std::shared_ptr<observe::ClusterObjectsCache> ControlPlane::cluster_objects() const {
  return impl_->cluster_objects;
}

std::shared_ptr<history::SeriesStore> ControlPlane::history() const { return impl_->history; }

std::shared_ptr<observe::CostLedger> ControlPlane::cost_ledger() const {
  return impl_->cost_ledger;
}

void ControlPlane::Stop() {
  if (impl_->stopped) return;
  impl_->stopped = true;
  for (auto& loop : impl_->loops) loop->RequestStop();
  impl_->cache->Interrupt();
  for (auto& loop : impl_->loops) loop->Stop();
  impl_->listener->Stop();
  if (impl_->secure_listener) impl_->secure_listener->Stop();
  if (impl_->kubelet) impl_->kubelet->Stop();
  // The controllers have stopped: the Lease is released, so that a standby need not wait.
  if (impl_->elector) impl_->elector->Stop();
  if (impl_->campaign.joinable()) impl_->campaign.join();
}

}  // namespace strata::server
