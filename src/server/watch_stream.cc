#include "server/watch_stream.h"

#include <nlohmann/json.hpp>

#include "api/api_status.h"
#include "api/served_form.h"

namespace strata::server {

WatchStream::WatchStream(std::unique_ptr<store::Watcher> watcher, WatchStreamOptions options,
                         metrics::Gauge& open_watches)
    : watcher_(std::move(watcher)),
      options_(std::move(options)),
      open_watches_(open_watches),
      last_output_(options_.clock->Now()) {
  open_watches_.Add(1);
}

WatchStream::~WatchStream() {
  watcher_->SetNotify(nullptr);
  open_watches_.Add(-1);
}

void WatchStream::SetWake(std::function<void()> wake) { watcher_->SetNotify(std::move(wake)); }

std::string WatchStream::EventLine(const store::WatchEvent& event) const {
  nlohmann::json line = {{"type", store::WatchEventTypeName(event.type)}};
  if (options_.present) {
    line["object"] = options_.present(event.object.body);
  } else {
    line["object"] = event.object.body;
    api::ToServedForm(line["object"], options_.form, options_.type);
  }
  return line.dump() + "\n";
}

std::string WatchStream::BookmarkLine(std::optional<int64_t> version,
                                      bool initial_events_end) const {
  nlohmann::json object = {
      {"kind", options_.kind},
      {"apiVersion", options_.api_version},
      {"metadata",
       {{"resourceVersion", std::to_string(version.value_or(watcher_->ProgressVersion()))}}}};
  if (initial_events_end) {
    object["metadata"]["annotations"] = {{"k8s.io/initial-events-end", "true"}};
  }
  return nlohmann::json{{"type", "BOOKMARK"}, {"object", std::move(object)}}.dump() + "\n";
}

std::string WatchStream::Read(bool* finished) {
  *finished = false;
  std::string out;
  if (!initial_sent_) {
    initial_sent_ = true;
    for (store::Object& object : options_.initial) {
      out += EventLine({store::WatchEventType::kAdded, std::move(object)});
    }
    options_.initial.clear();
    if (options_.initial_version) out += BookmarkLine(options_.initial_version, true);
  }
  while (true) {
    Result<std::optional<store::WatchEvent>> next = watcher_->TryNext();
    if (!next) {
      if (next.error().code() == StatusCode::kExpired) {
        Status expired = ExpiredError(
            "the watch fell too far behind and its history is gone; list again and watch from "
            "the list's resourceVersion");
        out +=
            nlohmann::json{{"type", "ERROR"}, {"object", api::StatusObject(expired)}}.dump() + "\n";
      }
      *finished = true;
      return out;
    }
    if (!next->has_value()) break;
    const store::WatchEvent& event = **next;
    if (options_.matches && !options_.matches(event.object)) continue;
    out += EventLine(event);
  }
  TimePoint now = options_.clock->Now();
  if (now >= options_.deadline) {
    *finished = true;
  } else if (out.empty() && options_.bookmarks &&
             now - last_output_ >= options_.bookmark_interval) {
    out = BookmarkLine();
  }
  if (!out.empty()) last_output_ = now;
  return out;
}

}  // namespace strata::server
