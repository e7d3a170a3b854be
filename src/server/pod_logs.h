#pragma once

#include <map>
#include <string>

#include "api/resource_catalog.h"
#include "common/status.h"
#include "server/api_listener.h"
#include "store/store.h"

namespace strata::server {

// Kubernetes' pod log endpoint, GET /api/v1/namespaces/{ns}/pods/{name}/log, served from the
// files the node runtime writes on this machine: "<pods_dir>/<pod uid>/logs/<process>.log"
// (node::ProcessRuntime's layout). Query parameters, as kubectl sends them:
//   container=NAME  the process: "main" for a plain pod, "rank-N" for a training worker; may be
//                   left out when the pod has one process
//   follow=true     keep the response open and send what is appended, until the pod has ended
//                   and everything was sent (or the client goes away)
//   tailLines=N     start with the last N lines
//   previous=true   the log of the pod's previous instance: the newest other pod of the same
//                   namespace and name that ran here (node::kPodNameSuffix), as a restarted
//                   job group's or a replaced replica's pod is; never followed
// The body is text/plain. Pods of agents on other machines have their logs there: asking for
// them here is FailedPrecondition naming the node (logs are served only where the pod ran).
// A follow checks the file about once a second (the listener's idle read), and reopens it from
// the start when rotation made it shorter.
//
// Owned by the RestApi; `store` must outlive it. Thread-safe.
class PodLogs {
 public:
  // `pods_dir` empty: no pod runs on this machine, every request is FailedPrecondition.
  PodLogs(const store::Store& store, std::string pods_dir);

  // Answers a log request for the pod of `path` (REQUIRES: a Pod path with subresource "log").
  // Errors: NotFound for an unknown pod; InvalidArgument naming the parameter for a bad query
  // or a missing container of a pod with several processes (the choices listed);
  // FailedPrecondition when the pod has not started here yet, or ran on another machine.
  Result<ApiReply> Serve(const api::ResourcePath& path,
                         const std::map<std::string, std::string>& query);

 private:
  const store::Store& store_;
  const std::string pods_dir_;
};

}  // namespace strata::server
