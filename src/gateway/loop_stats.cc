#include "gateway/loop_stats.h"

#include <functional>

namespace strata::gateway {
namespace {

enum Family { kRequests, kPicks, kPriorities, kTokens, kTtft, kTpot, kE2e, kQueue };

}  // namespace

size_t LoopStats::KeyHash::operator()(const Key& key) const {
  size_t hash = std::hash<int64_t>{}(key.extra);
  for (size_t part : {static_cast<size_t>(key.family), static_cast<size_t>(key.version),
                      static_cast<size_t>(key.tenant)}) {
    hash = hash * 1000003 ^ std::hash<size_t>{}(part);
  }
  return hash;
}

LoopStats::LoopStats(GatewayStats& stats, size_t loop) : stats_(stats), loop_(loop) {}

uint64_t LoopStats::VersionKey(const RequestLabelIds& ids) {
  return ids.version == nullptr ? 0 : ids.version->serial;
}

std::string LoopStats::ModelName(const RequestLabelIds& ids) {
  return ids.version == nullptr ? "" : ids.version->model;
}

std::string LoopStats::VersionName(const RequestLabelIds& ids) {
  return ids.version == nullptr ? "" : ids.version->version;
}

uint64_t LoopStats::TenantKey(const RequestLabelIds& ids) {
  return ids.tenant == nullptr ? 0 : ids.tenant->id;
}

std::string LoopStats::TenantName(const RequestLabelIds& ids) {
  return ids.tenant == nullptr ? "-" : ids.tenant->name;
}

template <typename Metric, typename Make>
Metric& LoopStats::Find(std::unordered_map<Key, Metric*, KeyHash>& cache, const Key& key,
                        Make make) {
  auto it = cache.find(key);
  if (it == cache.end()) it = cache.emplace(key, &make()).first;
  return *it->second;
}

metrics::Counter& LoopStats::Requests(const RequestLabelIds& ids, int code) {
  return Find(
      counters_, Key{kRequests, VersionKey(ids), TenantKey(ids), code}, [&]() -> auto& {
        return stats_.requests_total.WithPart(
            {ModelName(ids), VersionName(ids), TenantName(ids), std::to_string(code)}, loop_);
      });
}

metrics::Counter& LoopStats::Picks(const RequestLabelIds& ids, PickReason reason) {
  return Find(
      counters_, Key{kPicks, VersionKey(ids), 0, static_cast<int64_t>(reason)}, [&]() -> auto& {
        return stats_.picks_total.WithPart(
            {ModelName(ids), VersionName(ids), std::string(PickReasonName(reason))}, loop_);
      });
}

metrics::Counter& LoopStats::Priorities(const RequestLabelIds& ids, PriorityClass priority) {
  return Find(
      counters_,
      Key{kPriorities, VersionKey(ids), 0, static_cast<int64_t>(priority)}, [&]() -> auto& {
        return stats_.priority_requests_total.WithPart(
            {ModelName(ids), VersionName(ids), std::string(PriorityClassName(priority))}, loop_);
      });
}

metrics::Counter& LoopStats::Tokens(const RequestLabelIds& ids, bool completion) {
  return Find(
      counters_, Key{kTokens, VersionKey(ids), TenantKey(ids), completion ? 1 : 0}, [&]() -> auto& {
        return stats_.tokens_total.WithPart(
            {ModelName(ids), TenantName(ids), completion ? "completion" : "prompt"}, loop_);
      });
}

metrics::Histogram& LoopStats::VersionHistogram(int family, metrics::HistogramFamily& metric,
                                                const RequestLabelIds& ids) {
  return Find(
      histograms_, Key{family, VersionKey(ids), 0, 0}, [&]() -> auto& {
        return metric.WithPart({ModelName(ids), VersionName(ids)}, loop_);
      });
}

metrics::Histogram& LoopStats::Ttft(const RequestLabelIds& ids) {
  return VersionHistogram(kTtft, stats_.ttft_seconds, ids);
}

metrics::Histogram& LoopStats::Tpot(const RequestLabelIds& ids) {
  return VersionHistogram(kTpot, stats_.tpot_seconds, ids);
}

metrics::Histogram& LoopStats::E2e(const RequestLabelIds& ids) {
  return VersionHistogram(kE2e, stats_.e2e_seconds, ids);
}

metrics::Histogram& LoopStats::QueueSeconds(const RequestLabelIds& ids) {
  return Find(
      histograms_, Key{kQueue, 0, TenantKey(ids), 0}, [&]() -> auto& {
        return stats_.queue_seconds.WithPart({TenantName(ids)}, loop_);
      });
}

}  // namespace strata::gateway
