#pragma once

#include <map>
#include <string>
#include <vector>

#include "api/workload.h"

namespace strata::api {

// How the pods of a KubeRay RayCluster (or of a RayJob's cluster) start Ray: the `ray start`
// command KubeRay would give each group, and the one shell script that strata runs on every pod
// of the cluster's gang, which picks the pod's group by its rank (GROUP_RANK: 0 is the head, then
// each worker group's pods in turn). The head listens on the gang's rendezvous address
// (MASTER_ADDR:MASTER_PORT, unless rayStartParams names a port), so clusters sharing a node do
// not collide. Pure functions; thread-safe.

// One group of a Ray cluster: the head (pods 1) or a worker group.
struct RayGroup {
  int64_t pods = 1;
  std::map<std::string, std::string> start_params;  // rayStartParams, without address/head/block
  // The container's own: command and args (either may be empty), env and workingDir.
  ProcessTemplate process;
  ResourceRequest resources;  // the group's own request, which `ray start` advertises
};

// What the head runs once Ray is up, for a RayJob: the entrypoint, through bash, with RAY_ADDRESS
// set to the head; its exit status is the head pod's.
struct RayEntrypoint {
  std::string command;  // empty: a RayCluster, whose pods run until stopped
};

// `ray start` for `group` as KubeRay builds it: `--head` (the head) or `--address=<head>` (a
// worker), then every start parameter as `--key=value` in key order (a flag-only parameter
// such as `disable-usage-stats` given "true" as `--key`, "false" left out), --num-cpus,
// --num-gpus and --memory from the group's request unless the parameters give them, and
// `--block`. Words are quoted for bash where needed; the head's address and port are left to
// the shell: "$MASTER_ADDR:$MASTER_PORT".
std::string RayStartCommand(const RayGroup& group, bool head, const std::string& head_port);

// The port the head's GCS listens on, as a shell word: rayStartParams' port, else
// "$MASTER_PORT".
std::string RayHeadPort(const RayGroup& head);

// The bash script every pod of the cluster runs (as `/bin/bash -c <script>`). Each group's pods
// export the group's env (and RAY_ADDRESS, the head's address), change to its workingDir, and:
// - without `overwrite_command` (KubeRay's default): run the container's command and args, if
//   any, joined by spaces as KubeRay joins them, and then, if they succeeded, `ray start`;
// - with it (KubeRay's ray.io/overwrite-container-cmd annotation): run the container's command
//   as it is, with KUBERAY_GEN_RAY_START_CMD holding the `ray start` it replaces.
// Every worker then blocks in Ray (or in its own command), and so does a RayCluster's head. A
// RayJob's head (`entrypoint` given) runs that in the background instead, waits for its port,
// runs the entrypoint, stops its own Ray (SIGTERM) and exits with the entrypoint's status: the
// job that runs the script ends with its head (its success role).
// `groups[0]` is the head.
std::string RayPodScript(const std::vector<RayGroup>& groups, const RayEntrypoint& entrypoint,
                         bool overwrite_command);

// The word as bash reads it literally: unchanged when it holds only safe characters, else in
// single quotes.
std::string BashWord(const std::string& word);

}  // namespace strata::api
