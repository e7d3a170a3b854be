#include "api/duration.h"

#include <gtest/gtest.h>

namespace strata::api {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;

TEST(DurationTest, ParsesGoStyleDurations) {
  EXPECT_EQ(*ParseDuration("30s"), seconds(30));
  EXPECT_EQ(*ParseDuration("5m"), minutes(5));
  EXPECT_EQ(*ParseDuration("1h30m"), minutes(90));
  EXPECT_EQ(*ParseDuration("500ms"), milliseconds(500));
  EXPECT_EQ(*ParseDuration("0s"), seconds(0));
}

TEST(DurationTest, RejectsOtherShapesNamingTheText) {
  for (const char* text : {"", "30", "s", "1.5h", "5 m", "10d", "-5s", "999999999h"}) {
    Result<Duration> d = ParseDuration(text);
    ASSERT_FALSE(d.has_value()) << text;
    EXPECT_NE(d.error().message().find(std::string("\"") + text + "\""), std::string::npos);
  }
}

TEST(DurationTest, FormatsInTheLargestUnitThatDividesAndParsesBack) {
  EXPECT_EQ(FormatDuration(hours(2)), "2h");
  EXPECT_EQ(FormatDuration(minutes(90)), "90m");
  EXPECT_EQ(FormatDuration(seconds(45)), "45s");
  EXPECT_EQ(FormatDuration(milliseconds(1500)), "1500ms");
  EXPECT_EQ(FormatDuration(Duration(0)), "0s");
  for (Duration d : {Duration(hours(3)), Duration(milliseconds(61001))}) {
    EXPECT_EQ(*ParseDuration(FormatDuration(d)), d);
  }
}

}  // namespace
}  // namespace strata::api
