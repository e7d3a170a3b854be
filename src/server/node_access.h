#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "api/resource_catalog.h"
#include "common/status.h"
#include "store/store.h"

namespace strata::server {

// The store kind holding node credentials. It is not served by the REST API.
inline constexpr char kNodeCredentialKind[] = "NodeCredential";

// How node agents on other machines join and what they may do afterwards.
//
// Joining: an agent POSTs its Node manifest (the GPU inventory it found) to kJoinPath with a
// join token (`strata up --join-token-file`) as its bearer token. The node is registered
// (created, or its status and labels updated) and a node credential is issued in the same store
// batch: a random bearer token bound to the node's name, kept in the store so that a restarted
// control plane still accepts it. A join token admits a node name once, as a kubelet's bootstrap
// token gives way to its own certificate: while the node exists with a credential, joining it
// again takes that node's own credential (an agent that restarts: the credential is kept, and
// the node's registration updated) or an admin's token (a new credential replaces the old one).
// After an admin deleted the node, the join token admits the name again. A name the control
// plane registered itself (its own inventory) cannot be joined.
//
// A node credential allows only what an agent needs: reading its own Node (get, or list/watch
// with fieldSelector metadata.name=NODE), writing that Node's status (unless it names a GPU UUID
// another Node reports: AlreadyExists), reading and renewing its
// Lease (api/node_lease.h: heartbeats), reading the
// pods bound to it (list/watch with fieldSelector spec.nodeName=NODE, get, logs), writing their
// status, and replacing them with an unchanged spec (annotations such as the last checkpoint).
// Everything else is PermissionDenied (403) naming the node.
//
// Owned by the RestApi; `store` must outlive it. Thread-safe (the store is).
class NodeAccess {
 public:
  static constexpr std::string_view kJoinPath = "/apis/strata.dev/v1alpha1/join";

  // `join_tokens` empty: joining is off.
  NodeAccess(store::Store& store, std::vector<std::string> join_tokens);

  // Handles a join request presenting `token` (a join token, or the node's own credential) and
  // `body` (one Node, YAML or JSON); `admin`: the request carries an admin's token instead.
  // Returns the NodeCredential document {kind, apiVersion, nodeName, token}. Errors:
  // PermissionDenied when joining is off, or for a join token naming a node that has joined
  // already; Unauthenticated for a token that is none of those; InvalidArgument naming the field
  // for a body that is not one valid Node; AlreadyExists for a node the control plane registered
  // itself, or one whose GPUs name a UUID another Node reports (CheckGpuUuidsUnclaimed); the
  // store's error otherwise, with nothing written.
  Result<nlohmann::json> Join(std::string_view token, bool admin, std::string_view body);

  // Whether `token` has the shape of a node credential ("NODE.HEX").
  static bool LooksLikeNodeCredential(std::string_view token);

  // The node whose credential `token` is. Unauthenticated when it is no current credential.
  Result<std::string> NodeOf(std::string_view token) const;

  // OK when node `node` may send `method` to `path` with `query` and `body` (see the class
  // comment); PermissionDenied naming the node and the request otherwise, NotFound for a pod
  // that does not exist.
  Status Authorize(const std::string& node, std::string_view method, std::string_view path,
                   const std::map<std::string, std::string>& query, std::string_view body) const;

 private:
  Status AuthorizeResource(const std::string& node, std::string_view method,
                           const api::ResourcePath& path,
                           const std::map<std::string, std::string>& query,
                           std::string_view body) const;

  store::Store& store_;
  const std::vector<std::string> join_tokens_;
};

// Compares two secrets without stopping at the first difference, so response time says nothing
// about how much of a token was right.
bool SameSecret(std::string_view a, std::string_view b);

// The bearer token of an Authorization header value ("Bearer abc" -> "abc"); empty when the
// header holds none.
std::string_view BearerToken(std::string_view authorization);

// The value `field` has in a fieldSelector ("spec.nodeName=n1,metadata.name=p" gives "n1" for
// spec.nodeName); empty when the selector does not constrain it with '=' or '=='.
std::string FieldSelectorValue(std::string_view selector, std::string_view field);

}  // namespace strata::server
