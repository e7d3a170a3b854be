#include "metrics/prometheus_text.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

namespace strata::metrics {
namespace {

using ::testing::HasSubstr;

// An excerpt in the shape vLLM serves.
constexpr std::string_view kVllmPage =
    "# HELP vllm:num_requests_running Number of requests in model execution batches.\n"
    "# TYPE vllm:num_requests_running gauge\n"
    "vllm:num_requests_running{engine=\"0\",model_name=\"meta-llama/Llama-3.1-8B\"} 3.0\n"
    "# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.\n"
    "# TYPE vllm:kv_cache_usage_perc gauge\n"
    "vllm:kv_cache_usage_perc{engine=\"0\",model_name=\"m\"} 0.4375\n"
    "# TYPE vllm:time_to_first_token_seconds histogram\n"
    "vllm:time_to_first_token_seconds_bucket{engine=\"0\",le=\"0.001\",model_name=\"m\"} 0.0\n"
    "vllm:time_to_first_token_seconds_bucket{engine=\"0\",le=\"+Inf\",model_name=\"m\"} 12.0\n"
    "vllm:prefix_cache_queries_total{engine=\"0\",model_name=\"m\"} 1.2e+06\n";

TEST(ParsePrometheusTextTest, ParsesVllmShapedPage) {
  Result<std::vector<Sample>> samples = ParsePrometheusText(kVllmPage);
  ASSERT_TRUE(samples.has_value()) << samples.error().ToString();
  ASSERT_EQ(samples->size(), 5u);
  const Sample& running = (*samples)[0];
  EXPECT_EQ(running.name, "vllm:num_requests_running");
  EXPECT_EQ(*running.Label("model_name"), "meta-llama/Llama-3.1-8B");
  EXPECT_EQ(*running.Label("engine"), "0");
  EXPECT_EQ(running.Label("missing"), nullptr);
  EXPECT_EQ(running.value, 3);
  EXPECT_EQ((*samples)[1].value, 0.4375);
  EXPECT_EQ(*(*samples)[3].Label("le"), "+Inf");
  EXPECT_EQ((*samples)[4].value, 1.2e6);
}

TEST(ParsePrometheusTextTest, AcceptsSpecialValuesTimestampsSpacesAndCrlf) {
  Result<std::vector<Sample>> samples = ParsePrometheusText(
      "a +Inf\r\nb -Inf 1700000000000\n  c NaN\nd { x = \"1\" , } 7\n\n# comment\ne{} 1e-3\n");
  ASSERT_TRUE(samples.has_value()) << samples.error().ToString();
  ASSERT_EQ(samples->size(), 5u);
  EXPECT_TRUE(std::isinf((*samples)[0].value) && (*samples)[0].value > 0);
  EXPECT_TRUE(std::isinf((*samples)[1].value) && (*samples)[1].value < 0);
  EXPECT_TRUE(std::isnan((*samples)[2].value));
  EXPECT_EQ(*(*samples)[3].Label("x"), "1");
  EXPECT_EQ((*samples)[4].value, 0.001);
}

TEST(ParsePrometheusTextTest, UnescapesLabelValues) {
  Result<std::vector<Sample>> samples = ParsePrometheusText("m{p=\"a\\\"b\\\\c\\nd\"} 1\n");
  ASSERT_TRUE(samples.has_value()) << samples.error().ToString();
  EXPECT_EQ(*(*samples)[0].Label("p"), "a\"b\\c\nd");
}

TEST(ParsePrometheusTextTest, ErrorsNameTheLine) {
  struct Case {
    std::string text;
    std::string message;
  };
  std::vector<Case> cases = {
      {"ok 1\n{x=\"1\"} 2\n", "line 2 column 1: expected a metric name"},
      {"m{x 1\n", "line 1 column 5: expected '=' after label name \"x\""},
      {"m{x=1} 1\n", "expected '\"' to open the value of label \"x\""},
      {"m{x=\"1} 1\n", "unterminated value of label \"x\""},
      {"m{x=\"\\q\"} 1\n", "unknown escape '\\q' in label \"x\""},
      {"m{x=\"1\" y=\"2\"} 1\n", "expected ',' or '}' after the value of label \"x\""},
      {"m\n", "expected a sample value"},
      {"m abc\n", "invalid sample value \"abc\""},
      {"m 1 2 3\n", "unexpected text after the timestamp"},
      {"m 1 x\n", "expected a timestamp or the end of the line"},
  };
  for (const Case& c : cases) {
    Result<std::vector<Sample>> samples = ParsePrometheusText(c.text);
    ASSERT_FALSE(samples.has_value()) << c.text;
    EXPECT_EQ(samples.error().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(samples.error().message(), HasSubstr(c.message)) << c.text;
  }
}

TEST(FormatSampleValueTest, WritesPrometheusSpellings) {
  EXPECT_EQ(FormatSampleValue(42), "42");
  EXPECT_EQ(FormatSampleValue(0.1), "0.1");
  EXPECT_EQ(FormatSampleValue(INFINITY), "+Inf");
  EXPECT_EQ(FormatSampleValue(-INFINITY), "-Inf");
  EXPECT_EQ(FormatSampleValue(NAN), "NaN");
}

}  // namespace
}  // namespace strata::metrics
