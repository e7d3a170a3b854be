// Starts the real `strata engine-sim` and talks to it over real sockets, as a gateway would.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "engine_sim_process.h"
#include "metrics/prometheus_text.h"
#include "net/http_client.h"

namespace strata {
namespace {

using nlohmann::json;
using testing::EngineSimProcess;
using ::testing::HasSubstr;

constexpr auto kLiveness = std::chrono::seconds(60);  // a hang guard, not a timing assertion

net::HttpRequest Post(std::string target, json body) {
  net::HttpRequest request;
  request.method = "POST";
  request.target = std::move(target);
  request.headers.emplace_back("Content-Type", "application/json");
  request.body = body.dump();
  return request;
}

net::HttpRequest Get(std::string target) {
  net::HttpRequest request;
  request.target = std::move(target);
  return request;
}

// The JSON payloads of an SSE body, "[DONE]" included as a string.
std::vector<json> SseEvents(const std::string& body) {
  std::vector<json> events;
  size_t start = 0;
  while ((start = body.find("data: ", start)) != std::string::npos) {
    size_t end = body.find("\n\n", start);
    std::string payload = body.substr(start + 6, end - start - 6);
    events.push_back(payload == "[DONE]" ? json("[DONE]") : json::parse(payload));
    start = end;
  }
  return events;
}

// The value of the sample `name` whose labels include model_name="m", or -1.
double MetricValue(const std::vector<metrics::Sample>& samples, std::string_view name) {
  for (const metrics::Sample& sample : samples) {
    const std::string* model = sample.Label("model_name");
    if (sample.name == name && model != nullptr && *model == "m") return sample.value;
  }
  return -1;
}

class EngineSimTest : public ::testing::Test {
 protected:
  ::testing::AssertionResult Launch(std::vector<std::string> args = {"--time-scale", "0"}) {
    Result<EngineSimProcess> process = EngineSimProcess::Start("m", args);
    if (!process) return ::testing::AssertionFailure() << process.error().ToString();
    process_.emplace(std::move(*process));
    return ::testing::AssertionSuccess();
  }
  Result<net::HttpResponse> Send(const net::HttpRequest& request) {
    return client_.Send("127.0.0.1", process_->port(), request);
  }
  std::vector<metrics::Sample> Metrics() {
    Result<net::HttpResponse> response = Send(Get("/metrics"));
    EXPECT_TRUE(response.has_value());
    EXPECT_EQ(response->Header("Content-Type"), metrics::kPrometheusContentType);
    Result<std::vector<metrics::Sample>> samples = metrics::ParsePrometheusText(response->body);
    EXPECT_TRUE(samples.has_value()) << samples.error().ToString();
    return samples.value_or(std::vector<metrics::Sample>{});
  }

