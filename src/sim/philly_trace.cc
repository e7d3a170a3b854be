#include "sim/philly_trace.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <sstream>

#include "fmt/format.h"

namespace strata::sim {
namespace {

constexpr std::string_view kColumns[] = {"timestamp", "duration", "num_gpus", "cluster"};
enum Column { kTimestamp = 0, kDuration = 1, kNumGpus = 2, kCluster = 3 };

struct Field {
  std::string_view text;
  size_t column = 1;  // 1-based byte column of the field's first byte
};

std::vector<Field> SplitRow(std::string_view line) {
  std::vector<Field> fields;
  size_t start = 0;
  while (true) {
    const size_t comma = line.find(',', start);
    const size_t end = comma == std::string_view::npos ? line.size() : comma;
    fields.push_back({line.substr(start, end - start), start + 1});
    if (comma == std::string_view::npos) return fields;
    start = comma + 1;
  }
}

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

bool ParseDigits(std::string_view text, int64_t& value) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return !text.empty() && error == std::errc() && end == text.data() + text.size();
}

// "YYYY-MM-DD HH:MM:SS" -> seconds since the epoch, or false.
bool ParseTimestamp(std::string_view text, int64_t& seconds) {
  if (text.size() != 19 || text[4] != '-' || text[7] != '-' || text[10] != ' ' || text[13] != ':' ||
      text[16] != ':') {
    return false;
  }
  int64_t y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
  if (!ParseDigits(text.substr(0, 4), y) || !ParseDigits(text.substr(5, 2), mo) ||
      !ParseDigits(text.substr(8, 2), d) || !ParseDigits(text.substr(11, 2), h) ||
      !ParseDigits(text.substr(14, 2), mi) || !ParseDigits(text.substr(17, 2), s)) {
    return false;
  }
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 59) return false;
  seconds = DaysFromCivil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s;
  return true;
}

bool ParsePositiveDouble(std::string_view text, double& value) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return !text.empty() && error == std::errc() && end == text.data() + text.size() &&
         std::isfinite(value) && value > 0;
}

// "12" or "12.0": a positive whole number of GPUs.
bool ParseGpuCount(std::string_view text, int& gpus) {
  double value = 0;
  if (!ParsePositiveDouble(text, value) || value != std::floor(value) || value > 1e6) {
    return false;
  }
  gpus = static_cast<int>(value);
  return true;
}

}  // namespace

Result<std::vector<PhillyJob>> ParsePhillyTrace(std::string_view csv, std::string_view source) {
  std::vector<PhillyJob> jobs;
  size_t column_index[4] = {0, 0, 0, 0};
  size_t header_fields = 0;
  bool have_header = false;
  size_t line_number = 0;
  size_t position = 0;
  while (position < csv.size()) {
    const size_t newline = csv.find('\n', position);
    std::string_view line =
        csv.substr(position, (newline == std::string_view::npos ? csv.size() : newline) - position);
    position = newline == std::string_view::npos ? csv.size() : newline + 1;
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    const std::vector<Field> fields = SplitRow(line);
    const auto error = [&](size_t column, std::string_view message) {
      return Err(
          InvalidArgumentError(fmt::format("{}:{}:{}: {}", source, line_number, column, message)));
    };
    if (!have_header) {
      for (int c = 0; c < 4; ++c) {
        size_t found = fields.size();
        for (size_t f = 0; f < fields.size(); ++f) {
          if (fields[f].text == kColumns[c]) found = f;
        }
        if (found == fields.size()) {
          return error(1, fmt::format("header has no column '{}'", kColumns[c]));
        }
        column_index[c] = found;
      }
      header_fields = fields.size();
      have_header = true;
      continue;
    }
    if (fields.size() != header_fields) {
      return error(1,
                   fmt::format("row has {} fields, the header {}", fields.size(), header_fields));
    }
    const Field& timestamp = fields[column_index[kTimestamp]];
    const Field& duration = fields[column_index[kDuration]];
    const Field& num_gpus = fields[column_index[kNumGpus]];
    const Field& cluster = fields[column_index[kCluster]];
    PhillyJob job;
    int64_t seconds = 0;
    if (!ParseTimestamp(timestamp.text, seconds)) {
      return error(timestamp.column,
                   fmt::format("timestamp '{}' is not YYYY-MM-DD HH:MM:SS", timestamp.text));
    }
    job.submitted = TimePoint(std::chrono::seconds(seconds));
    if (!ParsePositiveDouble(duration.text, job.duration_s)) {
      return error(duration.column,
                   fmt::format("duration '{}' is not a positive number of seconds", duration.text));
    }
    if (!ParseGpuCount(num_gpus.text, job.gpus)) {
      return error(num_gpus.column,
                   fmt::format("num_gpus '{}' is not a positive whole number", num_gpus.text));
    }
    if (cluster.text.empty()) return error(cluster.column, "cluster is empty");
    job.cluster = std::string(cluster.text);
    jobs.push_back(std::move(job));
  }
  if (!have_header) {
    return Err(InvalidArgumentError(fmt::format("{}: no header row", source)));
  }
  return jobs;
}

Result<std::vector<PhillyJob>> ReadPhillyTrace(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return Err(NotFoundError(fmt::format("cannot read '{}'", path)));
  std::ostringstream text;
  text << file.rdbuf();
  return ParsePhillyTrace(text.str(), path);
}

}  // namespace strata::sim
