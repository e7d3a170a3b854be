#pragma once

#include <string>
#include <vector>

namespace strata::node {

// The pod supervisor: a small process per pod, between the process runtime and the pod's
// workers, in the role of containerd's shim or conmon. The runtime starts it in a session of
// its own (which is also the pod's process group); it starts the workers (pod_supervisor_protocol.h
// says how they agree on what), waits for them, and records each one's exit status durably
// (pod_exit_record.h) before it exits. It outlives the node agent: after the agent is killed,
// workers that end still have their true exit status recorded, and the restarted agent's runtime
// reads those records instead of guessing. It ignores SIGTERM, SIGINT and SIGHUP (a pod's stop
// signals its whole process group, and the supervisor must stay to record how the workers
// ended); the runtime never sends it SIGKILL while a worker lives.
//
// Every program that links the process runtime is also the supervisor: the runtime runs
// /proc/self/exe with the environment SupervisorEnvironment gives, and a constructor in
// pod_supervisor.cc runs RunPodSupervisor before main() and exits (the supervisor is the same
// build as its runtime, with no second binary to install or find).

// The environment (NAME=value) that makes a program linking the runtime the supervisor of the
// pod whose directory is `pod_dir`.
std::vector<std::string> SupervisorEnvironment(const std::string& pod_dir);

// The supervisor's main: reads the spec from stdin, reports on stdout, waits for the commit,
// then supervises. Returns the supervisor's exit code. Single-threaded callers only (it forks).
int RunPodSupervisor(const std::string& pod_dir);

}  // namespace strata::node
