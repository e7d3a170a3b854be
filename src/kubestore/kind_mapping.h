#pragma once

#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "kube/resource.h"
#include "store/object.h"

// How strata's store kinds are kept on a Kubernetes API server: which resource holds each one
// and how a body translates both ways. strata.dev kinds are custom resources (the CRDs of
// `strata kubernetes manifests`) holding strata's body as it is; Pods, Nodes and Events are the
// core group's v1 objects, so that kubectl and every Kubernetes tool see them:
//   Pod    a v1 Pod with schedulerName strata, one container "main" made of the process
//          template (image, command, args, env, workingDir; whole GPUs, cpu and memory as
//          limits), the label app.kubernetes.io/managed-by=strata, and strata's whole spec in
//          the annotation strata.dev/pod-spec; phase, reason, message, exit code and restart
//          count in the v1 status (containerStatuses[main]). spec.nodeName is the server's.
//   Node   a v1 Node: taints and unschedulable in its spec (the node.kubernetes.io/* taints
//          of Kubernetes' node lifecycle are neither shown nor written over); cpu, memory and
//          nvidia.com/gpu as capacity and allocatable, conditions as they are; the GPU inventory in
//          the annotation strata.dev/gpus. A Node strata did not register (a kubelet's, kwok's)
//          reads as nvidia.com/gpu allocatable GPUs described by GPU Feature Discovery's labels
//          (nvidia.com/gpu.product, nvidia.com/gpu.memory in MiB).
//   Event  a v1 Event (involvedObject, type, reason, message, count, timestamps) from the
//          source component "strata".
//   Namespace  a v1 Namespace: its name, labels and annotations (the cluster's namespace
//          controller deletes what is in it).
//   ConfigMap, Secret  the cluster's v1 ConfigMaps and Secrets, field for field: what a pod's
//          environment reads (env valueFrom, envFrom). strata only reads them there (its RBAC
//          grants get, list and watch); users write them with kubectl.
// Pure functions over values; thread-safe.

namespace strata::kubestore {

using Json = nlohmann::json;

struct KindMapping {
  std::string_view kind;  // the store's kind: "Pod"
  kube::GroupVersionResource resource;
  bool namespaced = false;
  // Its status is written through the /status subresource, its spec and metadata through the
  // object itself.
  bool status_subresource = false;
  // A label selector that every object of the kind carries on the server ("" for none).
  std::string_view owned_selector;
  // The object to send for `object`, a store object about to be written; `current` is the
  // object on the server, or nullptr for a create. Server-owned fields of `current` (uid,
  // ownerReferences, a Pod's immutable spec, a Node's addresses...) are kept. The
  // resourceVersion is object.resource_version when set, else current's.
  Result<Json> (*to_kube)(const store::Object& object, const Json* current) = nullptr;
  // strata's body (apiVersion strata.dev/v1alpha1) of an object the server sent.
  Result<Json> (*from_kube)(const Json& object) = nullptr;
};

// The mapping of the store kind `kind`. InvalidArgument naming it when strata keeps no such
// kind on Kubernetes.
Result<const KindMapping*> FindKindMapping(std::string_view kind);

// Every mapped kind: the core group's first, then strata.dev's in the catalog's order.
const std::vector<KindMapping>& AllKindMappings();

// The store object of `object`, an object the server sent, through `mapping`.
Result<store::Object> FromKube(const KindMapping& mapping, const Json& object);

// Pieces the mappings share.

// The metadata to send for `object`: current's (uid, ownerReferences, finalizers... kept,
// managedFields dropped) with the object's name, namespace, labels and annotations, and the
// resourceVersion precondition. With `keep_foreign` (objects Kubernetes' own controllers write
// on too: Nodes, Pods), current's labels and annotations outside strata.dev/ that the object
// does not set are kept: strata never takes away what a kubelet or a controller put there.
Json KubeMetadata(const store::Object& object, const Json* current, bool namespaced,
                  bool keep_foreign = false);

// The fields of `object` among `names` that are non-empty strings, as an object.
Json NonEmptyStrings(const Json& object, std::initializer_list<const char*> names);

// strata's metadata from the server's: name, namespace, labels, annotations, uid,
// resourceVersion and creationTimestamp; the annotations and labels in `drop` left out.
Json StrataMetadata(const Json& metadata, const std::vector<std::string_view>& drop = {});

// The mappings, one file each.
KindMapping PodMapping();                                  // pod_mapping.cc
KindMapping NodeMapping();                                 // node_mapping.cc
KindMapping EventMapping();                                // event_mapping.cc
KindMapping NamespaceMapping();                            // namespace_mapping.cc
KindMapping ConfigMapMapping();                            // config_data_mapping.cc
KindMapping SecretMapping();                               // config_data_mapping.cc
KindMapping CustomResourceMapping(std::string_view kind);  // custom_resource_mapping.cc

}  // namespace strata::kubestore
