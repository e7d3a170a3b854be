#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "api/kinds.h"
#include "api/object_table.h"

namespace strata::api {

// Kueue's kueue.x-k8s.io/v1beta2 LocalQueues as strata serves them (LocalQueueType(); at v1beta1
// too, the same but for their apiVersion).
//
// A LocalQueue is no object of its own in strata: decoded, it is a namespaced name of the Queue
// its ClusterQueue became (an entry of the Queue's spec.localQueues), through which workloads
// labelled kueue.x-k8s.io/queue-name find their queue. So the server keeps it there, and what
// a LocalQueue holds beyond that name, its labels and annotations (kubectl's last-applied
// configuration among them) and its creation time, is kept on the same Queue in the
// annotation kLocalQueuesAnnotation, keyed "namespace/name". A LocalQueue is served from the
// Queue that names it: its resourceVersion is that Queue's, its spec.clusterQueue the Queue's
// name (immutable, as in Kueue). Pure functions over stored JSON; thread-safe.

// {"namespace/name": {"creationTimestamp", "labels", "annotations"}} of the LocalQueues a
// Queue is named by, where the server wrote them (strata apply keeps none: they are served
// with the Queue's creation time and no labels).
inline constexpr char kLocalQueuesAnnotation[] = "strata.dev/local-queues";

// Whether `stored`, a Queue as the store keeps it, is named by LocalQueue namespace_name/name.
bool HasLocalQueue(const nlohmann::json& stored, std::string_view namespace_name,
                   std::string_view name);

// The LocalQueues naming `stored` (a Queue as the store keeps it), in the order of its
// spec.localQueues, as Kueue serves them, without status (LocalQueueStatus).
std::vector<nlohmann::json> ServedLocalQueues(const nlohmann::json& stored);

// What a Job (as stored) counts toward its LocalQueue's status: the LocalQueue it names in its
// queue (from kueue.x-k8s.io/queue-name), "namespace/name", empty when none; pending before its
// admission, admitted until it ends.
struct LocalQueueWorkload {
  std::string local_queue;
  bool pending = false;
  bool admitted = false;

  bool operator==(const LocalQueueWorkload&) const = default;
};
LocalQueueWorkload LocalQueueWorkloadOf(const nlohmann::json& stored_job);

// A LocalQueue's status from the counts of its workloads: pendingWorkloads, admittedWorkloads
// and reservingWorkloads (strata admits and places in one step), condition Active since `since`.
nlohmann::json LocalQueueStatus(int64_t pending, int64_t admitted, const std::string& since);

// `stored` (a Queue) named by the LocalQueue `document` was decoded to as `link`: its entry in
// spec.localQueues (added at the end when new) and its kept metadata: labels and annotations
// from `document`, creationTimestamp kept, else `now`. A LocalQueue served so has no uid.
// REQUIRES: link.cluster_queue is the Queue's name.
nlohmann::json WithLocalQueue(const nlohmann::json& stored, const LocalQueueLink& link,
                              const nlohmann::json& document, const std::string& now);

// `stored` (a Queue) no longer named by LocalQueue namespace_name/name.
nlohmann::json WithoutLocalQueue(const nlohmann::json& stored, std::string_view namespace_name,
                                 std::string_view name);

// What a write of a Queue decoded from a ClusterQueue (`write`) keeps of `current`, the Queue
// it replaces: the LocalQueues naming it, which a ClusterQueue document does not list (they
// are documents of their own), before those the write adds. Any other write is left alone.
void CarryLocalQueues(const nlohmann::json& current, nlohmann::json& write);

// The columns Kueue's LocalQueue CRD prints between NAME and AGE: CLUSTERQUEUE, PENDING
// WORKLOADS, ADMITTED WORKLOADS; and their cells for one as served.
std::vector<TableColumn> LocalQueueColumns();
std::vector<std::string> LocalQueueCells(const nlohmann::json& served);

}  // namespace strata::api
