#include "server/cluster_metrics.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <optional>

#include "server/resource_catalog.h"

namespace strata::server {
namespace {

double Units(const Quantity& quantity) { return static_cast<double>(quantity.milli()) / 1000.0; }

// Sets every child of `family` to the value `values` gives it, zeroes the other ones when
// `keep_zero`, or else removes them.
void Publish(telemetry::GaugeFamily& family, const SeriesValues& values, bool keep_zero) {
  std::vector<SeriesLabels> existing;
  family.ForEach(
      [&](const SeriesLabels& labels, const telemetry::Gauge&) { existing.push_back(labels); });
  for (const SeriesLabels& labels : existing) {
    if (values.count(labels) != 0) continue;
    if (keep_zero) {
      family.With(labels).Set(0);
    } else {
      family.Remove(labels);
    }
  }
  for (const auto& [labels, value] : values) family.With(labels).Set(value);
}

SeriesValues ByOneLabel(const std::map<std::string, int64_t>& counts) {
  SeriesValues values;
  for (const auto& [label, count] : counts) values[{label}] = static_cast<double>(count);
  return values;
}

}  // namespace

ClusterMetrics::ClusterMetrics(store::Store& store, telemetry::Registry& registry,
                               ClusterMetricsOptions options)
    : store_(store),
      options_(options),
      queues_(registry, "queue"),
      scheduler_(registry, "scheduler"),
      pods_(registry, "pods"),
      store_state_(registry, "apiserver") {}

ClusterMetrics::~ClusterMetrics() {
  {
    std::lock_guard wake(wake_mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (follower_.joinable()) follower_.join();
  // The watcher's callback touches the wake members, which are destroyed before watcher_ would
  // be; once the watcher is gone, the callback never runs again.
  std::lock_guard lock(mutex_);
  watcher_.reset();
}

Status ClusterMetrics::Refresh() {
  std::lock_guard lock(mutex_);
  if (Status drained = DrainLocked(store_.CurrentVersion()); !drained.ok()) return drained;
  if (!follower_.joinable()) follower_ = std::thread([this] { Follow(); });

  SeriesValues nominal;
  SeriesValues used;
  SeriesValues borrowed;
  for (const QueueUsage& queue : table_.QueueUsages()) {
    for (const auto& [resource, usage] : queue.resources) {
      nominal[{queue.name, resource}] = Units(usage.nominal);
      used[{queue.name, resource}] = Units(usage.used);
      borrowed[{queue.name, resource}] = Units(usage.borrowed);
    }
  }
  Publish(queues_.nominal_quota, nominal, false);
  Publish(queues_.usage, used, false);
  Publish(queues_.borrowed, borrowed, false);

  const ClusterStateTable::PendingCounts pending = table_.Pending();
  Publish(queues_.pending_workloads, pending.by_queue, true);
  Publish(scheduler_.pending_workloads, pending.by_reason, true);

  const ClusterTotals totals = table_.Totals();
  const SeriesValues phases = ByOneLabel(totals.pods_by_phase);
  Publish(pods_.by_phase, phases, true);
  Publish(store_state_.pods, phases, true);
  Publish(store_state_.objects, ByOneLabel(totals.objects_by_kind), true);
  store_state_.gpus.With({"held"}).Set(static_cast<double>(totals.gpus_held));
  store_state_.gpus.With({"free"}).Set(
      static_cast<double>(std::max<int64_t>(0, totals.gpus_total - totals.gpus_held)));
  return Status::Ok();
}

Status ClusterMetrics::DrainLocked(int64_t up_to) {
  while (true) {
    if (watcher_ == nullptr) {
      if (Status listed = RelistLocked(); !listed.ok()) return listed;
    }
    Result<std::optional<store::WatchEvent>> next = watcher_->TryNext();
    if (!next) {
      // Expired: the watch fell behind and dropped what it held; list again.
      watcher_.reset();
      continue;
    }
    if (!next->has_value()) return Status::Ok();
    const store::WatchEvent& event = **next;
    const store::Object& object = event.object;
    // A kind the table does not count, or a change its list already holds.
    auto listed = listed_versions_.find(object.key.kind);
    if (listed == listed_versions_.end() || object.resource_version <= listed->second) continue;
    if (event.type == store::WatchEventType::kDeleted) {
      table_.Remove(object.key);
    } else {
      table_.Put(object);
    }
    if (object.resource_version >= up_to) return Status::Ok();
  }
}

Status ClusterMetrics::RelistLocked() {
  watcher_.reset();
  table_.Clear();
  listed_versions_.clear();
  store::WatchOptions watch;
  watch.buffer_limit = options_.watch_buffer;
  // Watching before listing: whatever changes after a kind's list is in the watch.
  Result<std::unique_ptr<store::Watcher>> watcher = store_.Watch(watch);
  if (!watcher) return watcher.error();
  for (const ResourceType& type : AllResourceTypes()) {
    Result<store::ListResult> listed = store_.List({std::string(type.kind), std::nullopt, {}});
    if (!listed) return listed.error();
    for (const store::Object& object : listed->items) table_.Put(object);
    listed_versions_[std::string(type.kind)] = listed->resource_version;
  }
  store_state_.state_relists_total.With().Increment();
  (*watcher)->SetNotify([this] {
    {
      std::lock_guard wake(wake_mutex_);
      changes_waiting_ = true;
    }
    wake_.notify_one();
  });
  watcher_ = std::move(*watcher);
  return Status::Ok();
}

void ClusterMetrics::Follow() {
  while (true) {
    {
      std::unique_lock wake(wake_mutex_);
      wake_.wait(wake, [&] { return stopping_ || changes_waiting_; });
      if (stopping_) return;
      changes_waiting_ = false;
    }
    // Drains in steps up to the version current when woken, so a scrape waiting for mutex_ is
    // never held back by a stream of writes.
    std::lock_guard lock(mutex_);
    if (watcher_ == nullptr) continue;  // the next Refresh lists again
    Status drained = DrainLocked(store_.CurrentVersion());
    if (!drained.ok()) {
      spdlog::warn("cluster metrics: listing the store failed ({}); the next scrape retries",
                   drained.ToString());
    }
  }
}

}  // namespace strata::server
