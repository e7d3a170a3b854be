#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

namespace strata::api {

struct ResourceType;

// How the REST API serves native objects of the core group (Pod, Node, Event, under /api/v1):
// with apiVersion "v1", as Kubernetes clients expect of what /api/v1 returns (kubectl decodes a
// Node into its own v1 Node type before it cordons it), and otherwise in strata's form (a pod's
// spec.template, a node's status.gpus, to which a node adds its GPUs as Kubernetes' extended
// resources in status.capacity and status.allocatable). The store keeps them as
// strata.dev/v1alpha1; every other kind is served as stored. Pure; thread-safe.

// Who a response is for. Kubernetes' clients (kubectl, client-go, the Python client) get a Pod
// in Kubernetes' v1 shape (api/pod_v1_form.h); strata's own clients (the CLI, node agents, the
// dashboard), which read its placement (spec.assignedGpus, spec.owner...), ask for strata's form
// of it with a media-type parameter naming strata's group, as Kubernetes' clients ask for
// tables:
//   Accept: application/json;g=strata.dev;v=v1alpha1
// kEventsV1 is what /apis/events.k8s.io/v1 serves: an Event in that group's shape
// (api/events_v1_form.h), every other kind as for kKubernetes. kSource is what the paths of
// SourceServedTypes() serve (/apis/batch/v1 ...): a native object decoded from such a document,
// in that document's form (api/source_form.h).
enum class ServedForm { kKubernetes, kStrata, kEventsV1, kSource };
inline constexpr char kStrataFormAccept[] = "application/json;g=strata.dev;v=v1alpha1";

// The form an Accept header asks for: kStrata when one of its media ranges has g=strata.dev.
ServedForm ServedFormWanted(std::string_view accept);

// The form the API serves at `type`'s path to Kubernetes' clients: kEventsV1 for
// EventsV1Type(), kSource for SourceServedTypes(), kKubernetes for any other.
ServedForm KubernetesFormAt(const ResourceType& type);

// Rewrites `body`, a native object as stored, into its served `form`. A body of another kind, or
// that is not an object, is left as it is. `at`, the type whose path serves it, names the version
// kSource serves it at (ServedSourceForm); nullptr: the kept source's.
void ToServedForm(nlohmann::json& body, ServedForm form = ServedForm::kKubernetes,
                  const ResourceType* at = nullptr);

// Whether `document` is a native object in its served form under the core group: apiVersion
// "v1" and kind Node or Event, or kind Pod with a spec.template. Kubernetes' own v1 Pod (its
// spec.containers, never a template) is a compatible kind. The decoder reads such a document as
// the native kind, so that what a client read it may write back.
bool IsServedCoreForm(const nlohmann::json& document);

}  // namespace strata::api
