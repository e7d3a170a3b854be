#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/clock.h"

namespace strata::history {

// Labels of a series, in the order given ({"version", "v1"}).
using Labels = std::vector<std::pair<std::string, std::string>>;

// One reading of one series at a sample time. `scope` says whose it is ("services/ns/name",
// "queues/name", "jobs/ns/name", "cluster"); `name` and `labels` which of its figures.
struct Reading {
  std::string scope;
  std::string name;
  Labels labels;
  double value = 0;
};

// Something that happened to a scope at a time (a scale decision and its reason), with its
// fields as text.
struct Event {
  TimePoint time;
  std::string scope;
  std::string kind;  // "scale"
  std::map<std::string, std::string> fields;

  bool operator==(const Event&) const = default;
};

struct SeriesStoreOptions {
  // One sample per step is kept for `window`: window / step points per series.
  Duration step = std::chrono::seconds(15);
  Duration window = std::chrono::hours(6);
  // At most this many series at once; readings of further ones are dropped (and counted)
  // until a series ages out.
  size_t max_series = 20000;
  // The newest events kept per scope.
  size_t max_events_per_scope = 200;
};

// The series and events of the scopes under a prefix since a time, aligned on `times`: each
// series has one value per time, NaN where it had no reading.
struct HistoryRange {
  struct Series {
    std::string scope;
    std::string name;
    Labels labels;
    std::vector<double> values;
  };
  std::vector<TimePoint> times;
  std::vector<Series> series;  // by scope, then name and labels
  std::vector<Event> events;   // oldest first
};

// Bounded time series for the dashboard: a ring of sample times shared by every series, and
// per series a ring of float values (4 bytes a point), so memory is at most
// max_series x (window / step) x 4 bytes plus the keys. A series without a reading for a whole
// window is dropped. Events are kept per scope, the newest max_events_per_scope, and those
// older than the window are dropped.
//
// Owned by the control plane; written by its history recorder, read by the history endpoint.
// Thread-safe.
class SeriesStore {
 public:
  explicit SeriesStore(SeriesStoreOptions options = {});

  // Records `readings` as the sample at `time`. A time not later than the last sample's
  // replaces that sample's readings of the series given (a clock that stepped back overwrites
  // rather than reorders). Two readings of one series in one call: the last counts.
  void Record(TimePoint time, const std::vector<Reading>& readings);

  // Adds `event` unless an equal one is kept already (a scale decision seen again in the next
  // sample of its service's status is one decision).
  void AddEvent(Event event);

  // The samples from `since` on of every scope equal to `scope_prefix` or under it (followed
  // by '/'), and their events from `since` on. An empty prefix reads every scope.
  HistoryRange Read(std::string_view scope_prefix, TimePoint since) const;

  // Bytes held by series values, keys and events (an estimate of the heap in use).
  size_t MemoryBytes() const;
  size_t SeriesCount() const;
  // Readings dropped because max_series series existed.
  uint64_t DroppedReadings() const;
  const SeriesStoreOptions& options() const { return options_; }
  // Points kept per series: window / step.
  size_t capacity() const { return capacity_; }

 private:
  struct Series {
    std::string scope;
    std::string name;
    Labels labels;
    std::vector<float> values;  // ring, indexed by sample number % capacity_
    uint64_t first = 0;         // the first sample number it has a slot for
    uint64_t last = 0;          // the last sample number it had a reading at
  };
  // The key of a series within the store: scope, name and labels joined with '\x1f'.
  static std::string KeyOf(const Reading& reading);
  bool InScope(std::string_view scope, std::string_view prefix) const;
  // Drops series with no reading within the window. REQUIRES: mutex_ held.
  void DropStaleLocked();

  const SeriesStoreOptions options_;
  const size_t capacity_;
  mutable std::mutex mutex_;
  std::vector<TimePoint> times_;  // ring of sample times
  uint64_t next_ = 0;             // the number of the next sample
  std::map<std::string, Series> series_;
  std::map<std::string, std::deque<Event>> events_;  // by scope
  uint64_t dropped_ = 0;
};

}  // namespace strata::history
