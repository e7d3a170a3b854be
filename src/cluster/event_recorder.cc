#include "cluster/event_recorder.h"

#include <fmt/format.h>
#include <xxhash.h>

#include "api/event.h"
#include "api/object.h"
#include "cluster/stored_object.h"

namespace strata::cluster {

Status EventRecorder::Record(const EventSubject& subject, std::string_view type,
                             std::string_view reason, std::string_view message) {
  // The name is a function of what aggregates, so a repeat finds its event with one Get.
  std::string identity = fmt::format("{}\n{}\n{}\n{}\n{}\n{}", subject.kind, subject.namespace_name,
                                     subject.name, type, reason, message);
  uint64_t digest = XXH3_64bits(identity.data(), identity.size());
  std::string namespace_name =
      subject.namespace_name.empty() ? std::string("default") : subject.namespace_name;
  store::ObjectKey key{"Event", namespace_name, fmt::format("{}.{:016x}", subject.name, digest)};
  const TimePoint now = clock_.Now();
  if (auto memo = written_.find(key);
      memo != written_.end() && now - memo->second < repeat_interval_) {
    return Status::Ok();
  }
  const std::string stamp = FormatRfc3339(now);

  Result<store::Object> written = [&]() -> Result<store::Object> {
    Result<store::Object> existing = store_.Get(key);
    if (existing) {
      ASSIGN_OR_RETURN(api::Object decoded, DecodeStoredObject(*existing));
      api::Event* event = decoded.As<api::Event>();
      if (event == nullptr) return Err(InternalError(key.Describe() + ": not an Event"));
      std::optional<TimePoint> last = ParseRfc3339(event->last_timestamp);
      if (last && now - *last < repeat_interval_) return *existing;
      event->count += 1;
      event->last_timestamp = stamp;
      return store_.Update(EncodeForStore(decoded, *existing));
    }
    if (existing.error().code() != StatusCode::kNotFound) return Err(existing.error());
    api::Event event;
    event.metadata.name = key.name;
    event.metadata.namespace_name = namespace_name;
    event.involved_object = {subject.kind, subject.name, subject.namespace_name, subject.uid};
    event.type = std::string(type);
    event.reason = std::string(reason);
    event.message = std::string(message);
    event.first_timestamp = stamp;
    event.last_timestamp = stamp;
    return store_.Create(EncodeForStore(api::Object(event)));
  }();
  if (!written) return written.error();
  if (written_.size() >= kMemoLimit) written_.clear();
  written_[key] = now;
  return Status::Ok();
}

}  // namespace strata::cluster
