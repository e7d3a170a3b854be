// The whole exposition a control plane serves for a simulated cluster, checked by Prometheus'
// own linter (`promtool check metrics`, Debian package prometheus).

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "telemetry/cluster_cost.h"
#include "telemetry/test_cluster.h"

namespace strata::telemetry {
namespace {

struct CommandResult {
  int exit_code = -1;
  std::string output;
};

CommandResult RunWithInput(const std::string& command, const std::string& input) {
  std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("observe-metrics-" + std::to_string(getpid()));
  std::ofstream(file) << input;
  CommandResult result;
  FILE* pipe = popen((command + " < " + file.string() + " 2>&1").c_str(), "r");
  if (pipe != nullptr) {
    char buffer[4096];
    size_t n;
    while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) result.output.append(buffer, n);
    int status = pclose(pipe);
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  std::filesystem::remove(file);
  return result;
}

bool HavePromtool() { return std::system("command -v promtool >/dev/null 2>&1") == 0; }

// The only complaints allowed are about dcgm-exporter's own names, which strata keeps so that
// existing dashboards and alerts work unchanged: counters ending in "_TOTAL", not "_total", and
// the labels UUID, modelName and Hostname.
void ExpectOnlyDcgmNamingComplaints(const CommandResult& result) {
  if (result.exit_code == 0) return;
  // promtool: 1 for a page that does not parse, 3 for lint problems.
  ASSERT_EQ(result.exit_code, 3) << result.output;
  std::istringstream lines(result.output);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    EXPECT_THAT(
        line, ::testing::AnyOf(::testing::MatchesRegex("DCGM_FI_DEV_ECC_[SD]BE_VOL_TOTAL counter "
                                                       "metrics should have \"_total\" suffix"),
                               ::testing::MatchesRegex("DCGM_FI_DEV_[A-Z_]+ label names should be "
                                                       "written in 'snake_case' not 'camelCase'")));
  }
}

TEST(PromtoolTest, TheMetricsPageOfASimulatedClusterIsValidPrometheusText) {
  if (!HavePromtool()) {
    GTEST_SKIP() << "promtool not found: install Debian's prometheus package (make deps)";
  }
  std::unique_ptr<store::Store> store = testing::SimulatedClusterStore(4);
  Registry registry;
  registry.AddCounter("strata_apiserver_requests_total", "Requests.", {"verb", "code"})
      .With({"list", "200"})
      .Increment();
  ClusterMetricsOptions options;
  options.service_tokens = [] { return std::map<std::string, double>{{"llm", 1e6}}; };
  AddClusterMetrics(registry, *store, options);
  std::string page = registry.RenderText();
  ASSERT_THAT(page, ::testing::HasSubstr("DCGM_FI_DEV_GPU_UTIL{"));
  ASSERT_THAT(page, ::testing::HasSubstr("pod=\"train-0\""));
  CommandResult result = RunWithInput("promtool check metrics", page);
  ExpectOnlyDcgmNamingComplaints(result);
}

TEST(PromtoolTest, ABrokenPageIsRejected) {
  if (!HavePromtool()) {
    GTEST_SKIP() << "promtool not found: install Debian's prometheus package (make deps)";
  }
  // Guards the check above: promtool must fail on what is not Prometheus text.
  CommandResult result = RunWithInput("promtool check metrics", "DCGM_FI_DEV_GPU_UTIL{gpu=0} x\n");
  EXPECT_NE(result.exit_code, 0);
  EXPECT_NE(result.exit_code, 3) << result.output;
}

}  // namespace
}  // namespace strata::telemetry
