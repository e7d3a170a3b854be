#include "controller/write_batch.h"

#include "controller/training_pod.h"

namespace strata::controller {

void WriteBatch::Event(std::string_view type, std::string_view reason, const std::string& message) {
  Result<std::optional<store::Write>> event = events.Record(subject, type, reason, message);
  if (!event) {
    if (error.ok()) error = event.error();
  } else if (*event) {
    writes.push_back(std::move(**event));
  }
}

void WriteBatch::StopPod(const Stored<api::Pod>& stored, std::string_view reason,
                         std::string_view message) {
  if (PodTerminal(stored.value)) return;
  api::Pod pod = stored.value;
  if (!RequestStop(pod, reason, message)) return;
  UpdatePod(stored, std::move(pod));
}

void WriteBatch::UpdatePod(const Stored<api::Pod>& stored, api::Pod pod) {
  writes.push_back(
      {store::WriteOp::kUpdate, EncodeForStore(api::Object(std::move(pod)), stored.raw)});
}

void WriteBatch::DeletePod(const Stored<api::Pod>& stored) {
  store::Object key_only;
  key_only.key = stored.raw.key;
  key_only.resource_version = stored.raw.resource_version;
  writes.push_back({store::WriteOp::kDelete, std::move(key_only)});
}

Status WriteBatch::Commit(store::Store& store) {
  if (!error.ok()) return error;
  if (writes.empty()) return Status::Ok();
  Result<std::vector<store::Object>> applied = store.Apply(std::move(writes));
  writes.clear();
  return applied ? Status::Ok() : applied.error();
}

}  // namespace strata::controller
