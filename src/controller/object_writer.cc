#include "controller/object_writer.h"

#include <spdlog/spdlog.h>

#include "controller/training_pod.h"

namespace strata::controller {

void ObjectWriter::Keep(Status status) {
  if (status_.ok()) status_ = std::move(status);
}

void ObjectWriter::Create(const api::Object& object) {
  if (failed()) return;
  ++writes_;
  Result<store::Object> written = store_.Create(cluster::EncodeForStore(object));
  if (!written) Keep(written.error());
}

void ObjectWriter::Update(const store::Object& stored, const api::Object& object) {
  if (failed()) return;
  ++writes_;
  Result<store::Object> written = store_.Update(cluster::EncodeForStore(object, stored));
  if (!written) Keep(written.error());
}

void ObjectWriter::Delete(const store::Object& stored) {
  if (failed()) return;
  ++writes_;
  Result<store::Object> deleted = store_.Delete(stored.key, stored.resource_version);
  // Already gone is what was wanted.
  if (!deleted && deleted.error().code() != StatusCode::kNotFound) Keep(deleted.error());
}

void ObjectWriter::StopPod(const cluster::Stored<api::Pod>& stored, std::string_view reason,
                           std::string_view message) {
  if (api::PodTerminal(stored.value)) return;
  api::Pod pod = stored.value;
  if (!RequestStop(pod, reason, message)) return;
  Update(stored, std::move(pod));
}

void ObjectWriter::Event(std::string_view type, std::string_view reason,
                         const std::string& message) {
  if (failed()) return;
  if (Status recorded = events_.Record(subject_, type, reason, message); !recorded.ok()) {
    spdlog::debug("event {} on {} {}/{} not recorded: {}", reason, subject_.kind,
                  subject_.namespace_name, subject_.name, recorded.ToString());
  }
}

}  // namespace strata::controller
