#include "engine/engine_server.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <future>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "net/http_client.h"

namespace strata::engine {
namespace {

using ::testing::HasSubstr;

constexpr auto kLiveness = std::chrono::seconds(60);  // a hang guard, not a timing assertion

EngineServerOptions Options() {
  EngineServerOptions options;
  options.model = "m";
  options.engine.profile = *ProfileByName("8b-h100");
  return options;
}

net::HttpRequest Completion(int max_tokens, bool stream) {
  net::HttpRequest request;
  request.method = "POST";
  request.target = "/v1/completions";
  request.headers.emplace_back("Content-Type", "application/json");
  request.body = nlohmann::json{
      {"model", "m"},
      {"prompt", "hello there"},
      {"max_tokens", max_tokens},
      {"stream",
       stream}}.dump();
  return request;
}

net::HttpRequest Get(std::string target) {
  net::HttpRequest request;
  request.target = std::move(target);
  return request;
}

TEST(EngineServerTest, TheKvCacheFollowsTheShareOfGpuMemory) {
  EngineServerOptions options = Options();
  options.gpu_memory_utilization = 0.45;
  EngineServer server(options, RealClock::Instance());
  ASSERT_TRUE(server.Start().ok());
  net::HttpClient client;
  Result<net::HttpResponse> metrics = client.Send("127.0.0.1", server.port(), Get("/metrics"));
  ASSERT_TRUE(metrics.has_value()) << metrics.error().ToString();
  EXPECT_THAT(metrics->body, HasSubstr("num_gpu_blocks=\"7649\""));
  EXPECT_THAT(metrics->body, HasSubstr("gpu_memory_utilization=\"0.45\""));
  server.Stop();

  options.gpu_memory_utilization = 0.2;
  EngineServer too_small(options, RealClock::Instance());
  Status started = too_small.Start();
  EXPECT_EQ(started.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(started.message(), HasSubstr("--gpu-memory-utilization"));
}

TEST(EngineServerTest, DrainFinishesTheStreamInProgressAndRefusesNewWork) {
  EngineServerOptions options = Options();
  options.time_scale = 0.1;  // 120 ms per token: the stream below lasts about 2.5 s
  EngineServer server(options, RealClock::Instance());
  ASSERT_TRUE(server.Start().ok());
  const int port = server.port();

  std::promise<void> first_chunk;
  auto stream = std::async(std::launch::async, [&] {
    net::HttpClient client;
    std::string body;
    bool told = false;
    Result<net::HttpResponse> response =
        client.SendStreaming("127.0.0.1", port, Completion(20, true), [&](std::string_view data) {
          body += data;
          if (!told) first_chunk.set_value();
          told = true;
          return true;
        });
    EXPECT_TRUE(response.has_value()) << response.error().ToString();
    return body;
  });
  ASSERT_EQ(first_chunk.get_future().wait_for(kLiveness), std::future_status::ready);

  server.BeginDrain();
  net::HttpClient client;
  Result<net::HttpResponse> health = client.Send("127.0.0.1", port, Get("/health"));
  ASSERT_TRUE(health.has_value()) << health.error().ToString();
  EXPECT_EQ(health->status, 503);
  Result<net::HttpResponse> refused = client.Send("127.0.0.1", port, Completion(4, false));
  ASSERT_TRUE(refused.has_value()) << refused.error().ToString();
  EXPECT_EQ(refused->status, 503);
  EXPECT_THAT(refused->body, HasSubstr("shutting down"));

  std::string body = stream.get();
  EXPECT_THAT(body, HasSubstr("data: [DONE]"));
  size_t tokens = 0;
  for (size_t at = body.find("\"text\""); at != std::string::npos;
       at = body.find("\"text\"", at + 1)) {
    ++tokens;
  }
  EXPECT_EQ(tokens, 20u) << body;
  EXPECT_TRUE(server.WaitDrained(kLiveness));
  server.Stop();
}

TEST(EngineServerTest, LoraInfoKeepsEverySeriesItSetAsVllmDoes) {
  EngineServerOptions options = Options();
  options.engine.lora_adapters = {"sql-lora"};
  options.time_scale = 0.1;  // the stream below lasts about a second
  EngineServer server(options, RealClock::Instance());
  ASSERT_TRUE(server.Start().ok());
  const int port = server.port();
  net::HttpRequest request = Completion(8, true);
  request.body = nlohmann::json{
      {"model", "sql-lora"},
      {"prompt", "hello there"},
      {"max_tokens", 8},
      {"stream",
       true}}.dump();
  std::string during;
  net::HttpClient streaming;
  Result<net::HttpResponse> streamed =
      streaming.SendStreaming("127.0.0.1", port, request, [&](std::string_view) {
        if (during.empty()) {
          net::HttpClient client;
          Result<net::HttpResponse> page = client.Send("127.0.0.1", port, Get("/metrics"));
          if (page.has_value()) during = page->body;
        }
        return true;
      });
  ASSERT_TRUE(streamed.has_value()) << streamed.error().ToString();
  EXPECT_THAT(during, HasSubstr("running_lora_adapters=\"sql-lora\""));
  net::HttpClient client;
  Result<net::HttpResponse> after = client.Send("127.0.0.1", port, Get("/metrics"));
  ASSERT_TRUE(after.has_value()) << after.error().ToString();
  // The adapter's series stays, as vLLM's does; the idle one is set again, later.
  EXPECT_THAT(after->body, HasSubstr("running_lora_adapters=\"sql-lora\""));
  EXPECT_THAT(after->body, HasSubstr("running_lora_adapters=\"\""));
  server.Stop();
}

TEST(EngineServerTest, MetricsCountHowLateEachStepWasDelivered) {
  EngineServerOptions options = Options();
  options.time_scale = 100;  // a 12 ms step lasts 0.12 ms of real time
  EngineServer server(options, RealClock::Instance());
  ASSERT_TRUE(server.Start().ok());
  net::HttpClient client;
  Result<net::HttpResponse> completion =
      client.Send("127.0.0.1", server.port(), Completion(5, false));
  ASSERT_TRUE(completion.has_value()) << completion.error().ToString();
  EXPECT_EQ(completion->status, 200);
  Result<net::HttpResponse> metrics = client.Send("127.0.0.1", server.port(), Get("/metrics"));
  ASSERT_TRUE(metrics.has_value()) << metrics.error().ToString();
  // One prefill step and four decode steps, each observed as it was delivered, before the
  // answer left.
  EXPECT_THAT(
      metrics->body,
      HasSubstr("strata_engine_step_lateness_seconds_count{model_name=\"m\",engine=\"0\"} 5"));
  server.Stop();
}

TEST(EngineServerTest, DrainWithNothingInProgressReturnsAtOnce) {
  EngineServer server(Options(), RealClock::Instance());
  ASSERT_TRUE(server.Start().ok());
  server.BeginDrain();
  EXPECT_TRUE(server.WaitDrained(kLiveness));
  net::HttpClient client;
  Result<net::HttpResponse> health = client.Send("127.0.0.1", server.port(), Get("/health"));
  ASSERT_TRUE(health.has_value());
  EXPECT_EQ(health->status, 503);
  server.Stop();
}

// Two replicas behind one gateway: their first completions must not share an id.
TEST(EngineServerTest, CompletionIdsDifferBetweenServers) {
  EngineServerOptions options = Options();
  options.time_scale = 0;
  EngineServer first(options, RealClock::Instance());
  EngineServer second(options, RealClock::Instance());
  ASSERT_TRUE(first.Start().ok());
  ASSERT_TRUE(second.Start().ok());
  net::HttpClient client;
  std::set<std::string> ids;
  for (EngineServer* server : {&first, &second}) {
    for (int i = 0; i < 2; ++i) {
      Result<net::HttpResponse> answer =
          client.Send("127.0.0.1", server->port(), Completion(2, false));
      ASSERT_TRUE(answer.has_value()) << answer.error().ToString();
      ASSERT_EQ(answer->status, 200) << answer->body;
      const std::string id = nlohmann::json::parse(answer->body)["id"];
      EXPECT_THAT(id, ::testing::MatchesRegex("cmpl-[0-9a-f]{32}"));
      ids.insert(id);
    }
  }
  EXPECT_EQ(ids.size(), 4u);
  first.Stop();
  second.Stop();
}

}  // namespace
}  // namespace strata::engine
