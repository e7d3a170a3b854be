#include "api/queue_names.h"

namespace strata::api {

QueueNames::QueueNames(const std::vector<Queue>& queues) {
  for (const Queue& queue : queues) {
    AddQueue(queue.metadata.name);
    for (const LocalQueueRef& local : queue.spec.local_queues) {
      AddLocalQueue(local.namespace_name, local.name, queue.metadata.name);
    }
  }
}

void QueueNames::AddQueue(std::string name) { queues_.insert(std::move(name)); }

void QueueNames::AddLocalQueue(std::string namespace_name, std::string local_name,
                               std::string queue) {
  local_[{std::move(namespace_name), std::move(local_name)}] = std::move(queue);
}

std::optional<std::string> QueueNames::Resolve(const std::string& namespace_name,
                                               const std::string& queue) const {
  if (queues_.contains(queue)) return queue;
  if (auto local = local_.find({namespace_name, queue}); local != local_.end()) {
    return local->second;
  }
  return std::nullopt;
}

}  // namespace strata::api
