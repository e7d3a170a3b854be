#include "common/clock.h"

#include <cctype>
#include <charconv>
#include <cstdio>
#include <ctime>

#include "common/check.h"

namespace strata {

TimePoint RealClock::Now() const {
  return std::chrono::time_point_cast<Duration>(std::chrono::system_clock::now());
}

RealClock& RealClock::Instance() {
  static RealClock clock;
  return clock;
}

void FakeClock::Advance(Duration d) {
  STRATA_CHECK(d.count() >= 0);
  now_ns_.fetch_add(d.count());
}

void FakeClock::Set(TimePoint t) {
  STRATA_CHECK(t.time_since_epoch().count() >= now_ns_.load());
  now_ns_.store(t.time_since_epoch().count());
}

double ToSeconds(TimePoint t) { return ToSeconds(t.time_since_epoch()); }

double ToSeconds(Duration d) { return static_cast<double>(d.count()) / 1e9; }

std::string FormatRfc3339(TimePoint t) {
  std::time_t secs = std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string FormatRfc3339Micro(TimePoint t) {
  const auto micros =
      std::chrono::floor<std::chrono::microseconds>(t.time_since_epoch()).count() % 1'000'000;
  char fraction[16];
  std::snprintf(fraction, sizeof(fraction), ".%06lldZ", static_cast<long long>(micros));
  std::string text = FormatRfc3339(t);
  text.pop_back();  // its Z
  return text + fraction;
}

std::optional<TimePoint> ParseRfc3339(std::string_view text) {
  // YYYY-MM-DDTHH:MM:SS[.fraction]Z
  if (text.size() < 20 || text.back() != 'Z') return std::nullopt;
  auto number = [&](size_t at, size_t len, int& out) {
    const char* begin = text.data() + at;
    auto [end, ec] = std::from_chars(begin, begin + len, out);
    return ec == std::errc() && end == begin + len;
  };
  std::tm parts{};
  if (!number(0, 4, parts.tm_year) || text[4] != '-' || !number(5, 2, parts.tm_mon) ||
      text[7] != '-' || !number(8, 2, parts.tm_mday) || (text[10] != 'T' && text[10] != 't') ||
      !number(11, 2, parts.tm_hour) || text[13] != ':' || !number(14, 2, parts.tm_min) ||
      text[16] != ':' || !number(17, 2, parts.tm_sec)) {
    return std::nullopt;
  }
  if (parts.tm_mon < 1 || parts.tm_mon > 12 || parts.tm_mday < 1 || parts.tm_mday > 31 ||
      parts.tm_hour > 23 || parts.tm_min > 59 || parts.tm_sec > 60) {
    return std::nullopt;
  }
  int64_t nanos = 0;
  std::string_view rest = text.substr(19, text.size() - 20);
  if (!rest.empty()) {
    if (rest[0] != '.' || rest.size() < 2 || rest.size() > 10) return std::nullopt;
    int64_t scale = 100'000'000;
    for (char c : rest.substr(1)) {
      if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
      nanos += (c - '0') * scale;
      scale /= 10;
    }
  }
  parts.tm_year -= 1900;
  parts.tm_mon -= 1;
  std::time_t seconds = timegm(&parts);
  return TimePoint(std::chrono::seconds(seconds)) + Duration(nanos);
}

}  // namespace strata
