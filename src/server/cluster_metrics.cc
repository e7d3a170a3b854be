#include "server/cluster_metrics.h"

#include <map>
#include <set>

#include "server/json_fields.h"
#include "server/queue_usage.h"

namespace strata::server {
namespace {

using Json = nlohmann::json;
using LabelValues = std::vector<std::string>;

// Sets every child of `family` to the value `values` gives it, zeroes the other ones when
// `keep_zero`, or else removes them.
void Publish(telemetry::GaugeFamily& family, const std::map<LabelValues, double>& values,
             bool keep_zero) {
  std::vector<LabelValues> existing;
  family.ForEach(
      [&](const LabelValues& labels, const telemetry::Gauge&) { existing.push_back(labels); });
  for (const LabelValues& labels : existing) {
    if (values.count(labels) != 0) continue;
    if (keep_zero) {
      family.With(labels).Set(0);
    } else {
      family.Remove(labels);
    }
  }
  for (const auto& [labels, value] : values) family.With(labels).Set(value);
}

double Units(const Quantity& quantity) { return static_cast<double>(quantity.milli()) / 1000.0; }

std::string PendingReason(const Json& object) {
  return TextAt(object, "/status/reason", "NotYetScheduled");
}

}  // namespace

ClusterMetrics::ClusterMetrics(telemetry::Registry& registry)
    : queues_(registry, "queue"), scheduler_(registry, "scheduler"), pods_(registry, "pods") {}

void ClusterMetrics::Update(const std::vector<Json>& queues, const std::vector<Json>& jobs,
                            const std::vector<Json>& pods) {
  std::map<LabelValues, double> nominal;
  std::map<LabelValues, double> used;
  std::map<LabelValues, double> borrowed;
  for (const QueueUsage& queue : ComputeQueueUsage(queues, pods)) {
    for (const auto& [resource, usage] : queue.resources) {
      nominal[{queue.name, resource}] = Units(usage.nominal);
      used[{queue.name, resource}] = Units(usage.used);
      borrowed[{queue.name, resource}] = Units(usage.borrowed);
    }
  }
  Publish(queues_.nominal_quota, nominal, false);
  Publish(queues_.usage, used, false);
  Publish(queues_.borrowed, borrowed, false);

  QueueResolver resolver(queues);
  std::map<LabelValues, double> by_queue;
  std::map<LabelValues, double> by_reason;
  auto count = [&](const Json& workload) {
    std::string reason = PendingReason(workload);
    ++by_reason[{reason}];
    std::string queue =
        resolver.Resolve(TextAt(workload, "/metadata/namespace"), TextAt(workload, "/spec/queue"));
    if (!queue.empty()) ++by_queue[{queue, reason}];
  };
  for (const Json& job : jobs) {
    if (TextAt(job, "/status/phase", "Pending") == "Pending") count(job);
  }
  for (const Json& pod : pods) {
    if (TextAt(pod, "/spec/owner/kind") == "Job") continue;  // counted as its job
    if (TextAt(pod, "/spec/nodeName").empty() &&
        TextAt(pod, "/status/phase", "Pending") == "Pending") {
      count(pod);
    }
  }
  Publish(queues_.pending_workloads, by_queue, true);
  Publish(scheduler_.pending_workloads, by_reason, true);

  std::map<LabelValues, double> by_phase = {
      {{"Pending"}, 0}, {{"Running"}, 0}, {{"Succeeded"}, 0}, {{"Failed"}, 0}};
  for (const Json& pod : pods) ++by_phase[{TextAt(pod, "/status/phase", "Pending")}];
  Publish(pods_.by_phase, by_phase, true);
}

}  // namespace strata::server
