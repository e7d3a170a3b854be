// The gateway's routes changing at run time, in front of real loopback replicas: replicas added
// get traffic, a removed replica finishes its stream and gets nothing new, the activator holds
// requests for a version with no replica until one comes (or answers 503), the in-process
// signals count what happened, and a bad table changes nothing.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <functional>
#include <future>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

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

struct Reply {
  int status = -1;  // -1: the connection closed without an answer
  std::string served_by;
  std::string body;
};

Reply Post(uint16_t port, const std::string& model, bool stream = false) {
  const std::string body =
      nlohmann::json{{"model", model},
                     {"stream", stream},
                     {"max_tokens", 16},
                     {"messages", {{{"role", "user"}, {"content", "Say hello."}}}}}
          .dump();
  asio::io_context io;
  tcp::socket socket(io);
  socket.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
  asio::write(socket, asio::buffer(fmt::format(
                          "POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\nContent-Type: "
                          "application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{}",
                          body.size(), body)));
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  beast::error_code ec;
  http::read(socket, buffer, parser, ec);
  Reply reply;
  if (ec) return reply;
  reply.status = parser.get().result_int();
  reply.served_by = std::string(parser.get()["x-served-by"]);
  reply.body = parser.get().body();
  return reply;
}

// The text of an SSE chat stream, and whether it ended with [DONE].
std::pair<std::string, bool> StreamText(const std::string& body) {
  std::string text;
  size_t at = 0;
  while ((at = body.find("data: {", at)) != std::string::npos) {
    const size_t end = body.find("\n\n", at);
    auto chunk = nlohmann::json::parse(body.substr(at + 6, end - at - 6));
    if (!chunk["choices"].empty()) text += chunk["choices"][0]["delta"]["content"];
    at = end;
  }
  return {text, body.find("data: [DONE]") != std::string::npos};
}

// Waits, bounded, until `condition` holds; returns whether it did. Never asserts timing: the
// bound only keeps a broken gateway from hanging the test.
bool Eventually(const std::function<bool()>& condition) {
  for (int i = 0; i < 3000; ++i) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return condition();
}

ModelConfig Model(const std::string& name, std::vector<std::string> endpoints) {
  ModelConfig model;
  model.name = name;
  model.versions.push_back(VersionConfig{"v1", 1, std::move(endpoints)});
  return model;
}

class GatewayRoutesTest : public ::testing::Test {
 protected:
  void Start(std::vector<ModelConfig> models, LimitsConfig limits = {}) {
    GatewayConfig config;
    config.models = std::move(models);
    config.limits = limits;
    config.threads = 2;
    config.picker.policy = "round-robin";
    config.scrape_interval = std::chrono::milliseconds(20);
    auto server = GatewayServer::Start(std::move(config), "127.0.0.1", 0, RealClock::Instance());
    ASSERT_TRUE(server.has_value()) << server.error().ToString();
    gateway_ = std::move(*server);
  }
  uint16_t port() const { return gateway_->port(); }
  // The signals of `model`'s version v1.
  VersionSignals SignalsOf(const std::string& model) const {
    for (VersionSignals& signals : gateway_->Signals()) {
      if (signals.model == model) return signals;
    }
    ADD_FAILURE() << "no signals for " << model;
    return {};
  }

  std::unique_ptr<GatewayServer> gateway_;
};

TEST_F(GatewayRoutesTest, StartsWithNoModelAndServesWhatSetRoutesAdds) {
  FakeEngine a("a");
  Start({});
  EXPECT_EQ(Post(port(), "m").status, 404);
  EXPECT_TRUE(gateway_->Signals().empty());
  ASSERT_TRUE(gateway_->SetRoutes({Model("m", {a.address()})}).ok());
  Reply reply = Post(port(), "m");
  EXPECT_EQ(reply.status, 200);
  EXPECT_EQ(reply.served_by, "a");
  ASSERT_EQ(gateway_->Signals().size(), 1u);
}

TEST_F(GatewayRoutesTest, SignalsCountTheTimeReplicasSpendBeforeFirstTokens) {
  FakeEngine a("a");
  Start({Model("m", {a.address()})});
  EXPECT_EQ(SignalsOf("m").prefill_busy_seconds_total, 0);
  for (int i = 0; i < 3; ++i) ASSERT_EQ(Post(port(), "m").status, 200);
  // Each request waited for its answer's first byte a little; with none waiting now the
  // counter stands still.
  const double busy = SignalsOf("m").prefill_busy_seconds_total;
  EXPECT_GT(busy, 0);
  EXPECT_EQ(SignalsOf("m").prefill_busy_seconds_total, busy);
}

