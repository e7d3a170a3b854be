#pragma once

#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

#include "api/resource_catalog.h"

namespace strata::api {

// strata's kinds as CustomResourceDefinitions (apiextensions.k8s.io/v1), for the Kubernetes
// mode: group strata.dev, version v1alpha1, the names and scope of AllResourceTypes(), the
// structural schema generated from each kind's TypeSchema tables (spec and status; metadata is
// the API server's), the status subresource where strata writes a status, printer columns,
// short names that no built-in kind uses, and the category "strata" (`kubectl get strata`).
// Pure; thread-safe.

// One column of `kubectl get`.
struct PrinterColumn {
  std::string_view name;
  std::string_view type;       // integer, number, string, boolean or date
  std::string_view json_path;  // ".spec.replicas"
  std::string_view description;
};

// What a kind adds on a Kubernetes cluster to what the catalog says of it.
struct CustomResourceNames {
  std::string_view kind;
  std::vector<std::string_view> short_names;  // never one of a built-in kind ("svc", "job")
  std::vector<PrinterColumn> columns;         // before the Age column every CRD gets
};

// The strata.dev kinds served as CRDs, in the catalog's order: Queue, ResourceFlavor, Job,
// Service, Tenant, WorkloadPriorityClass.
const std::vector<CustomResourceNames>& CustomResourceKinds();

// Whether the CRD of `kind`, a strata.dev kind of CustomResourceKinds(), has a status
// subresource: strata writes its status through /status, users its spec.
bool HasStatusSubresource(std::string_view kind);

// The CRD of `type`, a strata.dev kind of CustomResourceKinds().
nlohmann::json CustomResourceDefinition(const ResourceType& type, const CustomResourceNames& names);

// Every strata.dev kind's CRD, in CustomResourceKinds()' order.
std::vector<nlohmann::json> CustomResourceDefinitions();

// The CRDs of the compatible kinds strata reconciles itself on a cluster where their own
// operator is not installed (DESIGN.md, "Kubernetes mode"): kubeflow.org/v1 PyTorchJob, its
// spec's schema from the decoder's tables (what strata does not honour is refused by the API
// server, naming the field) and its status Kubeflow's JobStatus, through the status
// subresource. Labelled as strata's, as every CRD here is.
std::vector<nlohmann::json> CompatCustomResourceDefinitions();

// Whether a CustomResourceDefinition read from a cluster is one of strata's (its label
// app.kubernetes.io/part-of=strata): where it is not, another operator owns the kind.
bool IsStrataDefinition(const nlohmann::json& definition);

// The RBAC rules strata's control plane holds on its own kinds: every verb the store backend over
// the Kubernetes API uses (get, list, watch, create, update, patch, delete) on each kind, and
// get, update and patch on the status of those with one. Granted ahead of that backend (issue
// 22) so that an install does not change when it lands.
std::vector<nlohmann::json> ControlPlaneRules();

// ClusterRoles aggregated into Kubernetes' user-facing roles, so that whoever may edit or view
// a namespace's batch Jobs may do the same with strata's kinds there, and with the compatible
// kinds strata serves (kubeflow.org PyTorchJobs): strata-edit (into admin and edit) and
// strata-view (into view).
std::vector<nlohmann::json> AggregatedUserRoles();

}  // namespace strata::api
