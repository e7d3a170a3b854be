#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>

#include "gateway/config.h"
#include "gateway/gateway_stats.h"
#include "gateway/picker.h"
#include "gateway/routing_table.h"
#include "gateway/tenant_table.h"

namespace strata::gateway {

// Who a request's metrics are labelled with: its model version (null while not known: labels
// "" for model and version) and its tenant (null while not known or when the gateway has no
// tenants: label "-"). The request keeps both objects alive.
struct RequestLabelIds {
  const VersionCounters* version = nullptr;
  const TenantEntry* tenant = nullptr;
};

// The metric children one event loop updates per request, each found in its family once (a
// family's WithPart() takes a lock and builds label strings) and kept by the loop afterwards, so
// the request path only does relaxed atomic adds, on the loop's own part of each child
// (MetricFamily::WithPart): no cache line moves between the loops' cores. The families stay
// shared: /metrics renders the parts' sums. Owned by one event loop (a Worker); not thread-safe.
// `stats` must outlive it.
class LoopStats {
 public:
  // `loop`: the loop's index, the part of each child it updates.
  LoopStats(GatewayStats& stats, size_t loop);

  metrics::Counter& Requests(const RequestLabelIds& ids, int code);
  metrics::Counter& Picks(const RequestLabelIds& ids, PickReason reason);
  metrics::Counter& Priorities(const RequestLabelIds& ids, PriorityClass priority);
  // `completion` false: prompt tokens.
  metrics::Counter& Tokens(const RequestLabelIds& ids, bool completion);
  metrics::Histogram& Ttft(const RequestLabelIds& ids);
  metrics::Histogram& Tpot(const RequestLabelIds& ids);
  metrics::Histogram& E2e(const RequestLabelIds& ids);
  metrics::Histogram& QueueSeconds(const RequestLabelIds& ids);

 private:
  // Which family a cached child belongs to, and its label indices.
  struct Key {
    int family;
    uint64_t version;  // VersionCounters::serial, 0 when unlabelled
    uint64_t tenant;   // TenantEntry::id, 0 when unlabelled
    int64_t extra;     // HTTP code, pick reason, token kind or priority class
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& key) const;
  };

  static uint64_t VersionKey(const RequestLabelIds& ids);
  static std::string ModelName(const RequestLabelIds& ids);
  static std::string VersionName(const RequestLabelIds& ids);
  static uint64_t TenantKey(const RequestLabelIds& ids);
  static std::string TenantName(const RequestLabelIds& ids);
  // A histogram labelled by model and version, of `family` (which `metric` is).
  metrics::Histogram& VersionHistogram(int family, metrics::HistogramFamily& metric,
                                       const RequestLabelIds& ids);
  template <typename Metric, typename Make>
  Metric& Find(std::unordered_map<Key, Metric*, KeyHash>& cache, const Key& key, Make make);

  GatewayStats& stats_;
  const size_t loop_;
  std::unordered_map<Key, metrics::Counter*, KeyHash> counters_;
  std::unordered_map<Key, metrics::Histogram*, KeyHash> histograms_;
};

}  // namespace strata::gateway
