#include "server/user_access.h"

#include <algorithm>

#include "api/node_lease.h"
#include "api/resource_catalog.h"

namespace strata::server {
namespace {

std::string Scope(const Caller& caller) {
  std::string names;
  for (const std::string& name : caller.namespaces) names += (names.empty() ? "" : ",") + name;
  return "the token of user \"" + caller.name + "\" is scoped to namespace" +
         (caller.namespaces.size() == 1 ? " " : "s ") + names;
}

bool InScope(const Caller& caller, std::string_view namespace_name) {
  return std::find(caller.namespaces.begin(), caller.namespaces.end(), namespace_name) !=
         caller.namespaces.end();
}

Status Outside(const Caller& caller, const std::string& what) {
  return PermissionDeniedError(Scope(caller) + ": " + what + " is outside it");
}

}  // namespace

bool IsDiscoveryPath(std::string_view path) {
  std::vector<const api::ResourceType*> types = api::SourceServedTypes();
  for (const api::ResourceType* older : api::KueueV1beta1Types()) types.push_back(older);
  for (const api::ResourceType* type : types) {
    if (path == "/apis/" + std::string(type->group) || path == type->GroupVersionPath()) {
      return true;
    }
  }
  return path == "/api" || path == "/apis" || path == "/version" || path == "/api/v1" ||
         path == "/apis/strata.dev" || path == "/apis/strata.dev/v1alpha1" ||
         path == "/apis/events.k8s.io" || path == "/apis/events.k8s.io/v1";
}

bool IsPublicPath(std::string_view method, std::string_view path) {
  return method == "GET" &&
         (IsDiscoveryPath(path) || path == "/openapi/v3" || path.starts_with("/openapi/v3/"));
}

Status AuthorizeUser(const Caller& caller, std::string_view method, std::string_view path) {
  if (caller.admin() || IsPublicPath(method, path) || path == api::kApplyPath) {
    return Status::Ok();
  }
  if (path == "/metrics") return Outside(caller, "/metrics (the series of every namespace)");
  if (api::NodeOfLeasePath(path)) return Outside(caller, "a node's Lease");
  Result<api::ResourcePath> resource = api::ParseResourcePath(path);
  if (!resource) return Status::Ok();  // the router answers NotFound
  const api::ResourceType& type = *resource->type;
  if (!type.namespaced) {
    const bool read = method == "GET" && resource->subresource.empty();
    if (read && type.kind != "Tenant") return Status::Ok();
    return Outside(caller, std::string(read ? "reading " : "writing ") + std::string(type.plural) +
                               " (cluster-scoped)");
  }
  if (!resource->namespace_name) {
    return Outside(
        caller, std::string(type.plural) + " in every namespace (name a namespace: -n NAMESPACE)");
  }
  if (!InScope(caller, *resource->namespace_name)) {
    return Outside(caller, std::string(type.plural) + " in namespace " + *resource->namespace_name);
  }
  return Status::Ok();
}

Status AuthorizeUserObject(const Caller& caller, std::string_view kind,
                           std::string_view namespace_name) {
  if (caller.admin()) return Status::Ok();
  if (namespace_name.empty()) {
    return Outside(caller, "writing a " + std::string(kind) + " (cluster-scoped)");
  }
  if (!InScope(caller, namespace_name)) {
    return Outside(caller,
                   "a " + std::string(kind) + " in namespace " + std::string(namespace_name));
  }
  return Status::Ok();
}

}  // namespace strata::server
