#include "common/clock.h"

#include <gtest/gtest.h>

namespace strata {
namespace {

TEST(FakeClockTest, MovesOnlyWhenTold) {
  FakeClock clock;
  TimePoint start = clock.Now();
  EXPECT_EQ(clock.Now(), start);
  clock.Advance(std::chrono::seconds(90));
  EXPECT_EQ(clock.Now() - start, std::chrono::seconds(90));
  EXPECT_EQ(FormatRfc3339(start), "2026-01-01T00:00:00Z");
  EXPECT_EQ(FormatRfc3339(clock.Now()), "2026-01-01T00:01:30Z");
  EXPECT_EQ(FormatRfc3339Micro(start), "2026-01-01T00:00:00.000000Z");
  clock.Advance(std::chrono::microseconds(250'007) + std::chrono::nanoseconds(999));
  EXPECT_EQ(FormatRfc3339Micro(clock.Now()), "2026-01-01T00:01:30.250007Z");
}

TEST(FakeClockTest, TimeNeverGoesBack) {
  FakeClock clock;
  EXPECT_DEATH(clock.Advance(std::chrono::seconds(-1)), "CHECK failed");
  EXPECT_DEATH(clock.Set(FakeClock::kDefaultStart - std::chrono::seconds(1)), "CHECK failed");
}

TEST(RealClockTest, IsRecent) {
  double now = ToSeconds(RealClock::Instance().Now());
  EXPECT_GT(now, 1.7e9);  // after 2023
}

TEST(ParseRfc3339Test, ReadsWhatFormatRfc3339Writes) {
  TimePoint t = FakeClock::kDefaultStart + std::chrono::seconds(12345);
  EXPECT_EQ(ParseRfc3339(FormatRfc3339(t)), t);
  EXPECT_EQ(ParseRfc3339("2026-01-01T00:00:00.5Z"),
            ParseRfc3339("2026-01-01T00:00:00Z").value() + std::chrono::milliseconds(500));
}

TEST(FormatRfc3339Test, WritesTheCivilDateInUtc) {
  // A leap day, the last microsecond of a day, and a date before the year 2000.
  for (const char* text : {"2024-02-29T23:59:59.999999Z", "1999-12-31T00:00:00.000001Z",
                           "2100-03-01T12:34:56.000000Z"}) {
    std::optional<TimePoint> t = ParseRfc3339(text);
    ASSERT_TRUE(t.has_value()) << text;
    EXPECT_EQ(FormatRfc3339Micro(*t), text);
  }
  EXPECT_EQ(FormatRfc3339(ParseRfc3339("2024-02-29T23:59:59.999999Z").value()),
            "2024-02-29T23:59:59Z");
}

TEST(ParseRfc3339Test, RejectsAnythingElse) {
  for (const char* bad :
       {"", "2026-01-01", "2026-01-01T00:00:00", "2026-13-01T00:00:00Z",
        "2026-01-01T00:00:00+01:00", "2026-01-01T00:00:00.Z", "20x6-01-01T00:00:00Z"}) {
    EXPECT_EQ(ParseRfc3339(bad), std::nullopt) << bad;
  }
}

}  // namespace
}  // namespace strata
