#include "sim/philly_trace.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

namespace strata::sim {
namespace {

constexpr std::string_view kHeader = "timestamp,duration,num_gpus,gpu_time,cluster\n";

std::string ErrorOf(std::string_view csv) {
  const auto jobs = ParsePhillyTrace(csv, "t.csv");
  EXPECT_FALSE(jobs.has_value());
  return jobs ? "" : jobs.error().message();
}

TEST(PhillyTraceTest, ParsesRowsInFileOrder) {
  const std::string csv = std::string(kHeader) +
                          "2017-10-09 07:01:55,66.0,1,66.0,11cb48\r\n"
                          "2017-09-04 00:00:00,2951,16,47216.0,6214e9\n"
                          "\n";
  const auto jobs = ParsePhillyTrace(csv, "t.csv");
  ASSERT_TRUE(jobs.has_value()) << jobs.error().message();
  ASSERT_EQ(jobs->size(), 2u);
  EXPECT_EQ((*jobs)[0].cluster, "11cb48");
  EXPECT_EQ((*jobs)[0].gpus, 1);
  EXPECT_DOUBLE_EQ((*jobs)[0].duration_s, 66.0);
  EXPECT_EQ((*jobs)[1].gpus, 16);
  // 2017-09-04T00:00:00Z is 1504483200 s after the epoch; the first row is 35 days later.
  EXPECT_EQ((*jobs)[1].submitted, TimePoint(std::chrono::seconds(1504483200)));
  EXPECT_EQ((*jobs)[0].submitted - (*jobs)[1].submitted,
            std::chrono::seconds(35 * 86400 + 7 * 3600 + 60 + 55));
}

TEST(PhillyTraceTest, FindsColumnsByName) {
  const auto jobs =
      ParsePhillyTrace("cluster,num_gpus,duration,timestamp\nvc1,4,10,2017-09-04 10:30:41\n", "t");
  ASSERT_TRUE(jobs.has_value()) << jobs.error().message();
  EXPECT_EQ((*jobs)[0].gpus, 4);
  EXPECT_EQ((*jobs)[0].cluster, "vc1");
}

TEST(PhillyTraceTest, ErrorsNameFileLineAndColumn) {
  EXPECT_EQ(ErrorOf("timestamp,duration,cluster\n"), "t.csv:1:1: header has no column 'num_gpus'");
  EXPECT_EQ(ErrorOf(std::string(kHeader) + "2017-09-04 10:30:41,5,1,5\n"),
            "t.csv:2:1: row has 4 fields, the header 5");
  EXPECT_EQ(ErrorOf(std::string(kHeader) + "2017-13-04 10:30:41,5,1,5,a\n"),
            "t.csv:2:1: timestamp '2017-13-04 10:30:41' is not YYYY-MM-DD HH:MM:SS");
  EXPECT_EQ(ErrorOf(std::string(kHeader) + "2017-09-04 10:30:41,-5,1,5,a\n"),
            "t.csv:2:21: duration '-5' is not a positive number of seconds");
  EXPECT_EQ(ErrorOf(std::string(kHeader) + "\n2017-09-04 10:30:41,5,1.5,5,a\n"),
            "t.csv:3:23: num_gpus '1.5' is not a positive whole number");
  EXPECT_EQ(ErrorOf(std::string(kHeader) + "2017-09-04 10:30:41,5,0,5,a\n"),
            "t.csv:2:23: num_gpus '0' is not a positive whole number");
  EXPECT_EQ(ErrorOf(std::string(kHeader) + "2017-09-04 10:30:41,5,1,5,\n"),
            "t.csv:2:27: cluster is empty");
  EXPECT_EQ(ErrorOf(""), "t.csv: no header row");
}

TEST(PhillyTraceTest, ReadsAFileAndNamesItInErrors) {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("philly_trace_test_" + std::to_string(getpid()));
  {
    std::ofstream out(path);
    out << kHeader << "2017-09-04 10:30:41,5,1,5,a\n2017-09-04 10:30:41,x,1,5,a\n";
  }
  const auto jobs = ReadPhillyTrace(path.string());
  std::filesystem::remove(path);
  ASSERT_FALSE(jobs.has_value());
  EXPECT_EQ(jobs.error().message(),
            path.string() + ":3:21: duration 'x' is not a positive number of seconds");
  const auto missing = ReadPhillyTrace(path.string());
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace strata::sim