  std::optional<EngineSimProcess> process_;
  net::HttpClient client_;
};

TEST_F(EngineSimTest, CompletionReturnsTextAndUsage) {
  ASSERT_TRUE(Launch());
  Result<net::HttpResponse> response =
      Send(Post("/v1/completions",
                {{"model", "m"}, {"prompt", "Hello, world! How are you?"}, {"max_tokens", 5}}));
  ASSERT_TRUE(response.has_value()) << response.error().ToString();
  ASSERT_EQ(response->status, 200) << response->body;
  json body = json::parse(response->body);
  EXPECT_EQ(body["object"], "text_completion");
  EXPECT_EQ(body["model"], "m");
  EXPECT_FALSE(body["choices"][0]["text"].get<std::string>().empty());
  EXPECT_EQ(body["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(body["usage"]["prompt_tokens"], 8);
  EXPECT_EQ(body["usage"]["completion_tokens"], 5);
  EXPECT_EQ(body["usage"]["total_tokens"], 13);
  // Deterministic: the same prompt gives the same text.
  Result<net::HttpResponse> again =
      Send(Post("/v1/completions",
                {{"model", "m"}, {"prompt", "Hello, world! How are you?"}, {"max_tokens", 5}}));
  EXPECT_EQ(json::parse(again->body)["choices"][0]["text"], body["choices"][0]["text"]);
  EXPECT_EQ(process_->Stop(), 0);
}

TEST_F(EngineSimTest, StreamingCompletionEndsWithUsageAndDone) {
  ASSERT_TRUE(Launch());
  net::HttpRequest request =
      Post("/v1/completions", {{"model", "m"},
                               {"prompt", "tell me a story"},
                               {"max_tokens", 4},
                               {"stream", true},
                               {"stream_options", {{"include_usage", true}}}});
  std::string body;
  Result<net::HttpResponse> response =
      client_.SendStreaming("127.0.0.1", process_->port(), request, [&](std::string_view data) {
        body.append(data);
        return true;
      });
  ASSERT_TRUE(response.has_value()) << response.error().ToString();
  EXPECT_EQ(response->Header("Content-Type"), "text/event-stream");
  std::vector<json> events = SseEvents(body);
  ASSERT_EQ(events.size(), 6u) << body;  // 4 tokens, usage, [DONE]
  std::string text;
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(events[i]["object"], "text_completion");
    EXPECT_TRUE(events[i]["usage"].is_null());
    text += events[i]["choices"][0]["text"].get<std::string>();
  }
  EXPECT_TRUE(events[2]["choices"][0]["finish_reason"].is_null());
  EXPECT_EQ(events[3]["choices"][0]["finish_reason"], "length");
  EXPECT_TRUE(events[4]["choices"].empty());
  EXPECT_EQ(events[4]["usage"]["prompt_tokens"], 4);
  EXPECT_EQ(events[4]["usage"]["completion_tokens"], 4);
  EXPECT_EQ(events[5], "[DONE]");
  EXPECT_FALSE(text.empty());
}

TEST_F(EngineSimTest, StreamingChatStartsWithTheAssistantRole) {
  ASSERT_TRUE(Launch());
  net::HttpRequest request = Post(
      "/v1/chat/completions", {{"model", "m"},
                               {"messages", json::array({{{"role", "user"}, {"content", "hi"}}})},
                               {"max_tokens", 3},
                               {"stream", true}});
  std::string body;
  ASSERT_TRUE(client_
                  .SendStreaming("127.0.0.1", process_->port(), request,
                                 [&](std::string_view data) {
                                   body.append(data);
                                   return true;
                                 })
                  .has_value());
  std::vector<json> events = SseEvents(body);
  ASSERT_EQ(events.size(), 5u) << body;  // role, 3 tokens, [DONE]
  EXPECT_EQ(events[0]["object"], "chat.completion.chunk");
  EXPECT_EQ(events[0]["choices"][0]["delta"]["role"], "assistant");
  EXPECT_FALSE(events[1].contains("usage"));
  EXPECT_EQ(events[3]["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(events[4], "[DONE]");

  Result<net::HttpResponse> full = Send(Post(
      "/v1/chat/completions", {{"model", "m"},
                               {"messages", json::array({{{"role", "user"}, {"content", "hi"}}})},
                               {"max_tokens", 3}}));
  json message = json::parse(full->body)["choices"][0]["message"];
  EXPECT_EQ(message["role"], "assistant");
  EXPECT_FALSE(message["content"].get<std::string>().empty());
}

TEST_F(EngineSimTest, ModelsListsTheBaseModelAndLoraAdapters) {
  ASSERT_TRUE(Launch({"--time-scale", "0", "--lora", "sql,poetry"}));
  json body = json::parse(Send(Get("/v1/models"))->body);
  ASSERT_EQ(body["data"].size(), 3u);
  EXPECT_EQ(body["data"][0]["id"], "m");
  EXPECT_EQ(body["data"][1]["id"], "sql");
  EXPECT_EQ(body["data"][1]["parent"], "m");
  // An adapter is served under its own name.
  Result<net::HttpResponse> lora =
      Send(Post("/v1/completions", {{"model", "poetry"}, {"prompt", "a rose"}, {"max_tokens", 2}}));
  EXPECT_EQ(lora->status, 200) << lora->body;
  EXPECT_EQ(json::parse(lora->body)["model"], "poetry");
}

TEST_F(EngineSimTest, HealthTurnsReadyAfterTheStartupDelay) {
  ASSERT_TRUE(Launch({"--time-scale", "0", "--startup-delay", "2s"}));
  EXPECT_EQ(Send(Get("/health"))->status, 503);
  EXPECT_EQ(Send(Post("/v1/completions", {{"model", "m"}, {"prompt", "x"}}))->status, 503);
  auto deadline = std::chrono::steady_clock::now() + kLiveness;
  int status = 503;
  while (status != 200 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // polling another process
    status = Send(Get("/health"))->status;
  }
  EXPECT_EQ(status, 200);
}

TEST_F(EngineSimTest, MetricsUseVllmNamesAndCountWhatWasServed) {
  ASSERT_TRUE(Launch({"--time-scale", "0", "--kv-blocks", "1000", "--block-size", "4"}));
  std::string shared = "You are a helpful assistant who answers in one short sentence only.";
  for (const char* question : {" What is a GPU?", " What is a TPU?"}) {
    ASSERT_EQ(Send(Post("/v1/completions",
                        {{"model", "m"}, {"prompt", shared + question}, {"max_tokens", 3}}))
                  ->status,
              200);
  }
  std::vector<metrics::Sample> samples = Metrics();
  EXPECT_EQ(MetricValue(samples, "vllm:num_requests_running"), 0);
  EXPECT_EQ(MetricValue(samples, "vllm:num_requests_waiting"), 0);
  EXPECT_EQ(MetricValue(samples, "vllm:kv_cache_usage_perc"), 0);
  EXPECT_EQ(MetricValue(samples, "vllm:prompt_tokens_total"), 2 * 18);
  EXPECT_EQ(MetricValue(samples, "vllm:generation_tokens_total"), 6);
  EXPECT_EQ(MetricValue(samples, "vllm:prefix_cache_queries_total"), 2 * 18);
  // The second prompt shares its first 16 tokens (4 whole blocks of 4) with the first.
  EXPECT_EQ(MetricValue(samples, "vllm:prefix_cache_hits_total"), 16);
  EXPECT_EQ(MetricValue(samples, "vllm:num_preemptions_total"), 0);
  EXPECT_EQ(MetricValue(samples, "vllm:time_to_first_token_seconds_count"), 2);
  EXPECT_EQ(MetricValue(samples, "vllm:inter_token_latency_seconds_count"), 4);
  EXPECT_EQ(MetricValue(samples, "vllm:e2e_request_latency_seconds_count"), 2);
  bool cache_config = false;
  bool lora_info = false;
  for (const metrics::Sample& sample : samples) {
    if (sample.name == "vllm:cache_config_info") {
      cache_config =
          *sample.Label("block_size") == "4" && *sample.Label("num_gpu_blocks") == "1000";
    }
    if (sample.name == "vllm:lora_requests_info") lora_info = sample.Label("max_lora") != nullptr;
    if (sample.name == "vllm:num_requests_running") {
      EXPECT_EQ(*sample.Label("engine"), "0");
    }
  }
  EXPECT_TRUE(cache_config);
  EXPECT_TRUE(lora_info);
}

TEST_F(EngineSimTest, BadRequestsGetOpenAiErrors) {
  ASSERT_TRUE(Launch());
  Result<net::HttpResponse> bad_tokens =
      Send(Post("/v1/completions", {{"model", "m"}, {"prompt", "x"}, {"max_tokens", -1}}));
  ASSERT_EQ(bad_tokens->status, 400);
  json error = json::parse(bad_tokens->body)["error"];
  EXPECT_EQ(error["param"], "max_tokens");
  EXPECT_THAT(error["message"].get<std::string>(), HasSubstr("max_tokens"));

  net::HttpRequest not_json = Post("/v1/completions", {});
  not_json.body = "{\"model\": ";
  Result<net::HttpResponse> garbled = Send(not_json);
  EXPECT_EQ(garbled->status, 400);
  EXPECT_THAT(garbled->body, HasSubstr("not valid JSON"));

  Result<net::HttpResponse> unknown =
      Send(Post("/v1/completions", {{"model", "other"}, {"prompt", "x"}}));
  EXPECT_EQ(unknown->status, 404);
  EXPECT_EQ(json::parse(unknown->body)["error"]["param"], "model");

  Result<net::HttpResponse> empty = Send(Post("/v1/completions", {{"model", "m"}, {"prompt", ""}}));
  EXPECT_EQ(empty->status, 400);
  EXPECT_THAT(empty->body, HasSubstr("prompt"));
  // Still serving afterwards.
  EXPECT_EQ(Send(Post("/v1/completions", {{"model", "m"}, {"prompt", "x"}}))->status, 200);
}

TEST_F(EngineSimTest, ClientDisconnectAbortsTheRequest) {
  ASSERT_TRUE(Launch({"--time-scale", "1"}));
  net::HttpRequest request = Post(
      "/v1/completions",
      {{"model", "m"}, {"prompt", "write a long essay"}, {"max_tokens", 100000}, {"stream", true}});
  Result<net::HttpResponse> response = client_.SendStreaming(
      "127.0.0.1", process_->port(), request, [](std::string_view) { return false; });
  ASSERT_TRUE(response.has_value()) << response.error().ToString();
  auto deadline = std::chrono::steady_clock::now() + kLiveness;
  double running = 1;
  while (running != 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // polling another process
    running = MetricValue(Metrics(), "vllm:num_requests_running");
  }
  EXPECT_EQ(running, 0);
  EXPECT_LT(MetricValue(Metrics(), "vllm:generation_tokens_total"), 100000);
}

}  // namespace
}  // namespace strata
