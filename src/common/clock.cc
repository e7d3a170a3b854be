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

namespace {

// Writes `value` as `width` decimal digits at `out`.
void PutDigits(char* out, long long value, int width) {
  for (int i = width - 1; i >= 0; --i) {
    out[i] = static_cast<char>('0' + value % 10);
    value /= 10;
  }
}

// "YYYY-MM-DDTHH:MM:SS" of `t` in UTC, with the fraction of a second in `fraction_digits`
// digits (none: 0), then "Z". Civil-calendar arithmetic, no libc time call: these stamps are
// written on every status write and heartbeat, and gmtime_r plus strftime take locks.
std::string FormatUtc(TimePoint t, int fraction_digits) {
  using namespace std::chrono;
  const auto micros = floor<microseconds>(t.time_since_epoch());
  const auto day = floor<days>(micros);
  const year_month_day date{sys_days(day)};
  const hh_mm_ss time{micros - day};
  char text[32] = "0000-00-00T00:00:00";
  PutDigits(text, static_cast<int>(date.year()), 4);
  PutDigits(text + 5, static_cast<unsigned>(date.month()), 2);
  PutDigits(text + 8, static_cast<unsigned>(date.day()), 2);
  PutDigits(text + 11, time.hours().count(), 2);
  PutDigits(text + 14, time.minutes().count(), 2);
  PutDigits(text + 17, time.seconds().count(), 2);
  size_t size = 19;
  if (fraction_digits > 0) {
    text[size++] = '.';
    PutDigits(text + size, time.subseconds().count(), fraction_digits);
    size += fraction_digits;
  }
  text[size++] = 'Z';
  return std::string(text, size);
}

}  // namespace

std::string FormatRfc3339(TimePoint t) { return FormatUtc(t, 0); }

std::string FormatRfc3339Micro(TimePoint t) { return FormatUtc(t, 6); }

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
