#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <string_view>

#include "common/clock.h"
#include "kube/client.h"
#include "kubestore/kind_mapping.h"
#include "store/store.h"

namespace strata::kubestore {

struct KubeStoreOptions {
  // A watch is a series of requests of at most this long, each resuming from the last version
  // seen (bookmarks included).
  Duration watch_request_timeout = std::chrono::minutes(5);
  // How long a watcher waits before it watches again after the server could not be reached.
  Duration reconnect_delay = std::chrono::seconds(1);
  // Set in a virtual kubelet's store (strata agent --kubeconfig), to its Node's name: Pods are
  // those bound to that node (a field selector on spec.nodeName, the kubelet's own watch), and
  // those strata did not make are among them, as foreign pods (foreign_pod_mapping.h) whose
  // status alone this store writes. Empty (the control plane's store): Pods are strata's only,
  // so that its scheduler and controllers never see, adopt or delete a pod that is not theirs.
  std::string kubelet_node;
};

// A store::Store whose objects are a Kubernetes API server's: strata's kinds as the CRDs of
// `strata kubernetes manifests`, Pods, Nodes and Events as v1 objects (kind_mapping.h says how
// each translates). The control loops run over it as over an embedded store; the contract is
// the one every backend keeps (DESIGN.md, "The store contract"):
//   Get, List    GET of the object or the collection (every page), at the server's version;
//                Pods are those labelled app.kubernetes.io/managed-by=strata (with
//                kubelet_node: every pod bound to that node)
//   Apply        exactly one write (a batch of several is InvalidArgument: the API has no
//                transaction across objects). kCreate POSTs (then writes the status through
//                /status when the object has one to set; a Pod of a Job or Service is owned by
//                it, so deleting the owner deletes its pods through the garbage collector);
//                kUpdate GETs the object, checks the uid and resourceVersion preconditions,
//                binds a Pod given a node through pods/binding, then PUTs what changed: the
//                object, then its /status, each with the version the previous write returned;
//                kUpsert is kCreate when the object is not there; kDelete DELETEs with the
//                preconditions, in the background (owned objects follow); a Pod with no grace
//                period (strata's controllers stop its processes before they delete it, and
//                its node agent acts on the deletion: no kubelet is left to finish it).
//   Watch        one kind, from a version or from now: a watch stream with bookmarks,
//                reconnected from the last version when the server ends it; Expired (410) ends
//                the watcher, and the consumer relists. Read-your-writes, as the embedded
//                stores give it: a watcher of a whole kind (every namespace, no labels) whose
//                TryNext finds nothing waiting while this store has written the kind at a
//                version the watch has not reached waits (up to 1 s) for that write's event,
//                so that the cache a loop syncs after its writes holds them
//   CurrentVersion  the newest resourceVersion an answer to this store carried (its own writes
//                and lists; a list of one namespace the first time), so the cache's Sync costs
//                no request
// A write of several requests (bind, object, status) is not atomic: a process that dies between
// them leaves the earlier ones done, which the reconcilers handle like any partial step.
// Versions are the server's resourceVersions read as integers (etcd revisions); a server whose
// versions are not integers is refused by name.
//
// Thread-safe; `client` is shared by every call and watcher and must outlive them.
class KubeStore final : public store::Store {
 public:
  explicit KubeStore(kube::Client& client, KubeStoreOptions options = {});
  ~KubeStore() override;

  Result<std::vector<store::Object>> Apply(std::vector<store::Write> writes) override;
  Result<store::Object> Get(const store::ObjectKey& key) const override;
  Result<store::ListResult> List(const store::Selection& selection) const override;
  Result<std::unique_ptr<store::Watcher>> Watch(const store::WatchOptions& options) override;
  int64_t CurrentVersion() const override;

 private:
  Result<store::Object> CreateOne(const KindMapping& mapping, store::Object object);
  Result<store::Object> UpdateOne(const KindMapping& mapping, store::Object object, bool upsert);
  // UpdateOne of an unbound pod that `object` binds to `node_name`, its preconditions checked
  // against `current`: its metadata, the pods/binding, then its status if the caller changed it.
  Result<store::Object> BindOne(const KindMapping& mapping, const std::string& ns,
                                store::Object object, Json current, const std::string& node_name);
  // PUT of `desired`'s status through the status subresource.
  Result<Json> WriteStatus(const KindMapping& mapping, const std::string& ns, const Json& desired);
  Result<store::Object> DeleteOne(const KindMapping& mapping, const store::Object& object);
  // The ownerReferences of a new pod: its Job or Service, when there is one.
  Result<nlohmann::json> PodOwnerReferences(const store::Object& pod);

  // Whether Pods are read as a kubelet of options_.kubelet_node reads them.
  bool Kubelet(const KindMapping& mapping) const;
  // The object of `object` (the server's) when it is one of this store's: through `mapping`, or
  // a foreign pod on the kubelet's node; nullopt when it is not.
  Result<std::optional<store::Object>> Read(const KindMapping& mapping, const Json& object) const;
  // UpdateOne of a foreign pod: its status, under `object`'s preconditions against `current`.
  Result<store::Object> UpdateForeignPod(const KindMapping& mapping, const store::Object& object,
                                         const Json& current);

  // Remembers the newest version an answer carried.
  void SawVersion(int64_t version) const;

  kube::Client& client_;
  const KubeStoreOptions options_;
  mutable std::atomic<int64_t> seen_version_{0};
  // Per mapped kind (every one, made at construction): the version of this store's latest
  // create or update of it, for the watchers' read-your-writes.
  std::map<std::string_view, std::atomic<int64_t>> own_writes_;
};

}  // namespace strata::kubestore
