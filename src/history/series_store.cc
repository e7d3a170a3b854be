#include "history/series_store.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/check.h"

namespace strata::history {
namespace {

constexpr float kNoReading = std::numeric_limits<float>::quiet_NaN();

size_t LabelsBytes(const Labels& labels) {
  size_t bytes = labels.capacity() * sizeof(Labels::value_type);
  for (const auto& [name, value] : labels) bytes += name.capacity() + value.capacity();
  return bytes;
}

}  // namespace

SeriesStore::SeriesStore(SeriesStoreOptions options)
    : options_(options),
      capacity_(static_cast<size_t>(std::max<int64_t>(1, options.window / options.step))),
      times_(capacity_) {
  STRATA_CHECK(options.step > Duration::zero());
}

std::string SeriesStore::KeyOf(const Reading& reading) {
  std::string key = reading.scope;
  key += '\x1f';
  key += reading.name;
  for (const auto& [name, value] : reading.labels) {
    key += '\x1f';
    key += name;
    key += '=';
    key += value;
  }
  return key;
}

bool SeriesStore::InScope(std::string_view scope, std::string_view prefix) const {
  if (prefix.empty()) return true;
  if (!scope.starts_with(prefix)) return false;
  return scope.size() == prefix.size() || scope[prefix.size()] == '/';
}

void SeriesStore::Record(TimePoint time, const std::vector<Reading>& readings) {
  std::lock_guard lock(mutex_);
  uint64_t sample = next_;
  if (next_ > 0 && time <= times_[(next_ - 1) % capacity_]) {
    sample = next_ - 1;  // replaces the last sample's readings
  } else {
    times_[sample % capacity_] = time;
    ++next_;
  }
  for (const Reading& reading : readings) {
    std::string key = KeyOf(reading);
    auto it = series_.find(key);
    if (it == series_.end()) {
      if (series_.size() >= options_.max_series) {
        ++dropped_;
        continue;
      }
      Series created{reading.scope,  reading.name,
                     reading.labels, std::vector<float>(capacity_, kNoReading),
                     sample,         sample};
      it = series_.emplace(std::move(key), std::move(created)).first;
    }
    Series& series = it->second;
    // The samples it missed since its last reading read as none (at most a window of them).
    const uint64_t gap_from =
        std::max(series.last + 1, sample > capacity_ ? sample - capacity_ : 0);
    for (uint64_t s = gap_from; s < sample; ++s) series.values[s % capacity_] = kNoReading;
    series.values[sample % capacity_] = static_cast<float>(reading.value);
    series.last = std::max(series.last, sample);
  }
  DropStaleLocked();
}

void SeriesStore::DropStaleLocked() {
  const uint64_t oldest = next_ > capacity_ ? next_ - capacity_ : 0;
  std::erase_if(series_, [oldest](const auto& entry) { return entry.second.last < oldest; });
  if (next_ == 0) return;
  const TimePoint horizon = times_[(next_ - 1) % capacity_] - options_.window;
  for (auto it = events_.begin(); it != events_.end();) {
    std::deque<Event>& events = it->second;
    while (!events.empty() && events.front().time < horizon) events.pop_front();
    it = events.empty() ? events_.erase(it) : std::next(it);
  }
}

void SeriesStore::AddEvent(Event event) {
  std::lock_guard lock(mutex_);
  std::deque<Event>& events = events_[event.scope];
  if (std::find(events.begin(), events.end(), event) != events.end()) return;
  // Kept in time order: decisions usually arrive in order, so this is the end.
  auto at = std::upper_bound(events.begin(), events.end(), event.time,
                             [](TimePoint t, const Event& e) { return t < e.time; });
  events.insert(at, std::move(event));
  while (events.size() > options_.max_events_per_scope) events.pop_front();
}

HistoryRange SeriesStore::Read(std::string_view scope_prefix, TimePoint since) const {
  std::lock_guard lock(mutex_);
  HistoryRange range;
  uint64_t first = next_ > capacity_ ? next_ - capacity_ : 0;
  while (first < next_ && times_[first % capacity_] < since) ++first;
  for (uint64_t s = first; s < next_; ++s) range.times.push_back(times_[s % capacity_]);
  for (auto it = series_.lower_bound(std::string(scope_prefix)); it != series_.end(); ++it) {
    const Series& series = it->second;
    if (!series.scope.starts_with(scope_prefix)) break;
    if (!InScope(series.scope, scope_prefix) || series.last < first) continue;
    HistoryRange::Series& out = range.series.emplace_back(
        HistoryRange::Series{series.scope, series.name, series.labels, std::vector<double>()});
    out.values.reserve(next_ - first);
    for (uint64_t s = first; s < next_; ++s) {
      const bool held = s >= series.first && s <= series.last;
      out.values.push_back(held ? series.values[s % capacity_] : std::nan(""));
    }
  }
  for (auto it = events_.lower_bound(std::string(scope_prefix)); it != events_.end(); ++it) {
    if (!it->first.starts_with(scope_prefix)) break;
    if (!InScope(it->first, scope_prefix)) continue;
    for (const Event& event : it->second) {
      if (event.time >= since) range.events.push_back(event);
    }
  }
  std::stable_sort(range.events.begin(), range.events.end(),
                   [](const Event& a, const Event& b) { return a.time < b.time; });
  return range;
}

size_t SeriesStore::MemoryBytes() const {
  std::lock_guard lock(mutex_);
  // A std::map node: the value plus three pointers and a colour.
  constexpr size_t kNode = 4 * sizeof(void*);
  size_t bytes = times_.capacity() * sizeof(TimePoint);
  for (const auto& [key, series] : series_) {
    bytes += kNode + sizeof(key) + key.capacity() + sizeof(Series) + series.scope.capacity() +
             series.name.capacity() + LabelsBytes(series.labels) +
             series.values.capacity() * sizeof(float);
  }
  for (const auto& [scope, events] : events_) {
    bytes += kNode + sizeof(scope) + scope.capacity() + sizeof(events);
    for (const Event& event : events) {
      bytes += sizeof(Event) + event.scope.capacity() + event.kind.capacity();
      for (const auto& [name, value] : event.fields) {
        bytes += kNode + 2 * sizeof(std::string) + name.capacity() + value.capacity();
      }
    }
  }
  return bytes;
}

size_t SeriesStore::SeriesCount() const {
  std::lock_guard lock(mutex_);
  return series_.size();
}

uint64_t SeriesStore::DroppedReadings() const {
  std::lock_guard lock(mutex_);
  return dropped_;
}

}  // namespace strata::history
