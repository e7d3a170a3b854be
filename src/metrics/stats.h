#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "metrics/metrics.h"

// One stats struct per component, declared once with an X-macro (Envoy's idea), so that the
// names, help texts, label names and buckets live in one list. A component writes (each line of
// the #define continued with a backslash):
//
//   #define STRATA_GATEWAY_STATS(COUNTER, GAUGE, HISTOGRAM)
//     COUNTER(requests_total, "Requests received, by model and code.", "model", "code")
//     GAUGE(in_flight_requests, "Requests being served.")
//     HISTOGRAM(ttft_seconds, "Time to first token.", LatencyBuckets(), "model")
//   STRATA_DECLARE_STATS(GatewayStats, STRATA_GATEWAY_STATS);
//
// and `GatewayStats stats(registry, "gateway");` registers `strata_gateway_requests_total`
// (counter, labels model and code), `strata_gateway_in_flight_requests` and
// `strata_gateway_ttft_seconds`. Members are the families: `stats.requests_total.With({"m",
// "200"}).Increment();`. Names follow Prometheus' conventions: the entry's name carries the
// unit and `_total` for counters.
//
// `GatewayStats::FamilyNames("gateway")` lists those names without a registry, for a collector
// that appends another registry's rendering of them (Registry::AddCollector).
//
// The struct holds references into `registry`, which must outlive it. Thread-safe as the
// families are.

namespace strata::metrics {

// "strata_<component>_<name>".
inline std::string StatName(std::string_view component, std::string_view name) {
  return "strata_" + std::string(component) + "_" + std::string(name);
}

}  // namespace strata::metrics

#define STRATA_STATS_COUNTER_MEMBER(name, help, ...) ::strata::metrics::CounterFamily& name;
#define STRATA_STATS_GAUGE_MEMBER(name, help, ...) ::strata::metrics::GaugeFamily& name;
#define STRATA_STATS_HISTOGRAM_MEMBER(name, help, buckets, ...) \
  ::strata::metrics::HistogramFamily& name;

#define STRATA_STATS_COUNTER_INIT(name, help, ...)                                   \
  name(registry.AddCounter(::strata::metrics::StatName(component_name, #name), help, \
                           {__VA_ARGS__})),
#define STRATA_STATS_GAUGE_INIT(name, help, ...) \
  name(registry.AddGauge(::strata::metrics::StatName(component_name, #name), help, {__VA_ARGS__})),
#define STRATA_STATS_HISTOGRAM_INIT(name, help, buckets, ...)                          \
  name(registry.AddHistogram(::strata::metrics::StatName(component_name, #name), help, \
                             {__VA_ARGS__}, buckets)),

#define STRATA_STATS_FAMILY_NAME(name, ...) ::strata::metrics::StatName(component_name, #name),

#define STRATA_DECLARE_STATS(StructName, ALL_STATS)                                    \
  struct StructName {                                                                  \
    StructName(::strata::metrics::Registry& registry, std::string_view component_name) \
        : ALL_STATS(STRATA_STATS_COUNTER_INIT, STRATA_STATS_GAUGE_INIT,                \
                    STRATA_STATS_HISTOGRAM_INIT) component(component_name) {}          \
    static std::vector<std::string> FamilyNames(std::string_view component_name) {     \
      return {ALL_STATS(STRATA_STATS_FAMILY_NAME, STRATA_STATS_FAMILY_NAME,            \
                        STRATA_STATS_FAMILY_NAME)};                                    \
    }                                                                                  \
    ALL_STATS(STRATA_STATS_COUNTER_MEMBER, STRATA_STATS_GAUGE_MEMBER,                  \
              STRATA_STATS_HISTOGRAM_MEMBER)                                           \
    const std::string component;                                                       \
  }
