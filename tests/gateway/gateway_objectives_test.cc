// Per-request priority at the gateway, in front of a real loopback replica: a request naming a
// GAIE InferenceObjective in the x-gateway-inference-objective header waits for its tenant's
// quota in its objective's class, not its tenant's, so under saturation (the quota queue full) a
// sheddable request is the one refused and a critical one keeps its place. The quota buckets
// run on a FakeClock, so nothing refills unless the test advances it.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <future>
#include <nlohmann/json.hpp>
#include <thread>

#include "common/clock.h"
#include "fake_engine.h"
#include "gateway/config.h"
#include "gateway/server.h"

namespace strata::gateway {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using testing::FakeEngine;

// POSTs a chat completion for model "m" of up to 100 tokens as tenant "small", naming
// `objective` in the header when not empty; returns the HTTP status (-1: no answer).
int Chat(uint16_t port, const std::string& objective) {
  const std::string body =
      nlohmann::json{{"model", "m"},
                     {"max_tokens", 100},
                     {"messages", {{{"role", "user"}, {"content", "Say hello."}}}}}
          .dump();
  const std::string header =
      objective.empty() ? "" : "x-gateway-inference-objective: " + objective + "\r\n";
  asio::io_context io;
  tcp::socket socket(io);
  socket.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
  asio::write(socket, asio::buffer(fmt::format(
                          "POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\nContent-Type: "
                          "application/json\r\nAuthorization: Bearer sk-small\r\n{}"
                          "Content-Length: {}\r\nConnection: close\r\n\r\n{}",
                          header, body.size(), body)));
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  beast::error_code ec;
  http::read(socket, buffer, parser, ec);
  return ec ? -1 : parser.get().result_int();
}

// The count of requests of priority class `priority` in the gateway's metrics.
int PriorityCount(const GatewayServer& gateway, std::string_view priority) {
  const std::string metrics = gateway.MetricsText();
  const std::string series = fmt::format(
      "strata_gateway_priority_requests_total{{model=\"m\",version=\"v1\",priority=\"{}\"}} ",
      priority);
  const size_t at = metrics.find(series);
  return at == std::string::npos ? 0 : std::stoi(metrics.substr(at + series.size()));
}

// Waits, bounded, until `count` of class `priority` have been counted (a request is counted once
// it is in the quota queue). The bound only keeps a broken gateway from hanging the test.
bool CountReaches(const GatewayServer& gateway, std::string_view priority, int count) {
  for (int i = 0; i < 3000 && PriorityCount(gateway, priority) < count; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return PriorityCount(gateway, priority) >= count;
}

TEST(GatewayObjectivesTest, UnderSaturationTheSheddableRequestIsRefusedAndTheCriticalWaits) {
  FakeEngine engine("e");
  auto config = ParseGatewayConfig(fmt::format(R"(
limits: {{maxQueued: 1, maxQueueWaitMs: 60000}}
models:
- name: m
  objectives: {{realtime: critical, batch: sheddable}}
  versions: [{{name: v1, endpoints: ["{}"]}}]
tenants:
- {{name: small, keys: [sk-small], tokensPerMinute: 60}}
)",
                                               engine.address()));
  ASSERT_TRUE(config.has_value()) << config.error().ToString();
  FakeClock clock;
  auto started = GatewayServer::Start(std::move(*config), "127.0.0.1", 0, clock);
  ASSERT_TRUE(started.has_value()) << started.error().ToString();
  GatewayServer& gateway = **started;
  const uint16_t port = gateway.port();

  // Each request reserves the whole bucket (its estimate is above 60 tokens) and gives back what
  // it did not use: with the clock still, the next one waits.
  EXPECT_EQ(Chat(port, ""), 200);
  EXPECT_EQ(PriorityCount(gateway, "standard"), 1);
  // A sheddable request takes the one place in the queue...
  auto batch = std::async(std::launch::async, [&] { return Chat(port, "batch"); });
  ASSERT_TRUE(CountReaches(gateway, "sheddable", 1));
  // ...until a critical one comes: the sheddable one is refused (429), the critical one waits.
  auto realtime = std::async(std::launch::async, [&] { return Chat(port, "realtime"); });
  EXPECT_EQ(batch.get(), 429);
  ASSERT_TRUE(CountReaches(gateway, "critical", 1));
  // With the critical request queued, another sheddable one is refused at once.
  EXPECT_EQ(Chat(port, "batch"), 429);
  EXPECT_EQ(PriorityCount(gateway, "sheddable"), 2);
  // A minute's refill admits the critical request.
  clock.Advance(std::chrono::minutes(1));
  EXPECT_EQ(realtime.get(), 200);
  // An objective the model does not list leaves the tenant's class, as GAIE's picker gives an
  // unknown objective the default priority (the tenant now unlimited, nothing waits).
  ASSERT_TRUE(gateway.SetTenants({{"small", {"sk-small"}, 0, PriorityClass::kStandard}}).ok());
  EXPECT_EQ(Chat(port, "no-such-objective"), 200);
  EXPECT_EQ(PriorityCount(gateway, "standard"), 2);
}

}  // namespace
}  // namespace strata::gateway
