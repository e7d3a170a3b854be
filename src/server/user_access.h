#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace strata::server {

// Who a request to the REST API acts as, from its bearer token (RestApi::Authenticate).
struct Caller {
  enum class Kind { kAnonymous, kUser, kNode };
  Kind kind = Kind::kAnonymous;
  std::string name;  // the user's (AccessToken::user) or the node's
  // A user's namespaces; empty: every namespace and every cluster-scoped object (an admin).
  std::vector<std::string> namespaces;

  bool admin() const { return kind == Kind::kUser && namespaces.empty(); }
};

// Whether `path` is a discovery document or /version: /api, /apis, /api/v1, /apis/strata.dev,
// /apis/strata.dev/v1alpha1.
bool IsDiscoveryPath(std::string_view path);

// Whether a request without a token may send `method` to `path`: the discovery documents,
// /version and the OpenAPI documents, which kube-apiserver also serves to anyone
// (system:public-info-viewer). Health paths and joining are handled before authentication.
bool IsPublicPath(std::string_view method, std::string_view path);

// OK when user `caller` may send `method` to `path`. An admin may send anything. A user scoped
// to namespaces may read and write the namespaced objects of those namespaces (their pods' logs,
// evictions and checkpoints too), and read nodes, queues and resource flavors; it may not list
// or watch a kind across every namespace, read tenants (they hold API keys), write a
// cluster-scoped object, read /metrics (every namespace's series) or a node's Lease. The apply
// endpoint is allowed here: each object of its body is checked with AuthorizeUserObject before
// any is written. Paths that name no served resource are allowed here and refused by the API's
// router. PermissionDenied naming the user, its namespaces and what is outside them otherwise.
// REQUIRES: caller.kind == kUser.
Status AuthorizeUser(const Caller& caller, std::string_view method, std::string_view path);

// OK when user `caller` may write an object of store kind `kind` in `namespace_name` (empty for
// a cluster-scoped kind); PermissionDenied as AuthorizeUser otherwise. REQUIRES: caller.kind ==
// kUser.
Status AuthorizeUserObject(const Caller& caller, std::string_view kind,
                           std::string_view namespace_name);

}  // namespace strata::server
