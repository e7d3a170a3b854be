#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>

#include "gateway/config.h"
#include "gateway/gateway_stats.h"
#include "gateway/picker.h"

namespace strata::gateway {

// Who a request's metrics are labelled with: indices into GatewayConfig::models, its versions
// and GatewayConfig::tenants, kUnlabelled while not known (labels "" for model and version,
// "-" for the tenant).
struct RequestLabelIds {
  static constexpr size_t kUnlabelled = SIZE_MAX;
  size_t model = kUnlabelled;
  size_t version = kUnlabelled;
  size_t tenant = kUnlabelled;
};

// The metric children one event loop updates per request, each found in its family once (a
// family's With() takes a lock and builds label strings) and kept by the loop afterwards, so the
// request path only does relaxed atomic adds. The families stay shared: /metrics renders them
// as before. Owned by one event loop (a Worker); not thread-safe. `stats` and `config` must
// outlive it.
class LoopStats {
 public:
  LoopStats(GatewayStats& stats, const GatewayConfig& config);

  telemetry::Counter& Requests(const RequestLabelIds& ids, int code);
  telemetry::Counter& Picks(const RequestLabelIds& ids, PickReason reason);
  // `completion` false: prompt tokens.
  telemetry::Counter& Tokens(const RequestLabelIds& ids, bool completion);
  telemetry::Histogram& Ttft(const RequestLabelIds& ids);
  telemetry::Histogram& Tpot(const RequestLabelIds& ids);
  telemetry::Histogram& E2e(const RequestLabelIds& ids);
  telemetry::Histogram& QueueSeconds(const RequestLabelIds& ids);

 private:
  // Which family a cached child belongs to, and its label indices.
  struct Key {
    int family;
    size_t model, version, tenant;
    int64_t extra;  // HTTP code, pick reason or token kind
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& key) const;
  };

  std::string ModelName(const RequestLabelIds& ids) const;
  std::string VersionName(const RequestLabelIds& ids) const;
  std::string TenantName(const RequestLabelIds& ids) const;
  // A histogram labelled by model and version, of `family` (which `metric` is).
  telemetry::Histogram& VersionHistogram(int family, telemetry::HistogramFamily& metric,
                                         const RequestLabelIds& ids);
  template <typename Metric, typename Make>
  Metric& Find(std::unordered_map<Key, Metric*, KeyHash>& cache, const Key& key, Make make);

  GatewayStats& stats_;
  const GatewayConfig& config_;
  std::unordered_map<Key, telemetry::Counter*, KeyHash> counters_;
  std::unordered_map<Key, telemetry::Histogram*, KeyHash> histograms_;
};

}  // namespace strata::gateway
