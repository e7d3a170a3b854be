#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace strata::kube {

// The building blocks of `strata kubernetes manifests`: each of strata's components on a cluster
// is an identity (RbacGrant) and a workload (ComponentDeployment), labelled
// app.kubernetes.io/name=<component> and app.kubernetes.io/part-of=strata.

// The metadata of a component's object; cluster-scoped when `namespace_name` is empty.
nlohmann::json ComponentMetadata(const std::string& name, const std::string& namespace_name,
                                 const std::string& component);

// The Namespace strata's components run in, held to the "restricted" Pod Security Standard.
nlohmann::json RestrictedNamespace(const std::string& name);

// An identity of strata's on a cluster and what it may do: a ServiceAccount in the install's
// namespace, a ClusterRole of `cluster_rules` bound to it, and a Role with its RoleBinding in each
// namespace of `namespace_rules`.
struct RbacGrant {
  std::string name;  // the ClusterRole's, and app.kubernetes.io/name on every object
  std::string service_account;
  std::vector<nlohmann::json> cluster_rules;
  struct NamespaceRules {
    std::string role;  // the Role's (and its binding's) name
    std::string namespace_name;
    std::vector<nlohmann::json> rules;
  };
  std::vector<NamespaceRules> namespace_rules;
};

// The objects of `grant`, its ServiceAccount in `install_namespace`.
std::vector<nlohmann::json> GrantObjects(const std::string& install_namespace,
                                         const RbacGrant& grant);

// One of the component's container ports, and the Service port of the same name.
struct NamedPort {
  std::string name;  // an IANA_SVC_NAME: at most 15 lowercase letters, digits and '-'
  int port = 0;
};

// A volume mounted into the component's container: a Secret's keys when `secret` is set, else
// an empty directory (the root filesystem is read-only).
struct ComponentVolume {
  std::string name;
  std::string mount_path;
  std::string secret;
};

// A component run as `strata ARGS...`.
struct ComponentSpec {
  std::string name;  // the Deployment's and app.kubernetes.io/name
  std::string namespace_name;
  std::string image;  // REQUIRES: not empty
  std::string service_account;
  std::string container_name;
  std::vector<std::string> args;
  int replicas = 2;
  std::vector<NamedPort> ports;
  std::vector<ComponentVolume> volumes;
  std::string readiness_path;  // an HTTP GET on ports[0]; none when empty
  // The container's environment (v1 EnvVar objects), beyond none.
  std::vector<nlohmann::json> env;
  // ComponentDaemonSet only: the nodes it runs on (a v1 NodeAffinity's
  // requiredDuringSchedulingIgnoredDuringExecution) and the taints it tolerates.
  nlohmann::json node_selector_terms = nlohmann::json::array();
  std::vector<nlohmann::json> tolerations;
};

// The Deployment of `spec`: in-cluster credentials of its ServiceAccount; a non-root, read-only
// container without privilege escalation or capabilities, with resource requests (it passes
// the "restricted" Pod Security Standard); replicas spread over nodes where they can be.
nlohmann::json ComponentDeployment(const ComponentSpec& spec);

// The DaemonSet of `spec` (its replicas and spread unused): one pod per node that
// `node_selector_terms` admits, with the same container and pod security as a Deployment's.
nlohmann::json ComponentDaemonSet(const ComponentSpec& spec);

// A ClusterIP Service `name` in front of every ready replica of `spec`, on `port` (one of
// spec.ports).
nlohmann::json ComponentService(const ComponentSpec& spec, const std::string& name,
                                const NamedPort& port);

}  // namespace strata::kube
