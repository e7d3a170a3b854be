#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "api/served_form.h"
#include "common/clock.h"
#include "metrics/metrics.h"
#include "server/api_listener.h"
#include "store/store.h"

namespace strata::server {

struct WatchStreamOptions {
  // Objects to report as ADDED before any change (a watch without a resourceVersion starts
  // with the current state, as in Kubernetes).
  std::vector<store::Object> initial;
  // Kubernetes' watch-list (sendInitialEvents=true, what client-go's reflectors and kubectl
  // wait ask for): after `initial`, a BOOKMARK at `initial_version` annotated
  // k8s.io/initial-events-end, which tells the client it has the whole state.
  std::optional<int64_t> initial_version;
  // Only the objects for which this is true (a fieldSelector); empty: every object selected.
  std::function<bool(const store::Object&)> matches;
  // Send a BOOKMARK with the progress version after `bookmark_interval` without output.
  bool bookmarks = false;
  Duration bookmark_interval = std::chrono::seconds(10);
  // The stream ends, cleanly, at this time of `clock`.
  TimePoint deadline = TimePoint::max();
  const Clock* clock = &RealClock::Instance();
  // For BOOKMARK objects: the kind and apiVersion of the collection watched.
  std::string kind;
  std::string api_version;
  // The form objects are served in (api::ServedFormWanted).
  api::ServedForm form = api::ServedForm::kKubernetes;
  // The type watched, whose version a source-served kind is served at (api::ToServedForm).
  const api::ResourceType* type = nullptr;
  // What an event carries for an object as stored (a Table of one row, for kubectl get -w);
  // empty: the object as the API serves it.
  std::function<nlohmann::json(const nlohmann::json&)> present;
};

// The body of a watch response: one JSON object per line,
//   {"type": "ADDED|MODIFIED|DELETED|BOOKMARK|ERROR", "object": {...}}
// read from a store Watcher. When the watcher expires (the client fell too far behind) the
// stream ends with an ERROR event carrying a 410 Expired Status, and the client relists. Owned
// by the listener's connection; counts itself in `open_watches` while it lives.
// Thread-safety: see ResponseStream.
class WatchStream final : public ResponseStream {
 public:
  WatchStream(std::unique_ptr<store::Watcher> watcher, WatchStreamOptions options,
              metrics::Gauge& open_watches);
  ~WatchStream() override;

  void SetWake(std::function<void()> wake) override;
  std::string Read(bool* finished) override;

 private:
  // One line of the stream for `event`, newline included.
  std::string EventLine(const store::WatchEvent& event) const;
  // A BOOKMARK at `version` (the watcher's progress when nullopt), with the initial-events-end
  // annotation when `initial_events_end`.
  std::string BookmarkLine(std::optional<int64_t> version = std::nullopt,
                           bool initial_events_end = false) const;

  std::unique_ptr<store::Watcher> watcher_;
  WatchStreamOptions options_;
  metrics::Gauge& open_watches_;
  bool initial_sent_ = false;
  TimePoint last_output_;
};

}  // namespace strata::server
