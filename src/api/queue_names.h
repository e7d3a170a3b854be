#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "api/queue.h"

namespace strata::api {

// Which Queue a workload's `queue` field names, by the rule admission uses: a Queue by its
// name, else one of a Queue's localQueues in the workload's namespace (Kueue's LocalQueue).
// Everything that charges or labels by queue (the scheduler's quota model, the REST API's
// queue usage, the GPU and cost series) resolves with it, so they all name the queue a
// workload was admitted to. A plain value; thread-compatible.
class QueueNames {
 public:
  QueueNames() = default;
  explicit QueueNames(const std::vector<Queue>& queues);

  // Adds the Queue `name`, and one of its localQueues.
  void AddQueue(std::string name);
  void AddLocalQueue(std::string namespace_name, std::string local_name, std::string queue);

  // The name of the Queue `queue` names for a workload of `namespace_name`, or nullopt when it
  // names none.
  std::optional<std::string> Resolve(const std::string& namespace_name,
                                     const std::string& queue) const;

 private:
  std::set<std::string, std::less<>> queues_;
  std::map<std::pair<std::string, std::string>, std::string> local_;  // (ns, local) -> queue
};

}  // namespace strata::api
