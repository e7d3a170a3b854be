#include "store/store.h"

namespace strata::store {
namespace {

Result<Object> ApplyOne(Store& store, WriteOp op, Object object) {
  std::vector<Write> writes;
  writes.push_back(Write{op, std::move(object)});
  ASSIGN_OR_RETURN(std::vector<Object> results, store.Apply(std::move(writes)));
  return std::move(results.front());
}

}  // namespace

std::string_view WatchEventTypeName(WatchEventType type) {
  switch (type) {
    case WatchEventType::kAdded:
      return "ADDED";
    case WatchEventType::kModified:
      return "MODIFIED";
    case WatchEventType::kDeleted:
      return "DELETED";
  }
  return "UNKNOWN";
}

Result<Object> Store::Create(Object object) {
  return ApplyOne(*this, WriteOp::kCreate, std::move(object));
}

Result<Object> Store::Update(Object object) {
  return ApplyOne(*this, WriteOp::kUpdate, std::move(object));
}

Result<Object> Store::Delete(const ObjectKey& key, int64_t precondition_version) {
  Object target;
  target.key = key;
  target.resource_version = precondition_version;
  return ApplyOne(*this, WriteOp::kDelete, std::move(target));
}

}  // namespace strata::store
