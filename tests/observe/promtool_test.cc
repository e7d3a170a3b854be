// The whole exposition a control plane serves for a simulated cluster, checked by Prometheus'
// own linter (`promtool check metrics`, Debian package prometheus).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "observe/cluster_cost.h"
#include "observe/test_cluster.h"
#include "promtool_check.h"

namespace strata::observe {
namespace {

TEST(PromtoolTest, TheMetricsPageOfASimulatedClusterIsValidPrometheusText) {
  if (!observe_test::HavePromtool()) {
    GTEST_SKIP() << "promtool not found: install Debian's prometheus package (make deps)";
  }
  std::unique_ptr<store::Store> store = testing::SimulatedClusterStore(4);
  metrics::Registry registry;
  registry.AddCounter("strata_apiserver_requests_total", "Requests.", {"verb", "code"})
      .With({"list", "200"})
      .Increment();
  ClusterMetricsOptions options;
  options.service_tokens = [] { return std::map<std::string, double>{{"llm", 1e6}}; };
  AddClusterMetrics(registry, std::make_shared<ClusterObjectsCache>(*store), options);
  std::string page = registry.RenderText();
  ASSERT_THAT(page, ::testing::HasSubstr("DCGM_FI_DEV_GPU_UTIL{"));
  ASSERT_THAT(page, ::testing::HasSubstr("pod=\"train-0\""));
  observe_test::ProgramResult result = observe_test::CheckMetrics(page);
  observe_test::ExpectOnlyPeerNamingComplaints(result);
}

TEST(PromtoolTest, ABrokenPageIsRejected) {
  if (!observe_test::HavePromtool()) {
    GTEST_SKIP() << "promtool not found: install Debian's prometheus package (make deps)";
  }
  // Guards the check above: promtool must fail on what is not Prometheus text.
  observe_test::ProgramResult result =
      observe_test::CheckMetrics("DCGM_FI_DEV_GPU_UTIL{gpu=0} x\n");
  EXPECT_NE(result.exit_code, 0);
  EXPECT_NE(result.exit_code, 3) << result.output;
}

}  // namespace
}  // namespace strata::observe
