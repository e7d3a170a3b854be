#include "metrics/metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "common/check.h"
#include "metrics/prometheus_text.h"

namespace strata::metrics {
namespace {

bool IsValidName(std::string_view name, bool allow_colon) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
              (allow_colon && c == ':') || (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

// `{a="x",b="y"` without the closing brace, or "" when there are no labels, so that histogram
// lines can append their "le" label.
std::string OpenLabels(const std::vector<std::string>& names,
                       const std::vector<std::string>& values) {
  if (names.empty()) return "";
  std::string out = "{";
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += ',';
    out += names[i];
    out += "=\"";
    out += EscapeLabelValue(values[i]);
    out += '"';
  }
  return out;
}

// Histogram bounds are fixed by the code that declares them, so a bad one is a programming error.
void CheckBucketBounds(const std::vector<double>& bounds) {
  for (size_t i = 0; i < bounds.size(); ++i) {
    STRATA_CHECK(std::isfinite(bounds[i]));
    STRATA_CHECK(i == 0 || bounds[i - 1] < bounds[i]);
  }
}

std::string CloseLabels(const std::string& open) { return open.empty() ? "" : open + "}"; }

void RenderHeader(std::string& out, const std::string& name, const std::string& help,
                  MetricType type) {
  out += "# HELP " + name + " " + EscapeHelp(help) + "\n";
  out += "# TYPE " + name + " " + std::string(MetricTypeName(type)) + "\n";
}

template <typename Family>
void RenderScalar(std::string& out, const Family& family, MetricType type) {
  RenderHeader(out, family.name(), family.help(), type);
  family.ForEach([&](const std::vector<std::string>& values, const auto& metric) {
    out += family.name() + CloseLabels(OpenLabels(family.label_names(), values)) + " " +
           FormatSampleValue(metric.Value()) + "\n";
  });
}

void RenderHistogram(std::string& out, const HistogramFamily& family) {
  RenderHeader(out, family.name(), family.help(), MetricType::kHistogram);
  family.ForEach([&](const std::vector<std::string>& values, const Histogram& histogram) {
    std::string open = OpenLabels(family.label_names(), values);
    std::string bucket_prefix = family.name() + "_bucket" + (open.empty() ? "{" : open + ",");
    std::vector<uint64_t> counts = histogram.CumulativeCounts();
    const std::vector<double>& bounds = histogram.UpperBounds();
    for (size_t i = 0; i < bounds.size(); ++i) {
      out += bucket_prefix + "le=\"" + FormatSampleValue(bounds[i]) + "\"} " +
             std::to_string(counts[i]) + "\n";
    }
    out += bucket_prefix + "le=\"+Inf\"} " + std::to_string(counts.back()) + "\n";
    std::string labels = CloseLabels(open);
    out += family.name() + "_sum" + labels + " " + FormatSampleValue(histogram.Sum()) + "\n";
    out += family.name() + "_count" + labels + " " + std::to_string(counts.back()) + "\n";
  });
}

// The family a "# HELP name ..." or "# TYPE name ..." line at the start of `text` names, or ""
// when `text` starts with any other line.
std::string_view HeaderFamily(std::string_view text) {
  if (!text.starts_with("# HELP ") && !text.starts_with("# TYPE ")) return {};
  text.remove_prefix(7);
  return text.substr(0, text.find_first_of(" \n"));
}

// Checks that every family a collector appended (text[from..]) is one it declared, crashing
// with the family's name otherwise, and removes those `wanted` does not include. A family is its
// header lines and the samples after them, up to the next family's header; lines before the
// first header belong to none and are kept only when `wanted` includes everything. Jumps from
// '#' to '#', so a page of samples costs one memchr pass.
void CheckAndSelectCollected(std::string& text, size_t from,
                             const std::vector<std::string>& declared,
                             const FamilySelection& wanted) {
  const bool everything = wanted.IncludesEverything();
  size_t write = from;
  size_t segment = from;  // where the current family's text starts
  bool keeping = everything;
  std::string current;
  auto close_segment = [&](size_t end) {
    if (!keeping) return;
    if (write != segment) std::memmove(text.data() + write, text.data() + segment, end - segment);
    write += end - segment;
  };
  for (size_t hash = text.find('#', from); hash != std::string::npos;
       hash = text.find('#', hash + 1)) {
    if (hash != from && text[hash - 1] != '\n') continue;
    const std::string_view name = HeaderFamily(std::string_view(text).substr(hash));
    if (name.empty() || name == current) continue;
    const bool was_declared = std::find(declared.begin(), declared.end(), name) != declared.end();
    if (!was_declared) {
      std::fprintf(stderr, "metrics collector appended family %.*s, which it did not declare\n",
                   static_cast<int>(name.size()), name.data());
    }
    STRATA_CHECK(was_declared);
    current = name;
    close_segment(hash);
    segment = hash;
    keeping = everything || wanted.Includes(current);
  }
  close_segment(text.size());
  text.resize(write);
}

}  // namespace

void Counter::Increment(double amount) {
  STRATA_CHECK(amount >= 0);
  value_.fetch_add(amount, std::memory_order_relaxed);
}

Histogram::Histogram(std::vector<double> upper_bounds)
    : upper_bounds_(std::move(upper_bounds)),
      blocks_(std::make_unique<BucketBlock[]>(upper_bounds_.size() / kBucketsPerBlock + 1)) {
  CheckBucketBounds(upper_bounds_);
}

void Histogram::Observe(double value) {
  // Bucket i holds values <= bound[i] (Prometheus' "le"): the first bound not below value.
  size_t index =
      std::lower_bound(upper_bounds_.begin(), upper_bounds_.end(), value) - upper_bounds_.begin();
  Bucket(index).fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(value, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
}

std::vector<uint64_t> Histogram::CumulativeCounts() const {
  std::vector<uint64_t> counts(upper_bounds_.size() + 1);
  uint64_t running = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    running += Bucket(i).load(std::memory_order_relaxed);
    counts[i] = running;
  }
  return counts;
}

void Histogram::Add(const Histogram& other) {
  STRATA_CHECK(other.upper_bounds_ == upper_bounds_);
  for (size_t i = 0; i <= upper_bounds_.size(); ++i) {
    Bucket(i).fetch_add(other.Bucket(i).load(std::memory_order_relaxed), std::memory_order_relaxed);
  }
  sum_.fetch_add(other.Sum(), std::memory_order_relaxed);
  count_.fetch_add(other.Count(), std::memory_order_relaxed);
}

std::string_view MetricTypeName(MetricType type) {
  switch (type) {
    case MetricType::kCounter:
      return "counter";
    case MetricType::kGauge:
      return "gauge";
    case MetricType::kHistogram:
      return "histogram";
  }
  return "untyped";
}

template <typename Metric>
Metric& MetricFamily<Metric>::FindPart(const std::vector<std::string>& label_values, size_t part) {
  STRATA_CHECK(label_values.size() == label_names_.size());
  std::lock_guard<std::mutex> lock(mutex_);
  Parts& parts = children_[label_values];
  while (parts.size() <= part) parts.push_back(MakePart());
  return parts[part]->metric;
}

template <typename Metric>
void MetricFamily<Metric>::Remove(const std::vector<std::string>& label_values) {
  std::lock_guard<std::mutex> lock(mutex_);
  children_.erase(label_values);
}

template <typename Metric>
std::unique_ptr<typename MetricFamily<Metric>::Part> MetricFamily<Metric>::MakePart() const {
  if constexpr (std::is_same_v<Metric, Histogram>) {
    return std::make_unique<Part>(upper_bounds_);
  } else {
    return std::make_unique<Part>();
  }
}

template <typename Metric>
std::unique_ptr<typename MetricFamily<Metric>::Part> MetricFamily<Metric>::SumOf(
    const Parts& parts) const {
  std::unique_ptr<Part> sum = MakePart();
  for (const std::unique_ptr<Part>& part : parts) {
    if constexpr (std::is_same_v<Metric, Histogram>) {
      sum->metric.Add(part->metric);
    } else if constexpr (std::is_same_v<Metric, Counter>) {
      sum->metric.Increment(part->metric.Value());
    } else {
      sum->metric.Add(part->metric.Value());
    }
  }
  return sum;
}

template class MetricFamily<Counter>;
template class MetricFamily<Gauge>;
template class MetricFamily<Histogram>;

Registry::Entry& Registry::FindOrAdd(MetricType type, std::string_view name, std::string_view help,
                                     const std::vector<std::string>& label_names,
                                     const std::vector<double>& upper_bounds) {
  STRATA_CHECK(IsValidName(name, /*allow_colon=*/true));
  for (const std::string& label : label_names) {
    STRATA_CHECK(IsValidName(label, /*allow_colon=*/false));
    STRATA_CHECK(label != "le" || type != MetricType::kHistogram);
  }
  auto it = families_.find(name);
  if (it != families_.end()) {
    Entry& entry = it->second;
    STRATA_CHECK(entry.type == type);
    const std::vector<std::string>& existing =
        type == MetricType::kCounter ? entry.counter->label_names()
        : type == MetricType::kGauge ? entry.gauge->label_names()
                                     : entry.histogram->label_names();
    STRATA_CHECK(existing == label_names);
    return entry;
  }
  Entry entry{type, nullptr, nullptr, nullptr};
  std::string owned_name(name);
  std::string owned_help(help);
  switch (type) {
    case MetricType::kCounter:
      entry.counter = std::make_unique<CounterFamily>(owned_name, owned_help, label_names,
                                                      std::vector<double>{});
      break;
    case MetricType::kGauge:
      entry.gauge =
          std::make_unique<GaugeFamily>(owned_name, owned_help, label_names, std::vector<double>{});
      break;
    case MetricType::kHistogram:
      entry.histogram =
          std::make_unique<HistogramFamily>(owned_name, owned_help, label_names, upper_bounds);
      break;
  }
  return families_.emplace(owned_name, std::move(entry)).first->second;
}

CounterFamily& Registry::AddCounter(std::string_view name, std::string_view help,
                                    std::vector<std::string> label_names) {
  std::lock_guard<std::mutex> lock(mutex_);
  return *FindOrAdd(MetricType::kCounter, name, help, label_names, {}).counter;
}

GaugeFamily& Registry::AddGauge(std::string_view name, std::string_view help,
                                std::vector<std::string> label_names) {
  std::lock_guard<std::mutex> lock(mutex_);
  return *FindOrAdd(MetricType::kGauge, name, help, label_names, {}).gauge;
}

HistogramFamily& Registry::AddHistogram(std::string_view name, std::string_view help,
                                        std::vector<std::string> label_names,
                                        std::vector<double> upper_bounds) {
  // Checked at registration too, so a bad bound fails before the first label set is used.
  CheckBucketBounds(upper_bounds);
  std::lock_guard<std::mutex> lock(mutex_);
  return *FindOrAdd(MetricType::kHistogram, name, help, label_names, upper_bounds).histogram;
}

bool FamilySelection::Includes(std::string_view family) const {
  return !names_ || names_->contains(family);
}

bool FamilySelection::IncludesAnyOf(const std::vector<std::string>& families) const {
  return std::any_of(families.begin(), families.end(),
                     [this](const std::string& family) { return Includes(family); });
}

void Registry::AddCollector(std::vector<std::string> families, Collector collect) {
  STRATA_CHECK(!families.empty());
  for (const std::string& family : families)
    STRATA_CHECK(IsValidName(family, /*allow_colon=*/true));
  std::lock_guard<std::mutex> lock(mutex_);
  collectors_.push_back({std::move(families), std::move(collect)});
}

std::string Registry::RenderText(const FamilySelection& wanted) const {
  std::unique_lock<std::mutex> lock(mutex_);
  std::string out;
  const bool everything = wanted.IncludesEverything();
  if (everything) {
    const size_t last = whole_page_bytes_.load(std::memory_order_relaxed);
    out.reserve(last + last / 8);
  }
  for (const auto& [name, entry] : families_) {
    if (!wanted.Includes(name)) continue;
    switch (entry.type) {
      case MetricType::kCounter:
        RenderScalar(out, *entry.counter, MetricType::kCounter);
        break;
      case MetricType::kGauge:
        RenderScalar(out, *entry.gauge, MetricType::kGauge);
        break;
      case MetricType::kHistogram:
        RenderHistogram(out, *entry.histogram);
        break;
    }
  }
  // Copied so that a slow collector (a store scan) does not hold the lock.
  std::vector<DeclaredCollector> collectors = collectors_;
  lock.unlock();
  for (const DeclaredCollector& collector : collectors) {
    if (!wanted.IncludesAnyOf(collector.families)) continue;
    const size_t from = out.size();
    collector.collect(wanted, out);
    CheckAndSelectCollected(out, from, collector.families, wanted);
  }
  if (everything) whole_page_bytes_.store(out.size(), std::memory_order_relaxed);
  return out;
}

std::vector<double> ExponentialBuckets(double start, double factor, int count) {
  STRATA_CHECK(start > 0 && factor > 1 && count >= 1);
  std::vector<double> bounds;
  double bound = start;
  for (int i = 0; i < count; ++i, bound *= factor) bounds.push_back(bound);
  return bounds;
}

}  // namespace strata::metrics
