#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace strata::telemetry {

// A monotonically increasing value (Prometheus "counter"). Owned by its MetricFamily, which
// outlives every reference handed out. Thread-safe: increments are one relaxed atomic add, no
// lock, so a hot path keeps a `Counter&` and calls Increment.
class Counter {
 public:
  // REQUIRES: amount >= 0 (a counter never goes down).
  void Increment(double amount = 1.0);
  double Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0.0};
};

// A value that goes up and down (Prometheus "gauge"). Owned by its MetricFamily. Thread-safe,
// lock-free.
class Gauge {
 public:
  void Set(double value) { value_.store(value, std::memory_order_relaxed); }
  void Add(double delta) { value_.fetch_add(delta, std::memory_order_relaxed); }
  double Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0.0};
};

// A distribution over explicit, increasing bucket upper bounds (Prometheus "histogram"); the
// +Inf bucket is implicit. Owned by its MetricFamily. Thread-safe, lock-free: Observe is a
// binary search over the bounds and three relaxed atomic adds. A concurrent reader may see a
// count and a sum from slightly different instants, as with every Prometheus client.
class Histogram {
 public:
  // REQUIRES: `upper_bounds` strictly increasing and finite.
  explicit Histogram(std::vector<double> upper_bounds);

  void Observe(double value);

  const std::vector<double>& UpperBounds() const { return upper_bounds_; }
  // Cumulative counts, one per upper bound, then the +Inf bucket (== Count()).
  std::vector<uint64_t> CumulativeCounts() const;
  uint64_t Count() const { return count_.load(std::memory_order_relaxed); }
  double Sum() const { return sum_.load(std::memory_order_relaxed); }

 private:
  std::vector<double> upper_bounds_;
  // Non-cumulative: bucket i counts values in (bound[i-1], bound[i]]; the last is +Inf.
  std::unique_ptr<std::atomic<uint64_t>[]> buckets_;
  std::atomic<uint64_t> count_{0};
  std::atomic<double> sum_{0.0};
};

enum class MetricType { kCounter, kGauge, kHistogram };

// The Prometheus TYPE word: "counter", "gauge", "histogram".
std::string_view MetricTypeName(MetricType type);

// One metric name with its help text and label names, and one child metric per distinct set of
// label values. Owned by the Registry. Thread-safe: With() takes a lock to find or create the
// child (do it once, keep the reference); the child itself is lock-free.
template <typename Metric>
class MetricFamily {
 public:
  MetricFamily(std::string name, std::string help, std::vector<std::string> label_names,
               std::vector<double> upper_bounds)
      : name_(std::move(name)),
        help_(std::move(help)),
        label_names_(std::move(label_names)),
        upper_bounds_(std::move(upper_bounds)) {}

  // The child for `label_values`, created at zero on first use. The reference stays valid for
  // the family's lifetime. REQUIRES: one value per label name (a programming error otherwise:
  // crashes).
  Metric& With(const std::vector<std::string>& label_values = {});

  // Removes the child for `label_values` (e.g. an endpoint that left), so it is no longer
  // exported. REQUIRES: no reference to that child is used afterwards.
  void Remove(const std::vector<std::string>& label_values);

  const std::string& name() const { return name_; }
  const std::string& help() const { return help_; }
  const std::vector<std::string>& label_names() const { return label_names_; }

  // Calls visit(label_values, metric) for every child, in label-value order, under the lock.
  template <typename Visit>
  void ForEach(Visit&& visit) const {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& [values, metric] : children_) visit(values, *metric);
  }

 private:
  std::unique_ptr<Metric> MakeChild() const;

  const std::string name_;
  const std::string help_;
  const std::vector<std::string> label_names_;
  const std::vector<double> upper_bounds_;  // histograms only
  mutable std::mutex mutex_;
  std::map<std::vector<std::string>, std::unique_ptr<Metric>> children_;
};

using CounterFamily = MetricFamily<Counter>;
using GaugeFamily = MetricFamily<Gauge>;
using HistogramFamily = MetricFamily<Histogram>;

// Which families a rendering of a Registry includes: every family, or only those named (a
// `/metrics?families=A,B` read). A value; thread-compatible.
class FamilySelection {
 public:
  // Every family.
  FamilySelection() = default;
  // Only the families named in `names`; an empty set selects none.
  explicit FamilySelection(std::set<std::string, std::less<>> names) : names_(std::move(names)) {}

  bool IncludesEverything() const { return !names_.has_value(); }
  bool Includes(std::string_view family) const;
  // Whether any of `families` is included.
  bool IncludesAnyOf(const std::vector<std::string>& families) const;

 private:
  std::optional<std::set<std::string, std::less<>>> names_;
};

// Appends whole families (HELP, TYPE and samples, in Prometheus text) to `out` at render time;
// `wanted` says which ones the rendering includes, so that a collector may skip the work of the
// others (the registry drops any it appends anyway).
using Collector = std::function<void(const FamilySelection& wanted, std::string& out)>;

// The set of metric families a process (or a component) exports, rendered as Prometheus text
// exposition format 0.0.4. Owned by whoever serves /metrics; components register their families
// at construction (see stats.h). Thread-safe.
//
// Names follow Prometheus' rules ([a-zA-Z_:][a-zA-Z0-9_:]*; label names without ':'); a bad
// name, or registering one name twice with a different type or labels, is a programming error
// and crashes. Registering the same name again with the same shape returns the existing family.
class Registry {
 public:
  CounterFamily& AddCounter(std::string_view name, std::string_view help,
                            std::vector<std::string> label_names = {});
  GaugeFamily& AddGauge(std::string_view name, std::string_view help,
                        std::vector<std::string> label_names = {});
  // REQUIRES: `upper_bounds` strictly increasing and finite.
  HistogramFamily& AddHistogram(std::string_view name, std::string_view help,
                                std::vector<std::string> label_names,
                                std::vector<double> upper_bounds);

  // Adds `collect`, which appends the families named in `families`, computed at render time,
  // for figures too many or too short-lived for registered children (one series per GPU of a
  // cluster). A rendering runs it only when it includes one of `families`. Collectors run in the
  // order added, after the registered families, without the registry's lock held; each must be
  // thread-safe and must not call back into this registry.
  //
  // REQUIRES: `families` is not empty; they are valid names, none of them a registered family. A
  // collector that appends a family it did not declare is a programming error: the rendering
  // crashes, naming the family.
  void AddCollector(std::vector<std::string> families, Collector collect);

  // Every family in name order: "# HELP", "# TYPE", then one line per sample; then what the
  // collectors append.
  std::string RenderText() const { return RenderText(FamilySelection()); }
  // The same text with only the families `wanted` includes; collectors none of whose families
  // it includes are not run.
  std::string RenderText(const FamilySelection& wanted) const;

 private:
  struct Entry {
    MetricType type;
    std::unique_ptr<CounterFamily> counter;
    std::unique_ptr<GaugeFamily> gauge;
    std::unique_ptr<HistogramFamily> histogram;
  };
  struct DeclaredCollector {
    std::vector<std::string> families;
    Collector collect;
  };
  Entry& FindOrAdd(MetricType type, std::string_view name, std::string_view help,
                   const std::vector<std::string>& label_names,
                   const std::vector<double>& upper_bounds);

  mutable std::mutex mutex_;
  std::map<std::string, Entry, std::less<>> families_;
  std::vector<DeclaredCollector> collectors_;
};

// Bucket bounds: `count` values start, start*factor, start*factor^2, ...
// REQUIRES: start > 0, factor > 1, count >= 1.
std::vector<double> ExponentialBuckets(double start, double factor, int count);

}  // namespace strata::telemetry