TEST_F(GatewayRoutesTest, ReplicasAndModelsAddedAtRunTimeGetTraffic) {
  FakeEngine a("a"), b("b");
  Start({Model("m", {a.address()})});
  EXPECT_EQ(Post(port(), "m").served_by, "a");
  EXPECT_EQ(Post(port(), "n").status, 404);

  ASSERT_TRUE(
      gateway_->SetRoutes({Model("m", {a.address(), b.address()}), Model("n", {b.address()})})
          .ok());
  std::map<std::string, int> served;
  for (int i = 0; i < 20; ++i) ++served[Post(port(), "m").served_by];
  EXPECT_GT(served["a"], 0);
  EXPECT_GT(served["b"], 0);
  EXPECT_EQ(served["a"] + served["b"], 20);
  Reply n = Post(port(), "n");
  EXPECT_EQ(n.status, 200);
  EXPECT_EQ(n.served_by, "b");

  const VersionSignals m = SignalsOf("m");
  EXPECT_EQ(m.arrivals_total, 21);
  EXPECT_EQ(m.answered_total, 21);
  ASSERT_EQ(m.endpoints.size(), 2u);
  EXPECT_EQ(m.endpoints[0].id, a.address());
  // The replica added is scraped from now on.
  b.SetWaiting(3);
  EXPECT_TRUE(Eventually([&] {
    const VersionSignals n_signals = SignalsOf("n");
    return n_signals.endpoints.size() == 1 && n_signals.endpoints[0].reachable &&
           n_signals.endpoints[0].waiting == 3;
  }));
}

TEST_F(GatewayRoutesTest, RemovedReplicaFinishesItsStreamAndGetsNoNewRequest) {
  FakeEngine draining("draining", "one two three four"), fresh("fresh");
  Start({Model("m", {draining.address()})});
  draining.HoldStreams(true);
  auto stream = std::async(std::launch::async, [&] { return Post(port(), "m", true); });
  ASSERT_TRUE(Eventually([&] { return draining.streams_started() == 1; }));
  EXPECT_EQ(SignalsOf("m").in_flight, 1);

  const std::string up_series =
      fmt::format("strata_gateway_endpoint_up{{endpoint=\"{}\"}} 1", draining.address());
  ASSERT_TRUE(
      Eventually([&] { return gateway_->MetricsText().find(up_series) != std::string::npos; }));

  ASSERT_TRUE(gateway_->SetRoutes({Model("m", {fresh.address()})}).ok());
  for (int i = 0; i < 6; ++i) {
    Reply reply = Post(port(), "m");
    EXPECT_EQ(reply.status, 200);
    EXPECT_EQ(reply.served_by, "fresh");
  }
  EXPECT_EQ(draining.requests(), 1);
  const VersionSignals during = SignalsOf("m");
  ASSERT_EQ(during.endpoints.size(), 1u);
  EXPECT_EQ(during.endpoints[0].id, fresh.address());
  // The stream on the replica that left (a reply can reach its client a moment before the
  // gateway's loop has finished with the request).
  EXPECT_TRUE(Eventually([&] { return SignalsOf("m").in_flight == 1; }));
  EXPECT_EQ(gateway_->InFlight(draining.address()), 1);  // not yet safe to stop
  EXPECT_EQ(gateway_->InFlight("127.0.0.1:1"), 0);

  // The replica that left is no longer scraped nor exported.
  const std::string gone = fmt::format("endpoint_up{{endpoint=\"{}\"}}", draining.address());
  EXPECT_TRUE(Eventually([&] { return gateway_->MetricsText().find(gone) == std::string::npos; }));

  draining.HoldStreams(false);
  Reply streamed = stream.get();
  ASSERT_EQ(streamed.status, 200);
  EXPECT_EQ(streamed.served_by, "draining");
  EXPECT_EQ(StreamText(streamed.body), std::make_pair(std::string("one two three four"), true));
  EXPECT_EQ(draining.cancelled_streams(), 0);
  EXPECT_TRUE(Eventually([&] { return SignalsOf("m").in_flight == 0; }));
  EXPECT_EQ(gateway_->InFlight(draining.address()), 0);  // drained
  EXPECT_EQ(SignalsOf("m").answered_total, 7);
}

