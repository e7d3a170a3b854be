#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "api/env_source.h"
#include "common/quantity.h"

namespace strata::api {

// What one pod (one node's share of a job, one replica's share of a service) asks for.
// GPUs are counted in milli-GPUs so that whole and fractional requests share one quota:
// `gpu` "8" is eight whole GPUs, "500m" half of one GPU. `gpu_memory` is GPU memory per GPU;
// with gpu < 1 it bounds the share by memory, never overcommitted. `mig_profile` asks for one
// MIG instance of that profile instead ("1g.10gb").
struct ResourceRequest {
  Quantity cpu;
  Quantity memory;
  Quantity gpu;
  Quantity gpu_memory;
  std::string mig_profile;
  // What the pod's processes may use beyond what is reserved for them (Kubernetes' limits over
  // its requests), enforced where the node can; zero: the reservation itself.
  Quantity cpu_limit;
  Quantity memory_limit;

  // What is enforced: the limit when given, else the reservation.
  const Quantity& EnforcedCpu() const { return cpu_limit.IsZero() ? cpu : cpu_limit; }
  const Quantity& EnforcedMemory() const { return memory_limit.IsZero() ? memory : memory_limit; }

  bool operator==(const ResourceRequest&) const = default;
};

// Which GPUs a workload accepts: any of `models` (empty: any model) with at least `min_memory`.
struct GpuSelector {
  std::vector<std::string> models;
  Quantity min_memory;

  bool operator==(const GpuSelector&) const = default;
};

struct EnvVar {
  std::string name;
  std::string value;
  std::optional<EnvVarSource> value_from;  // set: `value` is empty and read from here

  bool operator==(const EnvVar&) const = default;
};

// Who a pod's processes run as: Kubernetes' securityContext fields. Unset fields leave the choice
// to the node, which runs pods as an unprivileged user when its agent runs as root; root only
// when the pod asks for it (runAsUser: 0, or runAsNonRoot: false without runAsUser) and the
// node allows root pods.
struct SecurityContext {
  std::optional<int64_t> run_as_user;
  std::optional<int64_t> run_as_group;
  std::optional<bool> run_as_non_root;

  // runAsNonRoot true with runAsUser 0: a context no process can satisfy.
  bool Contradictory() const { return run_as_non_root == true && run_as_user == 0; }

  bool operator==(const SecurityContext&) const = default;
};

struct HttpHeader {
  std::string name;
  std::string value;

  bool operator==(const HttpHeader&) const = default;
};

// How a probe checks a pod: an HTTP GET that must answer 200-399, a TCP connection that must
// open, or a command that must exit 0.
enum class ProbeAction { kHttpGet, kTcpSocket, kExec };

// A Kubernetes probe of a pod's processes, run by the node agent as the kubelet runs it
// (node/probe_state.h). Defaults are Kubernetes'.
struct Probe {
  ProbeAction action = ProbeAction::kHttpGet;
  // httpGet, tcpSocket: the port on the pod's machine; 0: the pod's own port (the one strata
  // gives a Service replica in $PORT).
  int64_t port = 0;
  std::string path = "/";  // httpGet
  // httpGet: HTTP or HTTPS; over HTTPS the server's certificate is not verified (the kubelet's
  // rule: the probe checks that the server answers, not who it is).
  std::string scheme = "HTTP";
  std::vector<HttpHeader> http_headers;  // httpGet
  std::vector<std::string> command;      // exec: run with the pod's environment, as its user
  int64_t initial_delay_seconds = 0;
  int64_t period_seconds = 10;
  int64_t timeout_seconds = 1;
  int64_t success_threshold = 1;
  int64_t failure_threshold = 3;
  // Liveness and startup probes: the grace between SIGTERM and SIGKILL when the probe kills the
  // pod; unset: the node's.
  std::optional<int64_t> termination_grace_period_seconds;

  bool operator==(const Probe&) const = default;
};

// The processes a pod runs. `image` is recorded for the Kubernetes mode; the embedded mode runs
// `command` + `args` directly on the host.
struct ProcessTemplate {
  std::string image;
  std::vector<std::string> command;
  std::vector<std::string> args;
  std::vector<EnvVar> env;
  std::string working_dir;
  SecurityContext security_context;
  // Checked by the node agent: the startup probe gates the others; readiness decides whether the
  // pod is Ready; a liveness (or startup) failure kills the pod, which is then restarted as
  // its workload restarts a failed pod.
  std::optional<Probe> liveness_probe;
  std::optional<Probe> readiness_probe;
  std::optional<Probe> startup_probe;
  std::vector<EnvFromSource> env_from;  // read before env, as Kubernetes does

  bool operator==(const ProcessTemplate&) const = default;
};

// A node taint tolerated by a workload (Kubernetes' semantics). `op` is Equal or Exists;
// an empty `effect` matches every effect.
struct Toleration {
  std::string key;
  std::string op = "Equal";
  std::string value;
  std::string effect;

  bool operator==(const Toleration&) const = default;
};

}  // namespace strata::api
