#include "common/clock.h"

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

}  // namespace strata
