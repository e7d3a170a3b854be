#include "server/cluster_metrics.h"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "api/resource_catalog.h"

namespace strata::server {
namespace {

double Units(const Quantity& quantity) { return static_cast<double>(quantity.milli()) / 1000.0; }

// Sets every child of `family` to the value `values` gives it, zeroes the other ones when
// `keep_zero`, or else removes them.
void Publish(metrics::GaugeFamily& family, const SeriesValues& values, bool keep_zero) {
  std::vector<SeriesLabels> existing;
  family.ForEach(
      [&](const SeriesLabels& labels, const metrics::Gauge&) { existing.push_back(labels); });
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

ClusterMetrics::ClusterMetrics(cluster::Cache& cache, metrics::Registry& registry)
    : cache_(cache),
      queues_(registry, "queue"),
      scheduler_(registry, "scheduler"),
      pods_(registry, "pods"),
      store_state_(registry, "apiserver") {}

Status ClusterMetrics::Refresh() {
  if (Status synced = cache_.Sync(); !synced.ok()) return synced;
  std::lock_guard lock(mutex_);
  std::set<std::string> kinds;
  for (const api::ResourceType& type : api::AllResourceTypes()) kinds.emplace(type.kind);
  cluster::Changes changes = cache_.ChangesSince(cursor_, kinds);
  cursor_ = changes.cursor;
  if (changes.resync) table_.Clear();
  for (const cluster::Change& change : changes.changes) {
    if (change.current) {
      table_.Put(*change.current);
    } else {
      table_.Remove(change.key);
    }
  }
  PublishLocked();
  return Status::Ok();
}

void ClusterMetrics::PublishLocked() {
  const ClusterStateTable& table = table_;
  SeriesValues nominal;
  SeriesValues used;
  SeriesValues borrowed;
  for (const auto& [queue, resources] : table.QueueUsages()) {
    for (const auto& [resource, usage] : resources) {
      nominal[{queue, resource}] = Units(usage.nominal);
      used[{queue, resource}] = Units(usage.used);
      borrowed[{queue, resource}] = Units(usage.borrowed);
    }
  }
  Publish(queues_.nominal_quota, nominal, false);
  Publish(queues_.usage, used, false);
  Publish(queues_.borrowed, borrowed, false);

  const ClusterStateTable::PendingCounts pending = table.Pending();
  Publish(queues_.pending_workloads, pending.by_queue, true);
  Publish(scheduler_.pending_workloads, pending.by_reason, true);

  const ClusterTotals totals = table.Totals();
  const SeriesValues phases = ByOneLabel(totals.pods_by_phase);
  Publish(pods_.by_phase, phases, true);
  Publish(store_state_.pods, phases, true);
  Publish(store_state_.objects, ByOneLabel(totals.objects_by_kind), true);
  store_state_.gpus.With({"held"}).Set(static_cast<double>(totals.gpus_held));
  store_state_.gpus.With({"free"}).Set(
      static_cast<double>(std::max<int64_t>(0, totals.gpus_total - totals.gpus_held)));
  store_state_.state_lists.With().Set(static_cast<double>(cache_.lists()));
}

}  // namespace strata::server
