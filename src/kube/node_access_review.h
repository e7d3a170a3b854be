#pragma once

#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "kube/client.h"
#include "kube/kubelet_server.h"

namespace strata::kube {

// A kubelet's delegated authorization: whether a caller may get a node's subresource ("proxy"
// for container logs, "log", "stats", "metrics"), as the API server answers a
// SubjectAccessReview (authorization.k8s.io/v1) for the caller's user and groups. Answers are
// cached as the kubelet caches them: allowed for 5 minutes, denied for 30 seconds.
//
// Owned by the kubelet endpoint's host; the client must outlive it. Thread-safe.
class NodeAccessReviewer {
 public:
  NodeAccessReviewer(Client* client, const Clock* clock);

  // OK when allowed; PermissionDenied naming the user, verb and resource otherwise (with the
  // authorizer's reason); the review's own failure (Unavailable...) as it came.
  Status Review(const KubeletCaller& caller, const std::string& node_name,
                const std::string& subresource);

 private:
  using Key = std::tuple<std::string, std::vector<std::string>, std::string, std::string>;
  struct Answer {
    Status status;
    TimePoint until;
  };

  Client* const client_;
  const Clock* const clock_;
  std::mutex mutex_;
  std::map<Key, Answer> answers_;  // guarded by mutex_
};

}  // namespace strata::kube
