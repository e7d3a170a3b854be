#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace strata {

// Time in strata: nanoseconds on the system clock's epoch. Virtual time (simulation, tests)
// uses the same type through FakeClock.
using Duration = std::chrono::nanoseconds;
using TimePoint = std::chrono::time_point<std::chrono::system_clock, Duration>;

// The source of "now". Injected everywhere time matters, so that tests and simulations run in
// virtual time (FakeClock::Advance) and never sleep. Implementations are thread-safe.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual TimePoint Now() const = 0;
};

// Wall-clock time. Thread-safe, stateless.
class RealClock final : public Clock {
 public:
  TimePoint Now() const override;
  // A process-wide instance.
  static RealClock& Instance();
};

// Virtual time that moves only when told. Starts at `start` (default: 2026-01-01T00:00:00Z, so
// timestamps in tests are readable). Thread-safe.
class FakeClock final : public Clock {
 public:
  static constexpr TimePoint kDefaultStart{Duration{1767225600LL * 1'000'000'000LL}};

  explicit FakeClock(TimePoint start = kDefaultStart) : now_ns_(start.time_since_epoch().count()) {}

  TimePoint Now() const override { return TimePoint(Duration(now_ns_.load())); }

  // REQUIRES: d >= 0. Time never goes backwards.
  void Advance(Duration d);
  // REQUIRES: t >= Now().
  void Set(TimePoint t);

 private:
  std::atomic<int64_t> now_ns_;
};

// Seconds since the epoch as a double, for metrics and JSON.
double ToSeconds(TimePoint t);
double ToSeconds(Duration d);

// RFC 3339 with a Z suffix and second precision, as Kubernetes writes timestamps:
// "2026-01-01T00:00:00Z".
std::string FormatRfc3339(TimePoint t);
// The same with microseconds, as Kubernetes writes a MicroTime (a lease's renewTime, an
// event's eventTime): "2026-01-01T00:00:00.250000Z". For instants compared with exact ones,
// such as a replica's readiness with its pod's creation.
std::string FormatRfc3339Micro(TimePoint t);
// Parses an RFC 3339 UTC timestamp as the two above write it ("2026-01-01T00:00:30Z", optional
// fractional seconds up to nanoseconds, 'Z' only). Returns nullopt for anything else.
std::optional<TimePoint> ParseRfc3339(std::string_view text);

}  // namespace strata
