#pragma once

#include <functional>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "api/validation.h"
#include "cluster/cache.h"
#include "common/clock.h"
#include "common/status.h"
#include "controller/node_leases.h"
#include "history/series_store.h"
#include "kube/client.h"
#include "kube/leader_election.h"
#include "metrics/metrics.h"
#include "observe/cluster_gpus.h"
#include "observe/cluster_objects_cache.h"
#include "server/cost_api.h"
#include "store/store.h"

namespace strata::server {

class ControlPlane;

struct ControlPlaneOptions {
  // Where the state lives: "sqlite" (the store in the data dir) or "kubernetes" (the API server
  // of `kubeconfig`: strata's kinds as custom resources, Pods, Nodes and Events as v1 objects;
  // see kubestore/kube_store.h). The data dir keeps the pods' files either way.
  std::string store = "sqlite";
  // With store "kubernetes": the kubeconfig ("": $KUBECONFIG, ~/.kube/config, then the pod's
  // service account), and the client's requests per second and burst.
  std::string kubeconfig;
  double kube_api_qps = 50;
  int kube_api_burst = 100;
  // With store "kubernetes": one plane of several acts at a time, through a
  // coordination.k8s.io/v1 Lease (client-go's election, kube/leader_election.h). The loops
  // added with AddLeaderLoop (the controllers) run on the holder only; every plane serves its
  // API and gateway and runs the agent and heartbeat of its own nodes.
  bool leader_elect = true;
  // The Lease and client-go's timings; the identity is made at start.
  kube::LeaderElectionConfig election = kube::ElectionFor("kube-system", "strata-control-plane");
  // With store "kubernetes": HOST:PORT of the kubelet endpoint the plane's nodes advertise
  // (status.addresses, daemonEndpoints), through which the API server reaches their pods' logs
  // (`kubectl logs`); port 0: any free one. It admits only client certificates that the CA of
  // `kubelet_client_ca_file` signed (empty: the CA the kubeconfig trusts for the API server),
  // and authorizes each caller with a SubjectAccessReview.
  std::string kubelet_listen = "127.0.0.1:0";
  std::string kubelet_client_ca_file;
  std::string data_dir = "strata-data";
  // HOST:PORT; port 0 lets the kernel pick one (the line printed at start names it).
  std::string listen = "127.0.0.1:7070";
  // The same API over HTTPS, for kubectl and client-go (which send credentials over TLS only),
  // with a self-signed certificate made at each start and a kubeconfig for the admin
  // credential written beside it (secure_api.h); "off": none.
  std::string secure_listen = "127.0.0.1:0";
  // A `--simulate` spec ("4x8:H100-80GB,racks=2"); empty: NVML when present, else the default
  // simulated shape.
  std::string simulate;
  // False: no inventory and no node of its own (a control plane whose nodes all join with
  // `strata agent`).
  bool local_nodes = true;
  std::string nvml_library = "libnvidia-ml.so.1";
  // The users' bearer tokens, one per line, each cluster-wide or scoped to namespaces (the
  // format of ReadAccessTokenFile). Required when `listen` is not a loopback address. Empty:
  // the admin credential in `data_dir`/admin-token, made at the first start
  // (ReadOrCreateAdminToken), is the one token.
  std::string token_file;
  // Join tokens with which node agents on other machines register (strata agent), one per
  // line; empty: joining is off.
  std::string join_token_file;
  // Prices per GPU model per hour, CPU core-hour and memory GiB-hour (YAML or JSON, see
  // observe::ParsePriceTable); empty: observe::DefaultPriceTable().
  std::string price_table_file;
  // Tokens each service served in [from, to] (the gateway's counts), for cost per million
  // tokens; empty: unknown. Called from the API's threads.
  ServiceTokens service_tokens;
  // Called with the plane once it serves, before it says where it listens (so that a client
  // that waits for that line finds what this did): `strata up` records the admin credential
  // for the CLI. Unset: nothing.
  std::function<void(const ControlPlane&)> on_serving;
  std::string version = "0.0.0";
  // How long the history the dashboard's pages open with is kept, and at which step
  // (history_api.h; the history recorder of StartControlLoops fills it).
  history::SeriesStoreOptions history;
  Duration heartbeat_interval = std::chrono::seconds(10);
  size_t max_body_bytes = api::kMaxRequestBytes;  // a request body, as kube-apiserver's limit
};

// A step of a control loop, run on the loop's own thread: a controller's reconcile pass.
using ControlStep = std::function<Status()>;

// `strata up`: the SQLite store in the data dir, the GPU inventory registered as Node objects
// (NVML, or a simulated shape when there is no GPU: its nodes are all this machine, reached at
// 127.0.0.1), the REST API on its listener, the cost ledger in the data dir
// (observe/cost_ledger.h: reconciled with the pods before the API serves, then kept up to date
// once a second; the cost endpoint and /metrics read it), and the control loops (node
// heartbeats, the ledger's, and the steps added with AddLoop), each on one thread.
//
// Owned by the `strata up` command. Start, AddLoop and Stop are called from one thread; the
// store is thread-safe and shared by everything here.
class ControlPlane {
 public:
  ~ControlPlane();  // Stop()
  ControlPlane(const ControlPlane&) = delete;
  ControlPlane& operator=(const ControlPlane&) = delete;

