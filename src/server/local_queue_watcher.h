#pragma once

#include <deque>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "api/local_queue_form.h"
#include "store/store.h"

namespace strata::server {

// The changes of Kueue's LocalQueues, as a store::Watcher of objects of kind LocalQueue (for
// WatchStream, which serves them as it serves any kind's), derived from two watchers of the
// store: the Queues that keep the LocalQueues (api/local_queue_form.h) and the Jobs whose counts
// are their status. A LocalQueue is ADDED when a Queue comes to name it, DELETED when no longer
// named (or its Queue is deleted), MODIFIED when what is served of it changes: its labels, or
// the counts of its pending and admitted workloads as a Job comes, changes phase or goes. Each
// event's object is the LocalQueue as served (with its status), keyed LocalQueue/namespace/name,
// stamped with the version of the write that changed it.
//
// Built from the Queues and Jobs as listed when the watch starts, and the watchers of both kinds
// from those lists' versions, so that no change falls between. Owned by its WatchStream;
// thread-compatible as WatchStream uses it (TryNext from one thread at a time; SetNotify passes
// to both watchers, whose notifications may come from writers' threads).
class LocalQueueWatcher final : public store::Watcher {
 public:
  LocalQueueWatcher(const std::vector<store::Object>& queues,
                    std::unique_ptr<store::Watcher> queue_watcher,
                    const std::vector<store::Object>& jobs,
                    std::unique_ptr<store::Watcher> job_watcher);

  // Waits for `timeout` on the Queues' watcher only when nothing is ready (a Job's change is
  // seen on the next call).
  Result<store::WatchEvent> Next(Duration timeout) override;
  Result<std::optional<store::WatchEvent>> TryNext() override;
  void SetNotify(std::function<void()> notify) override;
  // The lesser of both watchers' progress: every change up to it has been seen in both kinds.
  int64_t ProgressVersion() const override;

  // The LocalQueues as served now (with their status), each as an object of kind LocalQueue:
  // what a watch that starts from the current state sends first.
  std::vector<store::Object> Current() const;

 private:
  // Applies one change of a Queue or a Job, and queues the LocalQueue events it makes.
  void OnQueue(const store::WatchEvent& event);
  void OnJob(const store::WatchEvent& event);
  // Queues the event that the LocalQueue `key` now served as `served` (null: gone) makes, at
  // `version`.
  void Emit(const std::string& key, nlohmann::json served, int64_t version);
  // `served` (without status) with the status its counts give.
  nlohmann::json WithStatus(nlohmann::json served) const;

  std::unique_ptr<store::Watcher> queue_watcher_;
  std::unique_ptr<store::Watcher> job_watcher_;
  // Per Queue name, the LocalQueues it keeps ("namespace/name" -> served, without status).
  std::map<std::string, std::map<std::string, nlohmann::json>> by_queue_;
  // Per Job ("namespace/name"), what it counts toward; per LocalQueue, pending and admitted.
  std::map<std::string, api::LocalQueueWorkload> jobs_;
  std::map<std::string, std::pair<int64_t, int64_t>> counts_;
  // Per LocalQueue, what was last sent (or is in the initial state).
  std::map<std::string, nlohmann::json> sent_;
  std::deque<store::WatchEvent> ready_;
};

}  // namespace strata::server
