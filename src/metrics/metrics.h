#pragma once

#include <array>
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
#include <type_traits>
#include <vector>

namespace strata::metrics {

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

  // Adds `other`'s observations to this histogram's. REQUIRES: the same upper bounds.
  void Add(const Histogram& other);

 private:
  // Bucket counts in blocks a cache-line pair apart, so that no other object's memory shares
  // their lines (a histogram's parts, see MetricFamily::WithPart, are updated by different
  // threads).
  static constexpr size_t kBucketsPerBlock = 16;
  struct alignas(128) BucketBlock {
    std::array<std::atomic<uint64_t>, kBucketsPerBlock> counts{};
  };
  std::atomic<uint64_t>& Bucket(size_t i) const {
    return blocks_[i / kBucketsPerBlock].counts[i % kBucketsPerBlock];
  }

  std::vector<double> upper_bounds_;
  // Non-cumulative: bucket i counts values in (bound[i-1], bound[i]]; the last is +Inf.
  std::unique_ptr<BucketBlock[]> blocks_;
  std::atomic<uint64_t> count_{0};
  std::atomic<double> sum_{0.0};
};

enum class MetricType { kCounter, kGauge, kHistogram };

// The Prometheus TYPE word: "counter", "gauge", "histogram".
std::string_view MetricTypeName(MetricType type);

// One metric name with its help text and label names, and one child metric per distinct set of
// label values. Owned by the Registry. Thread-safe: With() takes a lock to find or create the
// child (do it once, keep the reference); the child itself is lock-free.
//
// A counter or histogram child that several threads update on a hot path may be kept in parts,
// one per thread (WithPart): each part lies on memory of its own, so an update moves no cache
// line between cores, and the child exported is the sum of its parts.
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
  Metric& With(const std::vector<std::string>& label_values = {}) {
    return FindPart(label_values, 0);
  }

  // Part `part` of the child for `label_values` (With is part 0), created at zero on first use,
  // like the child. Give each thread that updates the child its own part; the parts' sum is
  // what ForEach visits and the registry exports. Not for gauges, whose Set would not add up.
  Metric& WithPart(const std::vector<std::string>& label_values,
                   size_t part) requires(!std::is_same_v<Metric, Gauge>) {
    return FindPart(label_values, part);
  }

  // Removes the child for `label_values` (e.g. an endpoint that left), so it is no longer
  // exported. REQUIRES: no reference to that child is used afterwards.
  void Remove(const std::vector<std::string>& label_values);

  const std::string& name() const { return name_; }
  const std::string& help() const { return help_; }
  const std::vector<std::string>& label_names() const { return label_names_; }

  // Calls visit(label_values, metric) for every child, in label-value order, under the lock; a
  // child kept in parts is visited as their sum.
  template <typename Visit>
  void ForEach(Visit&& visit) const {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& [values, parts] : children_) {
      if (parts.size() == 1) {
        visit(values, parts.front()->metric);
      } else {
        visit(values, SumOf(parts)->metric);
      }
    }
  }

 private:
  // A part of a child, on memory no other part shares.
  struct alignas(128) Part {
    template <typename... Args>
    explicit Part(Args&&... args) : metric(std::forward<Args>(args)...) {}
    Metric metric;
  };
  using Parts = std::vector<std::unique_ptr<Part>>;

  Metric& FindPart(const std::vector<std::string>& label_values, size_t part);
  std::unique_ptr<Part> MakePart() const;
  std::unique_ptr<Part> SumOf(const Parts& parts) const;

  const std::string name_;
  const std::string help_;
  const std::vector<std::string> label_names_;
  const std::vector<double> upper_bounds_;  // histograms only
  mutable std::mutex mutex_;
  std::map<std::vector<std::string>, Parts> children_;  // each with at least one part
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
  // collectors append. The text goes into a buffer as large as the previous whole page plus an
  // eighth, so that a page of megabytes is not copied as it grows, and the allocator can hand
  // back the last page's memory instead of fresh pages to fault in.
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
  mutable std::atomic<size_t> whole_page_bytes_{0};  // the last RenderText() of everything
};

// Bucket bounds: `count` values start, start*factor, start*factor^2, ...
// REQUIRES: start > 0, factor > 1, count >= 1.
std::vector<double> ExponentialBuckets(double start, double factor, int count);

}  // namespace strata::metrics