  // Opens the store, registers the inventory, starts the API and the heartbeat loop, and
  // writes to `out` one line each for the store, the inventory (saying so when NVML is absent),
  // the nodes registered and, last, "strata: API listening on http://HOST:PORT".
  // Errors: InvalidArgument for a bad --listen or --simulate; FailedPrecondition when listening
  // off loopback without a token file, or when the data dir is in use; Unavailable when the
  // address cannot be bound. Nothing keeps running after an error.
  static Result<std::unique_ptr<ControlPlane>> Start(const ControlPlaneOptions& options,
                                                     std::ostream& out);

  // Runs `step` every `interval` on a thread of its own until Stop, and sooner (within
  // milliseconds) after a change to an object of a kind in `wake_on` (the cache's notice); a
  // failing step is logged and run again at the next interval. REQUIRES: not stopped;
  // `interval` above 10 ms.
  void AddLoop(std::string name, Duration interval, ControlStep step,
               std::vector<std::string> wake_on = {});
  // As AddLoop, but the step runs only while leading(): a controller that writes what only one
  // plane may decide.
  void AddLeaderLoop(std::string name, Duration interval, ControlStep step,
                     std::vector<std::string> wake_on = {});

  // Whether this plane's controllers act: always on SQLite (the data dir's lock admits one
  // plane) and without leader election; otherwise while this plane holds the Lease.
  // Thread-safe.
  bool leading() const;
  // Leadership was held and then lost (another plane took the Lease, or it went unrenewed for
  // the renew deadline). The controllers have stopped acting; the owner is to Stop the plane
  // and exit, as kube-controller-manager does, and start afresh. Thread-safe.
  bool lost_leadership() const;

  store::Store& store();
  // The client of the Kubernetes API the store is on; null on SQLite. Thread-safe.
  kube::Client* kube_client();
  // The node Leases the REST API renews, for the node controller; null on Kubernetes (Lease
  // objects there). Thread-safe.
  const controller::NodeLeases* node_leases() const;
  // The one watch-fed cache of the store that every loop here reads (every kind the loops
  // read, with cluster::ControlPlaneCacheOptions' indexes). Thread-safe.
  cluster::Cache& cache();
  // The metrics /metrics serves; loops started by the owner register theirs here.
  metrics::Registry& registry();
  int port() const;
  // The admin credential made or read in the data dir (ControlPlaneOptions::token_file), for
  // the CLI on this machine; empty when the tokens came from --token-file.
  const std::string& admin_token() const;
  // Where that credential is kept; empty with it.
  const std::string& admin_token_file() const;
  // The HTTPS address of the API ("https://127.0.0.1:PORT"); empty when secure_listen is off.
  const std::string& secure_url() const;
  // The names of the Node objects registered for this machine's inventory.
  const std::vector<std::string>& node_names() const;
  // Whether those nodes are a simulated inventory (no NVML): their engines can only be
  // simulated ones.
  bool simulated() const;
  // The real GPUs' live readings by UUID (NVML); empty when the GPUs are simulated or NVML's
  // figures cannot be read. Thread-safe.
  const observe::GpuReadingSource& gpu_readings() const;
  // The cache's Nodes, Pods and Queues as the GPU and cost readers want them, shared by every
  // reader of the whole cluster (set by Start). Thread-safe.
  std::shared_ptr<observe::ClusterObjectsCache> cluster_objects() const;
  // The history the /history endpoint serves, for a recorder to fill. Thread-safe.
  std::shared_ptr<history::SeriesStore> history() const;
  // The durable cost ledger in the data dir (null on a plane that keeps none).
  std::shared_ptr<observe::CostLedger> cost_ledger() const;

  // Stops the loops, then the API, gives the Lease up if held, then closes the store.
  // Idempotent.
  void Stop();

 private:
  struct Impl;
  explicit ControlPlane(std::unique_ptr<Impl> impl);
  // Starts the campaign for options' Lease; the plane stands by (leading() false) until held.
  void Campaign(const ControlPlaneOptions& options, std::ostream& out);
  std::unique_ptr<Impl> impl_;
};

// Splits "HOST:PORT" ("127.0.0.1:7070", "[::1]:7070", ":7070" for every address). Returns
// InvalidArgument naming the flag's value when it is malformed.
Result<std::pair<std::string, int>> ParseListenAddress(std::string_view text);

// Whether `host` is a loopback address (127.0.0.0/8, ::1).
bool IsLoopbackHost(std::string_view host);

}  // namespace strata::server
