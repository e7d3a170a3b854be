#include "metrics/prometheus_text.h"

#include <charconv>
#include <cmath>
#include <limits>

namespace strata::metrics {
namespace {

bool IsNameStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
}
bool IsNameChar(char c) { return IsNameStart(c) || (c >= '0' && c <= '9'); }

// A cursor over one line. Methods return false on a syntax error after filling `error`.
class LineParser {
 public:
  LineParser(std::string_view line, size_t line_number) : line_(line), line_number_(line_number) {}

  Result<Sample> Parse() {
    Sample sample;
    if (!ReadName(&sample.name, "metric name")) return Fail();
    size_t after_name = pos_;
    SkipSpaces();
    if (Peek() == '{') {
      ++pos_;
      if (!ReadLabels(&sample.labels)) return Fail();
    } else {
      pos_ = after_name;
    }
    if (!ReadValue(&sample.value)) return Fail();
    SkipSpaces();
    if (pos_ < line_.size()) {
      int64_t timestamp = 0;
      const char* begin = line_.data() + pos_;
      const char* end = line_.data() + line_.size();
      auto [ptr, ec] = std::from_chars(begin, end, timestamp);
      if (ec != std::errc() || ptr == begin) {
        error_ = "expected a timestamp or the end of the line";
        return Fail();
      }
      pos_ = ptr - line_.data();
      SkipSpaces();
      if (pos_ < line_.size()) {
        error_ = "unexpected text after the timestamp";
        return Fail();
      }
    }
    return sample;
  }

 private:
  char Peek() const { return pos_ < line_.size() ? line_[pos_] : '\0'; }
  void SkipSpaces() {
    while (pos_ < line_.size() && (line_[pos_] == ' ' || line_[pos_] == '\t')) ++pos_;
  }

  tl::unexpected<Status> Fail() const {
    return Err(InvalidArgumentError("line " + std::to_string(line_number_) + " column " +
                                    std::to_string(pos_ + 1) + ": " + error_));
  }

  bool ReadName(std::string* out, std::string_view what) {
    size_t start = pos_;
    if (!IsNameStart(Peek())) {
      error_ = "expected a " + std::string(what);
      return false;
    }
    while (pos_ < line_.size() && IsNameChar(line_[pos_])) ++pos_;
    out->assign(line_.substr(start, pos_ - start));
    return true;
  }

  bool ReadLabels(std::vector<std::pair<std::string, std::string>>* labels) {
    while (true) {
      SkipSpaces();
      if (Peek() == '}') {
        ++pos_;
        return true;
      }
      std::string name;
      if (!ReadName(&name, "label name or '}'")) return false;
      SkipSpaces();
      if (Peek() != '=') {
        error_ = "expected '=' after label name \"" + name + "\"";
        return false;
      }
      ++pos_;
      SkipSpaces();
      std::string value;
      if (!ReadQuoted(&value, name)) return false;
      labels->emplace_back(std::move(name), std::move(value));
      SkipSpaces();
      if (Peek() == ',') {
        ++pos_;
      } else if (Peek() != '}') {
        error_ = "expected ',' or '}' after the value of label \"" + labels->back().first + "\"";
        return false;
      }
    }
  }

  bool ReadQuoted(std::string* out, const std::string& label) {
    if (Peek() != '"') {
      error_ = "expected '\"' to open the value of label \"" + label + "\"";
      return false;
    }
    ++pos_;
    while (pos_ < line_.size()) {
      char c = line_[pos_++];
      if (c == '"') return true;
      if (c != '\\') {
        out->push_back(c);
        continue;
      }
      if (pos_ >= line_.size()) break;
      char escaped = line_[pos_++];
      switch (escaped) {
        case 'n':
          out->push_back('\n');
          break;
        case '\\':
        case '"':
          out->push_back(escaped);
          break;
        default:
          --pos_;
          error_ = std::string("unknown escape '\\") + escaped + "' in label \"" + label + "\"";
          return false;
      }
    }
    error_ = "unterminated value of label \"" + label + "\"";
    return false;
  }

  bool ReadValue(double* value) {
    size_t before = pos_;
    SkipSpaces();
    if (pos_ == before && pos_ < line_.size()) {
      error_ = "expected a space before the value";
      return false;
    }
    size_t start = pos_;
    while (pos_ < line_.size() && line_[pos_] != ' ' && line_[pos_] != '\t') ++pos_;
    std::string_view token = line_.substr(start, pos_ - start);
    if (token.empty()) {
      pos_ = start;
      error_ = "expected a sample value";
      return false;
    }
    // from_chars rejects a leading '+', which Prometheus writes for "+Inf".
    std::string_view digits = token.front() == '+' ? token.substr(1) : token;
    auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), *value);
    if (ec == std::errc::result_out_of_range) {
      *value = digits.front() == '-' ? -std::numeric_limits<double>::infinity()
                                     : std::numeric_limits<double>::infinity();
      return true;
    }
    if (ec != std::errc() || ptr != digits.data() + digits.size() || digits.empty()) {
      pos_ = start;
      error_ = "invalid sample value \"" + std::string(token) + "\"";
      return false;
    }
    return true;
  }

  std::string_view line_;
  size_t line_number_;
  size_t pos_ = 0;
  std::string error_;
};

}  // namespace

std::string FormatSampleValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char buffer[64];
  auto [ptr, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return std::string(buffer, ptr);
}

std::string EscapeLabelValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::string EscapeHelp(std::string_view help) {
  std::string out;
  out.reserve(help.size());
  for (char c : help) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out.push_back(c);
    }
  }
  return out;
}

const std::string* Sample::Label(std::string_view label_name) const {
  for (const auto& [name, value] : labels) {
    if (name == label_name) return &value;
  }
  return nullptr;
}

Result<std::vector<Sample>> ParsePrometheusText(std::string_view text) {
  std::vector<Sample> samples;
  size_t line_number = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    size_t first = line.find_first_not_of(" \t");
    if (first == std::string_view::npos || line[first] == '#') continue;
    ASSIGN_OR_RETURN(Sample sample, LineParser(line.substr(first), line_number).Parse());
    samples.push_back(std::move(sample));
  }
  return samples;
}

}  // namespace strata::metrics
