#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

// Names of the API's collections and how they become request paths.

namespace strata::kube {

// A collection of the Kubernetes API: group ("" for the core group), version and resource (the
// lowercase plural of the URL). Whether it is namespaced is decided by the caller: an empty
// namespace in a request means a cluster-scoped resource, or all namespaces for a List/Watch.
// A plain value.
struct GroupVersionResource {
  std::string group;
  std::string version;
  std::string resource;

  // "pods" for the core group, "leases.coordination.k8s.io" otherwise, as kubectl writes it.
  std::string ToString() const;
  // The apiVersion of its objects: "v1", "coordination.k8s.io/v1".
  std::string ApiVersion() const;
  bool operator==(const GroupVersionResource&) const = default;
};

// The collections strata's Kubernetes mode uses.
namespace resources {
inline const GroupVersionResource kPods{"", "v1", "pods"};
inline const GroupVersionResource kNodes{"", "v1", "nodes"};
inline const GroupVersionResource kEvents{"", "v1", "events"};
inline const GroupVersionResource kNamespaces{"", "v1", "namespaces"};
inline const GroupVersionResource kServices{"", "v1", "services"};
inline const GroupVersionResource kServiceAccounts{"", "v1", "serviceaccounts"};
inline const GroupVersionResource kConfigMaps{"", "v1", "configmaps"};
inline const GroupVersionResource kSecrets{"", "v1", "secrets"};
inline const GroupVersionResource kLeases{"coordination.k8s.io", "v1", "leases"};
inline const GroupVersionResource kCustomResourceDefinitions{"apiextensions.k8s.io", "v1",
                                                             "customresourcedefinitions"};
inline const GroupVersionResource kSubjectAccessReviews{"authorization.k8s.io", "v1",
                                                        "subjectaccessreviews"};
}  // namespace resources

// Query parameters in order, unescaped; PathFor escapes them.
using QueryParameters = std::vector<std::pair<std::string, std::string>>;

// The request path of a collection, an object or an object's subresource:
//   /api/v1/namespaces/default/pods/p1/binding, /apis/coordination.k8s.io/v1/leases
// followed by "?k=v&..." when `query` is not empty. Path segments and query values are
// percent-escaped (RFC 3986 unreserved characters pass through).
std::string PathFor(const GroupVersionResource& resource, std::string_view namespace_name,
                    std::string_view name = "", std::string_view subresource = "",
                    const QueryParameters& query = {});

// Percent-escapes everything but RFC 3986's unreserved characters.
std::string EscapeComponent(std::string_view text);

}  // namespace strata::kube
