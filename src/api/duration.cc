#include "api/duration.h"

#include <chrono>

#include "common/check.h"

namespace strata::api {
namespace {

constexpr int64_t kMaxMillis = 100000LL * 3600 * 1000;

Status BadDuration(std::string_view text) {
  return InvalidArgumentError("expected a duration such as \"30s\", \"5m\" or \"1h30m\", got \"" +
                              std::string(text) + "\"");
}

}  // namespace

Result<Duration> ParseDuration(std::string_view text) {
  if (text.empty()) return Err(BadDuration(text));
  int64_t total_ms = 0;
  size_t i = 0;
  while (i < text.size()) {
    int64_t number = 0;
    size_t digits = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      number = number * 10 + (text[i] - '0');
      if (number > kMaxMillis) return Err(BadDuration(text));
      ++i;
      ++digits;
    }
    if (digits == 0) return Err(BadDuration(text));
    int64_t unit_ms = 0;
    if (text.substr(i, 2) == "ms") {
      unit_ms = 1;
      i += 2;
    } else if (i < text.size() && text[i] == 'h') {
      unit_ms = 3600 * 1000;
      ++i;
    } else if (i < text.size() && text[i] == 'm') {
      unit_ms = 60 * 1000;
      ++i;
    } else if (i < text.size() && text[i] == 's') {
      unit_ms = 1000;
      ++i;
    } else {
      return Err(BadDuration(text));
    }
    if (number > kMaxMillis / unit_ms) return Err(BadDuration(text));
    total_ms += number * unit_ms;
    if (total_ms > kMaxMillis) return Err(BadDuration(text));
  }
  return std::chrono::duration_cast<Duration>(std::chrono::milliseconds(total_ms));
}

std::string FormatDuration(Duration d) {
  STRATA_CHECK(d.count() >= 0);
  int64_t ms = std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
  STRATA_CHECK(std::chrono::milliseconds(ms) == d);
  if (ms == 0) return "0s";
  if (ms % (3600 * 1000) == 0) return std::to_string(ms / (3600 * 1000)) + "h";
  if (ms % (60 * 1000) == 0) return std::to_string(ms / (60 * 1000)) + "m";
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + "s";
  return std::to_string(ms) + "ms";
}

}  // namespace strata::api
