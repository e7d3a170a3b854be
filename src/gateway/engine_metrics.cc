#include "gateway/engine_metrics.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>

namespace strata::gateway {
namespace {

enum class Signal { kNone, kWaiting, kRunning, kKvUsage, kLoraInfo };

Signal SignalFor(std::string_view name) {
  if (name == "vllm:num_requests_waiting" || name == "sglang:num_queue_reqs") {
    return Signal::kWaiting;
  }
  if (name == "vllm:num_requests_running" || name == "sglang:num_running_reqs") {
    return Signal::kRunning;
  }
  if (name == "vllm:kv_cache_usage_perc" || name == "vllm:gpu_cache_usage_perc" ||
      name == "sglang:token_usage") {
    return Signal::kKvUsage;
  }
  if (name == "vllm:lora_requests_info") return Signal::kLoraInfo;
  return Signal::kNone;
}

// The value of label `label` in a `{a="x",b="y"}` block, unescaped enough for adapter names.
std::string LabelValue(std::string_view labels, std::string_view label) {
  const std::string needle = fmt::format("{}=\"", label);
  size_t at = labels.find(needle);
  while (at != std::string_view::npos && at > 0 && labels[at - 1] != '{' && labels[at - 1] != ',' &&
         labels[at - 1] != ' ') {
    at = labels.find(needle, at + 1);
  }
  if (at == std::string_view::npos) return "";
  std::string value;
  for (size_t i = at + needle.size(); i < labels.size() && labels[i] != '"'; ++i) {
    if (labels[i] == '\\' && i + 1 < labels.size()) ++i;
    value.push_back(labels[i]);
  }
  return value;
}

}  // namespace

Result<EngineMetrics> ParseEngineMetrics(std::string_view text) {
  EngineMetrics metrics;
  size_t line_number = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty() || line.front() == '#') continue;
    size_t name_end = line.find_first_of("{ ");
    if (name_end == std::string_view::npos) {
      return Err(InvalidArgumentError(fmt::format("line {}: sample without a value", line_number)));
    }
    const Signal signal = SignalFor(line.substr(0, name_end));
    if (signal == Signal::kNone) continue;
    std::string_view labels;
    size_t value_start = name_end;
    if (line[name_end] == '{') {
      size_t close = line.find('}', name_end);
      if (close == std::string_view::npos) {
        return Err(InvalidArgumentError(fmt::format("line {}: unclosed label set", line_number)));
      }
      labels = line.substr(name_end, close - name_end + 1);
      value_start = close + 1;
    }
    std::string_view rest = line.substr(value_start);
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    rest = rest.substr(0, rest.find(' '));  // an optional timestamp follows
    double value = 0;
    auto [ptr, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), value);
    if (ec != std::errc() || ptr != rest.data() + rest.size() || !std::isfinite(value)) {
      return Err(InvalidArgumentError(
          fmt::format("line {}: bad value \"{}\"", line_number, std::string(rest))));
    }
    switch (signal) {
      case Signal::kWaiting:
        metrics.waiting += static_cast<int64_t>(value);
        break;
      case Signal::kRunning:
        metrics.running += static_cast<int64_t>(value);
        break;
      case Signal::kKvUsage:
        metrics.kv_usage = std::max(metrics.kv_usage, std::clamp(value, 0.0, 1.0));
        break;
      case Signal::kLoraInfo: {
        const std::string adapters = LabelValue(labels, "running_lora_adapters");
        size_t from = 0;
        while (from < adapters.size()) {
          size_t comma = adapters.find(',', from);
          if (comma == std::string::npos) comma = adapters.size();
          if (comma > from) metrics.loaded_adapters.push_back(adapters.substr(from, comma - from));
          from = comma + 1;
        }
        break;
      }
      case Signal::kNone:
        break;
    }
  }
  return metrics;
}

}  // namespace strata::gateway
