// The checkpoint subresource: one POST from a worker records a checkpoint written now.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/pod_contract.h"
#include "server/test_api_server.h"

namespace strata::server {
namespace {

using Json = nlohmann::json;

constexpr char kCheckpointPath[] = "/api/v1/namespaces/default/pods/worker-0/checkpoint";

TEST(PodCheckpointTest, APostRecordsTheLastCheckpointAtTheApisTime) {
  FakeClock clock(TimePoint(std::chrono::seconds(1'800'000'000)));
  RestApiOptions options;
  options.clock = &clock;
  testing::TestApiServer server(options);
  auto admin = server.Client();
  Json pod = {{"apiVersion", "strata.dev/v1alpha1"},
              {"kind", "Pod"},
              {"metadata", {{"name", "worker-0"}, {"namespace", "default"}}},
              {"spec", {{"nodeName", "node-a"}, {"template", {{"command", {"true"}}}}}}};
  ASSERT_TRUE(
      admin->Call("POST", "/api/v1/namespaces/default/pods", pod.dump(), "application/json"));

  auto reported = admin->Call("POST", kCheckpointPath, "", "application/json");
  ASSERT_TRUE(reported) << reported.error().ToString();
  auto stored = admin->Get("/api/v1/namespaces/default/pods/worker-0");
  ASSERT_TRUE(stored);
  EXPECT_EQ((*stored)["metadata"]["annotations"][api::kLastCheckpointAnnotation],
            FormatRfc3339(clock.Now()));

  clock.Advance(std::chrono::minutes(30));
  ASSERT_TRUE(admin->Call("POST", kCheckpointPath, "", "application/json"));
  stored = admin->Get("/api/v1/namespaces/default/pods/worker-0");
  ASSERT_TRUE(stored);
  EXPECT_EQ((*stored)["metadata"]["annotations"][api::kLastCheckpointAnnotation],
            FormatRfc3339(clock.Now()));
}

TEST(PodCheckpointTest, OnlyAPostToAnExistingPodIsAccepted) {
  testing::TestApiServer server;
  auto admin = server.Client();
  auto missing = admin->Call("POST", kCheckpointPath, "", "application/json");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), StatusCode::kNotFound);
  auto wrong_method = admin->Get(kCheckpointPath);
  ASSERT_FALSE(wrong_method);
  EXPECT_EQ(wrong_method.error().code(), StatusCode::kUnimplemented);
  auto not_a_pod =
      admin->Call("POST", "/apis/strata.dev/v1alpha1/namespaces/default/jobs/j/checkpoint", "",
                  "application/json");
  ASSERT_FALSE(not_a_pod);
  EXPECT_EQ(not_a_pod.error().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace strata::server