TEST_F(GatewayRoutesTest, HeldRequestIsServedWhenTheFirstReplicaArrives) {
  Start({Model("m", {})});
  auto held = std::async(std::launch::async, [&] { return Post(port(), "m"); });
  ASSERT_TRUE(Eventually([&] { return SignalsOf("m").held == 1; }));
  EXPECT_NE(gateway_->MetricsText().find("strata_gateway_activator_held_requests{model=\"m\"} 1"),
            std::string::npos);
  const VersionSignals waiting = SignalsOf("m");
  EXPECT_EQ(waiting.arrivals_total, 1);
  EXPECT_EQ(waiting.answered_total, 0);

  FakeEngine engine("late-starter");
  ASSERT_TRUE(gateway_->SetRoutes({Model("m", {engine.address()})}).ok());
  Reply reply = held.get();
  EXPECT_EQ(reply.status, 200) << reply.body;
  EXPECT_EQ(reply.served_by, "late-starter");
  const VersionSignals after = SignalsOf("m");
  EXPECT_EQ(after.held, 0);
  EXPECT_EQ(after.arrivals_total, 1);
  EXPECT_EQ(after.answered_total, 1);
  EXPECT_NE(gateway_->MetricsText().find("strata_gateway_activator_held_requests{model=\"m\"} 0"),
            std::string::npos);
}

TEST_F(GatewayRoutesTest, HeldRequestGets503WhenNoReplicaComes) {
  LimitsConfig limits;
  limits.activation_timeout = std::chrono::milliseconds(200);
  Start({Model("m", {})}, limits);
  Reply reply = Post(port(), "m");
  ASSERT_EQ(reply.status, 503);
  auto error = nlohmann::json::parse(reply.body)["error"];
  EXPECT_EQ(error["message"], "model \"m\" has no ready replica after 0.2 s");
  EXPECT_EQ(error["type"], "service_unavailable");
  const VersionSignals signals = SignalsOf("m");
  EXPECT_EQ(signals.arrivals_total, 1);
  EXPECT_EQ(signals.answered_total, 1);
  EXPECT_EQ(signals.late_total, 1);
  EXPECT_EQ(signals.held, 0);
  EXPECT_EQ(Post(port(), "unknown").status, 404);
}

TEST_F(GatewayRoutesTest, HeldRequestsBeyondTheQueueBoundGet503AtOnce) {
  LimitsConfig limits;
  limits.max_queued = 1;
  Start({Model("m", {})}, limits);
  auto held = std::async(std::launch::async, [&] { return Post(port(), "m"); });
  ASSERT_TRUE(Eventually([&] { return SignalsOf("m").held == 1; }));
  Reply refused = Post(port(), "m");
  EXPECT_EQ(refused.status, 503);
  EXPECT_EQ(nlohmann::json::parse(refused.body)["error"]["code"], "overloaded");

  FakeEngine engine("e");
  ASSERT_TRUE(gateway_->SetRoutes({Model("m", {engine.address()})}).ok());
  EXPECT_EQ(held.get().status, 200);
  const VersionSignals signals = SignalsOf("m");
  EXPECT_EQ(signals.arrivals_total, 2);
  EXPECT_EQ(signals.answered_total, 2);
  EXPECT_GE(signals.late_total, 1);  // the refusal
}

TEST_F(GatewayRoutesTest, BadTableIsRefusedAndChangesNothing) {
  FakeEngine a("a"), b("b");
  Start({Model("m", {a.address()})});
  ModelConfig duplicate = Model("m", {b.address()});
  duplicate.versions.push_back(duplicate.versions[0]);
  Status status = gateway_->SetRoutes({duplicate});
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "models[0].versions[1].name: duplicate version \"v1\"");
  status = gateway_->SetRoutes({Model("m", {b.address(), "127.0.0.1:0"})});
  EXPECT_EQ(status.message(), "models[0].versions[0].endpoints[1]: \"127.0.0.1:0\" has a bad port");
  status = gateway_->SetRoutes({Model("m", {b.address()}), Model("m", {b.address()})});
  EXPECT_EQ(status.message(), "models[1].name: \"m\" is served twice");

  for (int i = 0; i < 4; ++i) EXPECT_EQ(Post(port(), "m").served_by, "a");
  EXPECT_EQ(b.requests(), 0);
  const std::vector<VersionSignals> signals = gateway_->Signals();
  ASSERT_EQ(signals.size(), 1u);
  ASSERT_EQ(signals[0].endpoints.size(), 1u);
  EXPECT_EQ(signals[0].endpoints[0].id, a.address());
}

}  // namespace
}  // namespace strata::gateway
