#pragma once

#include <optional>
#include <string>

#include "api/torchrun_env.h"
#include "api/workload.h"
#include "node/node_runtime.h"
#include "node/probe_state.h"

// Running one attempt of a probe against a pod's processes on this machine, as the kubelet
// does: an HTTP GET, a TCP connect or a command. Free functions; thread-safe.
namespace strata::node {

// Where a pod's probes reach it, and how its exec probes run.
struct ProbeTarget {
  int own_port = 0;  // the pod's own port (a replica's engine port); 0: it has none
  // The IPv4 address the pod's ports are reached at: 127.0.0.1, or the pod's own IP where the
  // agent gives it one (NodeAgentOptions::pod_cidr), as the kubelet probes a pod at its IP.
  std::string host = "127.0.0.1";
  api::Environment env;                  // an exec probe's whole environment (the pod's)
  std::string working_dir;               // an exec probe's; empty: the agent's
  std::optional<PodSpec::RunAs> run_as;  // an exec probe's identity; unset: the agent's
};

// Runs one attempt of `probe` against the pod and returns how it went, within about the
// probe's timeoutSeconds (a command still running then is killed with its process group).
// Blocks the calling thread. Ports are reached at target.host (H below): the pod runs on this
// machine.
//  - httpGet passes on a status from 200 to 399; fails with "HTTP probe failed with
//    statuscode: N", or, when no answer comes, with `Get "http://H:P/path": <why>`;
//    over HTTPS, the server's certificate is not verified (the kubelet's rule);
//  - tcpSocket passes when the connection opens; fails with "dial tcp H:P: <why>";
//  - exec passes when the command exits 0; fails with its output (stdout and stderr, the first
//    10 KiB), or "command ... exited with code N" when it wrote nothing, or "command ... timed
//    out".
// A port of 0 is target.own_port; a probe of a pod with none fails, saying so.
ProbeResult RunProbe(const api::Probe& probe, const ProbeTarget& target);

}  // namespace strata::node
