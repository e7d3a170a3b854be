#include "server/cluster_metrics.h"

#include <algorithm>
#include <string>
#include <vector>

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

std::vector<std::string> CountedKinds() {
  std::vector<std::string> kinds;
  for (const ResourceType& type : AllResourceTypes()) kinds.emplace_back(type.kind);
  return kinds;
}

}  // namespace

// table_ as the follower fills it: every counted kind's objects, and the relists counted.
class ClusterMetrics::FollowedTable final : public telemetry::FollowedObjects {
 public:
  explicit FollowedTable(StoreStateStats& stats) : stats_(stats) {}

  void Clear() override { table.Clear(); }
  void Put(store::Object object) override { table.Put(object); }
  void Remove(const store::Object& object) override { table.Remove(object.key); }
  void Relisted() override { stats_.state_relists_total.With().Increment(); }

  ClusterStateTable table;

 private:
  StoreStateStats& stats_;
};

ClusterMetrics::ClusterMetrics(store::Store& store, telemetry::Registry& registry,
                               ClusterMetricsOptions options)
    : queues_(registry, "queue"),
      scheduler_(registry, "scheduler"),
      pods_(registry, "pods"),
      store_state_(registry, "apiserver"),
      table_(std::make_unique<FollowedTable>(store_state_)),
      follower_(store, CountedKinds(), options.watch_buffer, *table_) {}

ClusterMetrics::~ClusterMetrics() = default;

Status ClusterMetrics::Refresh() {
  return follower_.Read([this] { PublishLocked(); });
}

void ClusterMetrics::PublishLocked() {
  const ClusterStateTable& table = table_->table;
  SeriesValues nominal;
  SeriesValues used;
  SeriesValues borrowed;
  for (const QueueUsage& queue : table.QueueUsages()) {
    for (const auto& [resource, usage] : queue.resources) {
      nominal[{queue.name, resource}] = Units(usage.nominal);
      used[{queue.name, resource}] = Units(usage.used);
      borrowed[{queue.name, resource}] = Units(usage.borrowed);
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
}

}  // namespace strata::server
