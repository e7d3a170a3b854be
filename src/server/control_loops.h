#pragma once

#include <memory>
#include <ostream>
#include <string>

#include "common/clock.h"
#include "common/status.h"
#include "controller/training_pod.h"
#include "gateway/server.h"
#include "node/node_agent.h"
#include "node/process_runtime.h"
#include "server/control_plane.h"
#include "server/service_token_ledger.h"

namespace strata::server {

// What `strata up` runs besides the API: the control loops, the in-process node agent and the
// gateway.
struct ControlLoopsOptions {
  // The longest a loop waits between passes when nothing it reads changes (a change wakes it
  // within milliseconds).
  Duration interval = std::chrono::seconds(1);
  // The first rendezvous port handed to a training job on an address.
  int first_master_port = controller::kFirstMasterPort;
  // SIGTERM to SIGKILL for a stopped pod.
  int stop_grace_seconds = 10;
  // Whether pods that ask to run as root may (when strata runs as root); see PodIdentity.
  bool allow_root_pods = false;
  // The OpenAI-compatible gateway: HOST:PORT, or "off". When `gateway_listen_given` is false
  // and the port is taken, any free port.
  std::string gateway_listen = "127.0.0.1:8000";
  bool gateway_listen_given = false;
  // Tenants, limits and picker policy for the gateway (its models come from the Services).
  std::string gateway_config;
  // Engine-sim in place of real engines on simulated GPUs: its start-up delay (weights
  // loading) in seconds.
  double sim_startup_delay_seconds = 5;
  // How long a draining replica may keep streams open before it is stopped anyway.
  int drain_grace_seconds = 60;
  // How long each measurement of a pod's CPU use lasts, from which the busy share of its
  // simulated GPUs is derived.
  double gpu_activity_window_seconds = 30;
  // The path of the `strata` binary, run as engine-sim for replicas on simulated GPUs.
  std::string strata_path = "strata";
  // Whether to run a node agent for the plane's own nodes (a benchmark that holds pods without
  // running them turns it off).
  bool run_node_agent = true;
};

// Everything StartControlLoops started, to stop with the plane.
struct RunningLoops {
  std::shared_ptr<node::NodeAgent> agent;           // null without a node agent
  std::shared_ptr<node::ProcessRuntime> runtime;    // the agent's; null without one
  std::shared_ptr<gateway::GatewayServer> gateway;  // null when the gateway is off
  Duration stop_grace = std::chrono::seconds(10);   // a stopped pod's SIGTERM to SIGKILL
  std::string data_dir;                             // where the pods' files are
};

// Starts, on `plane`, each on a thread of its own reading the plane's cache: the scheduler
// adapter, the training job controller, the node controller, idle reclaim, one node agent that
// serves every registered node (a simulated multi-node inventory is thus one process running all
// of its nodes' pods as real processes, their state files, logs and checkpoints under
// `data_dir`), and, unless the gateway is off, the gateway with the serving loop that feeds it
// the Services' ready replicas and scales them (server/serving_loop.h). Each loop's lambda owns
// what it runs, so everything lives until plane.Stop(). The tokens each service served go to
// `tokens` when given (the plane's cost per million tokens reads it). Writes what it started to
// `out`. InvalidArgument for a bad gateway flag or config; Unavailable when the gateway cannot
// listen.
Result<RunningLoops> StartControlLoops(ControlPlane& plane, const std::string& data_dir,
                                       const ControlLoopsOptions& options,
                                       std::shared_ptr<ServiceTokenLedger> tokens,
                                       std::ostream& out);

// Stops what StartControlLoops started, after plane.Stop(): the gateway, and unless `keep_pods`
// the pods' processes.
void StopControlLoops(RunningLoops& loops, bool keep_pods);

// Stops the processes of every pod the runtime runs, all at once (SIGTERM, the stop grace, then
// SIGKILL), without the node agent: for a stop whose control loops did not end in time. Safe
// while those loops still run (the runtime is thread-safe); a pod the agent starts meanwhile is
// caught by a second sweep. Returns how many pods were stopped.
int StopPodsNow(const RunningLoops& loops);

}  // namespace strata::server
