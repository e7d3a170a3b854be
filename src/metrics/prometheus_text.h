#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"

// Prometheus text exposition format 0.0.4: the small pieces the renderer needs (value and
// escaping rules) and a parser for scraping other processes' /metrics pages (engines).

namespace strata::metrics {

// "text/plain; version=0.0.4; charset=utf-8".
inline constexpr std::string_view kPrometheusContentType =
    "text/plain; version=0.0.4; charset=utf-8";

// A sample value as Prometheus writes it: "+Inf", "-Inf", "NaN", integers without a fraction
// ("42"), otherwise the shortest text that reads back to the same double.
std::string FormatSampleValue(double value);

// A label value with '\' -> "\\", '"' -> "\"" and newline -> "\n".
std::string EscapeLabelValue(std::string_view value);

// HELP text with '\' -> "\\" and newline -> "\n".
std::string EscapeHelp(std::string_view help);

// One sample line of a scraped page: `name{label="value",...} value [timestamp]`.
struct Sample {
  std::string name;
  std::vector<std::pair<std::string, std::string>> labels;  // in the order written
  double value = 0;

  // The value of label `label_name`, or nullptr.
  const std::string* Label(std::string_view label_name) const;
};

// Parses a text-format page into its samples, in page order. Comment lines (HELP, TYPE and any
// other '#' line) and blank lines are skipped; an optional timestamp is accepted and dropped.
// Accepts "\n" and "\r\n" line ends.
//
// Returns InvalidArgument naming the 1-based line and what is wrong ("line 7: expected '=' after
// label name \"le\"") for a malformed line; nothing is returned partially.
Result<std::vector<Sample>> ParsePrometheusText(std::string_view text);

}  // namespace strata::metrics
