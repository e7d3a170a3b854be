#include "promtool_check.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace strata::observe_test {

bool HavePromtool() { return std::system("command -v promtool >/dev/null 2>&1") == 0; }

ProgramResult CheckMetrics(const std::string& page) {
  std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("observe-metrics-" + std::to_string(getpid()));
  std::ofstream(file) << page;
  ProgramResult result = RunToEnd("promtool check metrics < " + file.string());
  std::filesystem::remove(file);
  return result;
}

void ExpectOnlyPeerNamingComplaints(const ProgramResult& result) {
  if (result.exit_code == 0) return;
  ASSERT_EQ(result.exit_code, 3) << result.output;
  std::istringstream lines(result.output);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    EXPECT_THAT(
        line, ::testing::AnyOf(::testing::MatchesRegex("DCGM_FI_DEV_ECC_[SD]BE_VOL_TOTAL counter "
                                                       "metrics should have \"_total\" suffix"),
                               ::testing::MatchesRegex("DCGM_FI_DEV_[A-Z_]+ label names should be "
                                                       "written in 'snake_case' not 'camelCase'"),
                               ::testing::MatchesRegex("vllm:[a-z0-9_]+ metric names should not "
                                                       "contain ':'")));
  }
}

}  // namespace strata::observe_test
