// The gateway in front of real loopback replicas: routing, version split and pinning, tenants
// and quotas, streaming pass-through, strict HTTP parsing and limits, chunked and pipelined
// requests, idle and read deadlines, retry on a dead replica.

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <poll.h>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <functional>
#include <limits>
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
  std::map<std::string, std::string> headers;
  std::string body;
};

// Sends raw bytes to the gateway and reads one response.
Reply SendRaw(uint16_t port, const std::string& raw) {
  asio::io_context io;
  tcp::socket socket(io);
  socket.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
  asio::write(socket, asio::buffer(raw));
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(64 * 1024 * 1024);
  beast::error_code ec;
  http::read(socket, buffer, parser, ec);
  Reply reply;
  if (ec) return reply;
  reply.status = parser.get().result_int();
  for (const auto& field : parser.get()) {
    std::string name(field.name_string());
    for (char& c : name) c = static_cast<char>(std::tolower(c));
    reply.headers[name] = std::string(field.value());
  }
  reply.body = parser.get().body();
  return reply;
}

// Reads what the gateway sends on `socket` until it closes the connection. Gives up (returning
// what it has, and "<still open>") if nothing arrives for 30 s: a bound on a hang, not a timing
// assertion.
std::string ReadUntilClosed(tcp::socket& socket) {
  std::string received;
  while (true) {
    pollfd fd{socket.native_handle(), POLLIN, 0};
    if (::poll(&fd, 1, 30'000) != 1) return received + "<still open>";
    char bytes[4096];
    beast::error_code ec;
    const size_t n = socket.read_some(asio::buffer(bytes), ec);
    if (ec) return received;
    received.append(bytes, n);
  }
}

Reply Post(uint16_t port, const std::string& path, const std::string& body,
           const std::string& extra_headers = "") {
  return SendRaw(port, fmt::format("POST {} HTTP/1.1\r\nHost: gw\r\nContent-Type: "
                                   "application/json\r\nContent-Length: {}\r\nConnection: "
                                   "close\r\n{}\r\n{}",
                                   path, body.size(), extra_headers, body));
}

Reply Get(uint16_t port, const std::string& path, const std::string& extra_headers = "") {
  return SendRaw(port, fmt::format("GET {} HTTP/1.1\r\nHost: gw\r\nConnection: close\r\n{}\r\n",
                                   path, extra_headers));
}

std::string Chat(const std::string& model, bool stream = false, int max_tokens = 16) {
  return nlohmann::json{{"model", model},
                        {"stream", stream},
                        {"max_tokens", max_tokens},
                        {"messages", {{{"role", "user"}, {"content", "Say hello."}}}}}
      .dump();
}

class GatewayProxyTest : public ::testing::Test {
 protected:
  void StartGateway(const std::string& yaml) {
    auto config = ParseGatewayConfig(yaml);
    ASSERT_TRUE(config.has_value()) << config.error().ToString();
    auto server = GatewayServer::Start(std::move(*config), "127.0.0.1", 0, RealClock::Instance());
    ASSERT_TRUE(server.has_value()) << server.error().ToString();
    gateway_ = std::move(*server);
  }
  uint16_t port() const { return gateway_->port(); }
  // The gateway's metrics page once `shown` holds for it (the scrapes run on their own loop):
  // bounded, not timed; the last page read when it never does.
  std::string MetricsOnce(const std::function<bool(const std::string&)>& shown) {
    std::string metrics = gateway_->MetricsText();
    for (int i = 0; i < 3000 && !shown(metrics); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      metrics = gateway_->MetricsText();
    }
    return metrics;
  }

  std::unique_ptr<GatewayServer> gateway_;
};

// Whether the counter `series` (its name and labels) reads more than zero on `metrics`.
bool Counted(const std::string& metrics, const std::string& series) {
  const size_t at = metrics.find(series + " ");
  return at != std::string::npos && metrics.compare(at + series.size() + 1, 2, "0\n") != 0;
}

TEST_F(GatewayProxyTest, RoutesByModelAndListsModels) {
  FakeEngine a("a"), b("b");
  StartGateway(fmt::format(R"(
threads: 2
models:
- {{name: alpha, versions: [{{name: v1, endpoints: ["{}"]}}]}}
- {{name: beta, adapters: [beta-sql], versions: [{{name: v1, endpoints: ["{}"]}}]}}
)",
                           a.address(), b.address()));
  Reply alpha = Post(port(), "/v1/chat/completions", Chat("alpha"));
  ASSERT_EQ(alpha.status, 200) << alpha.body;
  EXPECT_EQ(alpha.headers["x-served-by"], "a");
  auto answer = nlohmann::json::parse(alpha.body);
  EXPECT_EQ(answer["choices"][0]["message"]["content"], "hello from the fake engine");
  EXPECT_EQ(answer["usage"]["completion_tokens"], 5);
  EXPECT_EQ(Post(port(), "/v1/completions", R"({"model":"beta-sql","prompt":"x"})")
                .headers["x-served-by"],
            "b");
  Reply unknown = Post(port(), "/v1/chat/completions", Chat("gamma"));
  EXPECT_EQ(unknown.status, 404);
  EXPECT_EQ(nlohmann::json::parse(unknown.body)["error"]["code"], "model_not_found");
  Reply models = Get(port(), "/v1/models");
  ASSERT_EQ(models.status, 200);
  EXPECT_EQ(nlohmann::json::parse(models.body)["data"].size(), 3u);
  Reply bad =
      Post(port(), "/v1/chat/completions", R"({"model":"alpha","messages":[{"content":1}]})");
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(bad.body.find("messages[0].role"), std::string::npos);
}

// Every error the gateway writes itself has OpenAI's four keys, whatever its cause.
TEST_F(GatewayProxyTest, ErrorsHaveOpenAisShapeAndNameTheParameter) {
  FakeEngine a("a");
  StartGateway(fmt::format(R"(
threads: 1
models:
- {{name: alpha, versions: [{{name: v1, endpoints: ["{}"]}}]}}
tenants:
- {{name: t, keys: [sk-t], tokensPerMinute: 1000000}}
)",
                           a.address()));
  const std::string key = "Authorization: Bearer sk-t\r\n";
  auto error_of = [](const Reply& reply) {
    auto body = nlohmann::json::parse(reply.body);
    EXPECT_EQ(body.size(), 1u) << reply.body;
    const auto& error = body["error"];
    EXPECT_EQ(error.size(), 4u) << reply.body;
    EXPECT_TRUE(error["message"].is_string()) << reply.body;
    EXPECT_TRUE(error["type"].is_string()) << reply.body;
    EXPECT_TRUE(error.contains("param") && error.contains("code")) << reply.body;
    return error;
  };
  Reply hot = Post(
      port(), "/v1/chat/completions",
      R"({"model":"alpha","temperature":"hot","messages":[{"role":"user","content":"x"}]})", key);
  EXPECT_EQ(hot.status, 400);
  EXPECT_EQ(error_of(hot), (nlohmann::json{{"message", "temperature: must be a number"},
                                           {"type", "invalid_request_error"},
                                           {"param", "temperature"},
                                           {"code", nullptr}}));
  for (const char* parameter : {"top_p", "max_tokens", "n", "stream"}) {
    Reply bad =
        Post(port(), "/v1/completions",
             fmt::format(R"({{"model":"alpha","prompt":"x","{}":"wrong"}})", parameter), key);
    EXPECT_EQ(bad.status, 400) << parameter;
    EXPECT_EQ(error_of(bad)["param"], parameter);
  }
  Reply no_key = Post(port(), "/v1/chat/completions", Chat("alpha"));
  EXPECT_EQ(no_key.status, 401);
  EXPECT_EQ(error_of(no_key)["type"], "authentication_error");
  Reply unknown = Post(port(), "/v1/chat/completions", Chat("gamma"), key);
  EXPECT_EQ(unknown.status, 404);
  EXPECT_EQ(error_of(unknown)["code"], "model_not_found");
  Reply no_route = Get(port(), "/v2/nothing");
  EXPECT_EQ(no_route.status, 404);
  EXPECT_EQ(error_of(no_route)["type"], "invalid_request_error");
  Reply not_json = Post(port(), "/v1/chat/completions", "{", key);
  EXPECT_EQ(not_json.status, 400);
  EXPECT_TRUE(error_of(not_json)["param"].is_null());
}

TEST_F(GatewayProxyTest, RetrievesOneModel) {
  FakeEngine a("a");
  StartGateway(fmt::format(R"(
threads: 1
models:
- {{name: org/alpha, adapters: [alpha-sql], versions: [{{name: v1, endpoints: ["{}"]}}]}}
)",
                           a.address()));
  for (const std::string target : {"/v1/models/org/alpha", "/v1/models/org%2Falpha"}) {
    Reply model = Get(port(), target);
    ASSERT_EQ(model.status, 200) << target << ": " << model.body;
    auto body = nlohmann::json::parse(model.body);
    EXPECT_EQ(body["id"], "org/alpha");
    EXPECT_EQ(body["object"], "model");
    EXPECT_TRUE(body["created"].is_number_integer());
    EXPECT_EQ(body["owned_by"], "strata");
  }
  EXPECT_EQ(nlohmann::json::parse(Get(port(), "/v1/models/alpha-sql").body)["parent"], "org/alpha");
  Reply missing = Get(port(), "/v1/models/gamma");
  EXPECT_EQ(missing.status, 404);
  auto error = nlohmann::json::parse(missing.body)["error"];
  EXPECT_EQ(error["code"], "model_not_found");
  EXPECT_EQ(error["param"], "model");
  EXPECT_EQ(error["type"], "invalid_request_error");
}

// Content as OpenAI's list of parts reaches the replica unchanged, non-text parts included.
TEST_F(GatewayProxyTest, ContentPartsPassThrough) {
  FakeEngine a("a");
  StartGateway(fmt::format(R"(
threads: 1
models:
- {{name: alpha, versions: [{{name: v1, endpoints: ["{}"]}}]}}
)",
                           a.address()));
  const std::string body =
      R"({"model":"alpha","messages":[{"role":"user","content":[{"type":"text","text":"Say "},)"
      R"({"type":"image_url","image_url":{"url":"data:,"}},{"type":"text","text":"hello."}]}]})";
  Reply answer = Post(port(), "/v1/chat/completions", body);
  ASSERT_EQ(answer.status, 200) << answer.body;
  EXPECT_EQ(answer.headers["x-served-by"], "a");
}

TEST_F(GatewayProxyTest, SplitsTrafficByWeightAndHonoursThePinHeader) {
  FakeEngine stable("stable"), canary("canary");
  StartGateway(fmt::format(R"(
models:
- name: m
  versions:
  - {{name: v1, weight: 1, endpoints: ["{}"]}}
  - {{name: v2, weight: 1, endpoints: ["{}"]}}
)",
                           stable.address(), canary.address()));
  std::map<std::string, int> served;
  for (int i = 0; i < 60; ++i)
    ++served[Post(port(), "/v1/chat/completions", Chat("m")).headers["x-served-by"]];
  EXPECT_GT(served["stable"], 0);
  EXPECT_GT(served["canary"], 0);
  EXPECT_EQ(served["stable"] + served["canary"], 60);
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(Post(port(), "/v1/chat/completions", Chat("m"), "x-strata-version: v2\r\n")
                  .headers["x-served-by"],
              "canary");
  }
  EXPECT_EQ(Post(port(), "/v1/chat/completions", Chat("m"), "x-strata-version: v7\r\n").status,
            404);
}

TEST_F(GatewayProxyTest, UnknownKeysGet401AndQuotaOverrunsGet429WithRetryAfter) {
  FakeEngine engine("e");
  StartGateway(fmt::format(R"(
limits: {{maxQueueWaitMs: 50}}
models:
- {{name: m, versions: [{{name: v1, endpoints: ["{}"]}}]}}
tenants:
- {{name: small, keys: [sk-small], tokensPerMinute: 120}}
- {{name: big, keys: [sk-big]}}
)",
                           engine.address()));
  EXPECT_EQ(Post(port(), "/v1/chat/completions", Chat("m")).status, 401);
  EXPECT_EQ(
      Post(port(), "/v1/chat/completions", Chat("m"), "Authorization: Bearer nope\r\n").status,
      401);
  const std::string small = "Authorization: Bearer sk-small\r\n";
  // Each request reserves its prompt estimate + 100 tokens: the first fits, the second waits,
  // then is refused with the time after which it would fit.
  Reply first = Post(port(), "/v1/chat/completions", Chat("m", false, 100), small);
  EXPECT_EQ(first.status, 200) << first.body;
  Reply second = Post(port(), "/v1/chat/completions", Chat("m", false, 100), small);
  EXPECT_EQ(second.status, 429);
  ASSERT_TRUE(second.headers.contains("retry-after"));
  EXPECT_GE(std::stoi(second.headers["retry-after"]), 1);
  EXPECT_EQ(nlohmann::json::parse(second.body)["error"]["type"], "rate_limit_exceeded");
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(Post(port(), "/v1/chat/completions", Chat("m", false, 100),
                   "Authorization: Bearer sk-big\r\n")
                  .status,
              200);
  }
  const std::string metrics = gateway_->MetricsText();
  EXPECT_NE(metrics.find("strata_gateway_quota_rejections_total{tenant=\"small\"} 1"),
            std::string::npos)
      << metrics;
}

TEST_F(GatewayProxyTest, TenantsChangeAtRunTime) {
  FakeEngine engine("e");
  StartGateway(fmt::format(R"(
limits: {{maxQueueWaitMs: 50}}
models:
- {{name: m, versions: [{{name: v1, endpoints: ["{}"]}}]}}
)",
                           engine.address()));
  auto status = [this](const std::string& key, int max_tokens = 16) {
    return Post(port(), "/v1/chat/completions", Chat("m", false, max_tokens),
                key.empty() ? "" : "Authorization: Bearer " + key + "\r\n")
        .status;
  };
  // No tenant: no key asked for.
  EXPECT_EQ(status(""), 200);
  ASSERT_TRUE(gateway_->SetTenants({{"a", {"sk-a"}, 0, PriorityClass::kStandard}}).ok());
  EXPECT_EQ(status(""), 401);
  EXPECT_EQ(status("sk-wrong"), 401);
  EXPECT_EQ(status("sk-a"), 200);
  // A key replaced: the old one is refused from the next request on.
  ASSERT_TRUE(gateway_
                  ->SetTenants({{"a", {"sk-a2"}, 0, PriorityClass::kStandard},
                                {"b", {"sk-b"}, 120, PriorityClass::kStandard}})
                  .ok());
  EXPECT_EQ(status("sk-a"), 401);
  EXPECT_EQ(status("sk-a2"), 200);
  // A quota added: the second request of ~100 tokens is over it.
  EXPECT_EQ(status("sk-b", 100), 200);
  EXPECT_EQ(status("sk-b", 100), 429);
  // Raised: the bucket refills at the new rate, and the next request gets through.
  ASSERT_TRUE(gateway_
                  ->SetTenants({{"a", {"sk-a2"}, 0, PriorityClass::kStandard},
                                {"b", {"sk-b"}, 1'000'000, PriorityClass::kStandard}})
                  .ok());
  EXPECT_EQ(status("sk-b", 100), 200);
  // An invalid set changes nothing, and says which field is wrong.
  Status invalid = gateway_->SetTenants({{"a", {"sk-a2"}, 0, PriorityClass::kStandard},
                                         {"c", {"sk-a2"}, 0, PriorityClass::kStandard}});
  EXPECT_EQ(invalid.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(invalid.message(), "tenants[1].keys[0]: key used twice");
  EXPECT_EQ(status("sk-b"), 200);
  // A tenant removed: its key is refused; the others' still work.
  ASSERT_TRUE(gateway_->SetTenants({{"a", {"sk-a2"}, 0, PriorityClass::kStandard}}).ok());
  EXPECT_EQ(status("sk-b"), 401);
  EXPECT_EQ(status("sk-a2"), 200);
  const std::string metrics = gateway_->MetricsText();
  EXPECT_NE(metrics.find("strata_gateway_quota_rejections_total{tenant=\"b\"} 1"),
            std::string::npos)
      << metrics;
  // None left: open again.
  ASSERT_TRUE(gateway_->SetTenants({}).ok());
  EXPECT_EQ(status(""), 200);
}

TEST_F(GatewayProxyTest, AModelThatNamesTenantsServesThemOnlyAndTheModelListTakesAKey) {
  FakeEngine engine("e");
  StartGateway(fmt::format(R"(
models:
- {{name: private, tenants: [a], versions: [{{name: v1, endpoints: ["{}"]}}]}}
- {{name: shared, versions: [{{name: v1, endpoints: ["{}"]}}]}}
tenants:
- {{name: a, keys: [sk-a]}}
- {{name: b, keys: [sk-b]}}
)",
                           engine.address(), engine.address()));
  const std::string a = "Authorization: Bearer sk-a\r\n";
  const std::string b = "Authorization: Bearer sk-b\r\n";
  EXPECT_EQ(Post(port(), "/v1/chat/completions", Chat("private"), a).status, 200);
  Reply refused = Post(port(), "/v1/chat/completions", Chat("private"), b);
  EXPECT_EQ(refused.status, 403);
  EXPECT_EQ(nlohmann::json::parse(refused.body)["error"]["message"],
            "tenant \"b\" may not call model \"private\"");
  EXPECT_EQ(nlohmann::json::parse(refused.body)["error"]["code"], "model_not_permitted");
  EXPECT_EQ(Post(port(), "/v1/chat/completions", Chat("shared"), b).status, 200);
  EXPECT_EQ(engine.requests(), 2);
  // The model list, like the calls, takes a key.
  EXPECT_EQ(Get(port(), "/v1/models").status, 401);
  EXPECT_EQ(Get(port(), "/v1/models/shared", "Authorization: Bearer nope\r\n").status, 401);
  EXPECT_EQ(Get(port(), "/v1/models", b).status, 200);
  EXPECT_EQ(Get(port(), "/healthz").status, 200);
  // Without tenants, nobody can be one of those a model names: it serves no one.
  ASSERT_TRUE(gateway_->SetTenants({}).ok());
  EXPECT_EQ(Post(port(), "/v1/chat/completions", Chat("private")).status, 403);
  EXPECT_EQ(Post(port(), "/v1/chat/completions", Chat("shared")).status, 200);
  EXPECT_EQ(Get(port(), "/v1/models").status, 200);
}

TEST_F(GatewayProxyTest, StreamsPassThroughInOrderAndAreAccounted) {
  FakeEngine engine("e", "one two three four");
  StartGateway(fmt::format(R"(
models:
- {{name: m, versions: [{{name: v1, endpoints: ["{}"]}}]}}
tenants:
- {{name: t, keys: [k], tokensPerMinute: 100000}}
)",
                           engine.address()));
  Reply reply =
      Post(port(), "/v1/chat/completions", Chat("m", true), "Authorization: Bearer k\r\n");
  ASSERT_EQ(reply.status, 200);
  EXPECT_EQ(reply.headers["content-type"], "text/event-stream");
  std::string text;
  size_t at = 0;
  while ((at = reply.body.find("data: {", at)) != std::string::npos) {
    const size_t end = reply.body.find("\n\n", at);
    auto chunk = nlohmann::json::parse(reply.body.substr(at + 6, end - at - 6));
    if (!chunk["choices"].empty())
      text += chunk["choices"][0]["delta"]["content"].get<std::string>();
    at = end;
  }
  EXPECT_EQ(text, "one two three four");
  EXPECT_NE(reply.body.find("data: [DONE]"), std::string::npos);
  // The client can see [DONE] a moment before the gateway's loop settles the request (usage,
  // TPOT, in-flight count); wait, bounded, until it has.
  std::string metrics = gateway_->MetricsText();
  for (int i = 0;
       i < 500 && metrics.find("strata_gateway_in_flight_requests 0") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    metrics = gateway_->MetricsText();
  }
  EXPECT_NE(
      metrics.find("strata_gateway_tokens_total{model=\"m\",tenant=\"t\",kind=\"completion\"} 4"),
      std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("strata_gateway_tpot_seconds_count{model=\"m\",version=\"v1\"} 1"),
            std::string::npos);
}

TEST_F(GatewayProxyTest, StrictParsingAndLimits) {
  FakeEngine engine("e");
  StartGateway(fmt::format(R"(
limits: {{maxHeaderBytes: 2048, maxBodyBytes: 4096}}
models:
- {{name: m, versions: [{{name: v1, endpoints: ["{}"]}}]}}
)",
                           engine.address()));
  const std::string body = Chat("m");
  Reply conflicting = SendRaw(
      port(), fmt::format("POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\nContent-Length: "
                          "{}\r\nTransfer-Encoding: chunked\r\n\r\n{}",
                          body.size(), body));
  EXPECT_EQ(conflicting.status, 400);
  Reply two_lengths = SendRaw(
      port(), fmt::format("POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\nContent-Length: "
                          "{}\r\nContent-Length: 3\r\n\r\n{}",
                          body.size(), body));
  EXPECT_EQ(two_lengths.status, 400);
  EXPECT_EQ(Post(port(), "/v1/chat/completions", body,
                 fmt::format("X-Padding: {}\r\n", std::string(4000, 'p')))
                .status,
            431);
  EXPECT_EQ(Post(port(), "/v1/chat/completions", Chat(std::string(5000, 'm'))).status, 413);
  EXPECT_EQ(SendRaw(port(), "GARBAGE\r\n\r\n").status, 400);
  Reply no_host = SendRaw(port(), "GET /v1/models HTTP/1.1\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(no_host.status, 400);
  EXPECT_NE(no_host.body.find("without a Host field"), std::string::npos) << no_host.body;
  Reply not_json = Post(port(), "/v1/chat/completions", "{\"model\": ");
  EXPECT_EQ(not_json.status, 400);
  EXPECT_NE(not_json.body.find("byte"), std::string::npos);
  EXPECT_EQ(engine.requests(), 0);
  EXPECT_EQ(Post(port(), "/v1/chat/completions", body).status, 200);
}

TEST_F(GatewayProxyTest, ChunkedPipelinedAndContinuedRequests) {
  FakeEngine engine("e");
  StartGateway(fmt::format(R"(
models:
- {{name: m, versions: [{{name: v1, endpoints: ["{}"]}}]}}
)",
                           engine.address()));
  const std::string body = Chat("m");
  // A chunked body, in two chunks with an extension and a trailer.
  const std::string chunked = fmt::format(
      "POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\nTransfer-Encoding: chunked\r\n\r\n"
      "{:x};note=1\r\n{}\r\n{:x}\r\n{}\r\n0\r\nX-Trailer: t\r\n\r\n",
      10, body.substr(0, 10), body.size() - 10, body.substr(10));
  Reply reply = SendRaw(port(), chunked);
  EXPECT_EQ(reply.status, 200) << reply.body;
  EXPECT_EQ(engine.requests(), 1);

  // Two requests in one write: two answers, in order, on the same connection.
  asio::io_context io;
  tcp::socket socket(io);
  socket.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port()));
  const std::string first =
      fmt::format("POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\nContent-Length: {}\r\n\r\n{}",
                  body.size(), body);
  asio::write(socket, asio::buffer(first + "GET /healthz HTTP/1.1\r\nHost: gw\r\n"
                                           "Connection: close\r\n\r\n"));
  beast::flat_buffer buffer;
  http::response<http::string_body> answer;
  http::read(socket, buffer, answer);
  EXPECT_EQ(answer.result_int(), 200);
  EXPECT_NE(answer.body().find("hello from the fake engine"), std::string::npos) << answer.body();
  http::response<http::string_body> second;
  http::read(socket, buffer, second);
  EXPECT_EQ(second.result_int(), 200);
  EXPECT_EQ(second.body(), "ok\n");
  EXPECT_FALSE(second.keep_alive());
  EXPECT_EQ(engine.requests(), 2);

  // Expect: 100-continue gets its interim answer before the body is sent.
  tcp::socket waiting(io);
  waiting.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port()));
  asio::write(waiting, asio::buffer(fmt::format(
                           "POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\nExpect: "
                           "100-continue\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                           body.size())));
  beast::flat_buffer continued;
  http::response_parser<http::empty_body> interim_parser;
  http::read_header(waiting, continued, interim_parser);
  EXPECT_EQ(interim_parser.get().result_int(), 100);
  asio::write(waiting, asio::buffer(body));
  http::response<http::string_body> final_answer;
  http::read(waiting, continued, final_answer);
  EXPECT_EQ(final_answer.result_int(), 200);
  EXPECT_EQ(engine.requests(), 3);
}

TEST_F(GatewayProxyTest, DeadlinesCloseSilentConnectionsAndAnswerSlowOnes408) {
  FakeEngine engine("e");
  StartGateway(fmt::format(R"(
limits: {{idleTimeoutMs: 200, readTimeoutMs: 200}}
models:
- {{name: m, versions: [{{name: v1, endpoints: ["{}"]}}]}}
)",
                           engine.address()));
  asio::io_context io;
  // A connection that never sends a request is closed, without an answer.
  tcp::socket silent(io);
  silent.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port()));
  EXPECT_EQ(ReadUntilClosed(silent), "");
  // One that stops halfway through its body is told so (408), then closed; the engine never
  // sees it.
  tcp::socket stalled(io);
  stalled.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port()));
  asio::write(stalled, asio::buffer("POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\n"
                                    "Content-Length: 100\r\n\r\n{\"model\""));
  const std::string timed_out = ReadUntilClosed(stalled);
  EXPECT_TRUE(timed_out.starts_with("HTTP/1.1 408 Request Timeout\r\n")) << timed_out;
  EXPECT_NE(timed_out.find("request not received whole within 200 ms"), std::string::npos)
      << timed_out;
  EXPECT_NE(timed_out.find("\"code\":\"request_timeout\""), std::string::npos) << timed_out;
  // A kept-alive connection is closed once idle after its answer.
  tcp::socket idle(io);
  idle.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port()));
  asio::write(idle, asio::buffer(std::string("GET /healthz HTTP/1.1\r\nHost: gw\r\n\r\n")));
  const std::string received = ReadUntilClosed(idle);
  EXPECT_TRUE(received.starts_with("HTTP/1.1 200 OK\r\n")) << received;
  EXPECT_TRUE(received.ends_with("\r\n\r\nok\n")) << received;
  EXPECT_EQ(engine.requests(), 0);
}

TEST_F(GatewayProxyTest, AHeadThatTricklesInHasTheReadTimeoutNotTheIdleOne) {
  FakeEngine engine("e");
  StartGateway(fmt::format(R"(
limits: {{idleTimeoutMs: 600000, readTimeoutMs: 200}}
models:
- {{name: m, versions: [{{name: v1, endpoints: ["{}"]}}]}}
)",
                           engine.address()));
  asio::io_context io;
  tcp::socket slow(io);
  slow.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port()));
  asio::write(slow,
              asio::buffer(std::string("POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\n")));
  // Answered 408 and closed at the read timeout (ReadUntilClosed gives up after 30 s; the idle
  // timeout is 10 min).
  const std::string received = ReadUntilClosed(slow);
  EXPECT_TRUE(received.starts_with("HTTP/1.1 408 Request Timeout\r\n")) << received;
  EXPECT_EQ(engine.requests(), 0);
}

TEST_F(GatewayProxyTest, RetriesOnAnotherReplicaWhenOneDies) {
  FakeEngine alive("alive"), doomed("doomed");
  StartGateway(fmt::format(R"(
policy: round-robin
scrapeIntervalMs: 600000
limits: {{retries: 1}}
models:
- {{name: m, versions: [{{name: v1, endpoints: ["{}", "{}"]}}]}}
)",
                           doomed.address(), alive.address()));
  // The gateway's first scrape comes before the replica dies, else that scrape, not a request,
  // finds it dead and takes it out of the rotation.
  const std::string doomed_scraped = fmt::format(
      "strata_gateway_scrapes_total{{endpoint=\"{}\",result=\"ok\"}}", doomed.address());
  ASSERT_TRUE(Counted(MetricsOnce([&](const std::string& m) { return Counted(m, doomed_scraped); }),
                      doomed_scraped));
  // Both replicas serve, so keep-alive connections to both sit in the pools.
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(Post(port(), "/v1/chat/completions", Chat("m")).status, 200);
  doomed.Kill();
  for (int i = 0; i < 10; ++i) {
    Reply reply = Post(port(), "/v1/chat/completions", Chat("m"));
    EXPECT_EQ(reply.status, 200) << reply.body;
    EXPECT_EQ(reply.headers["x-served-by"], "alive");
  }
  const std::string metrics = gateway_->MetricsText();
  EXPECT_NE(metrics.find(fmt::format("strata_gateway_upstream_failures_total{{endpoint=\"{}\"}}",
                                     doomed.address())),
            std::string::npos)
      << metrics;
}

TEST_F(GatewayProxyTest, AReplicaShuttingDownAnswers503AndAnotherServes) {
  // llm-d-inference-sim and strata engine-sim, stopping gracefully, keep their port and answer
  // new requests 503 until their streams finish; vLLM closes its port, a connect failure.
  FakeEngine alive("alive"), stopping("stopping");
  StartGateway(fmt::format(R"(
policy: round-robin
scrapeIntervalMs: 600000
limits: {{retries: 1}}
models:
- {{name: m, versions: [{{name: v1, endpoints: ["{}", "{}"]}}]}}
)",
                           stopping.address(), alive.address()));
  stopping.SetShuttingDown(true);
  for (int i = 0; i < 6; ++i) {
    Reply reply = Post(port(), "/v1/chat/completions", Chat("m"));
    EXPECT_EQ(reply.status, 200) << reply.body;
    EXPECT_EQ(reply.headers["x-served-by"], "alive");
  }
  // Ejected after its first 503: it is not asked again for each request.
  EXPECT_EQ(stopping.requests(), 1);
  EXPECT_NE(gateway_->MetricsText().find("strata_gateway_retries_total{model=\"m\"} 1"),
            std::string::npos)
      << gateway_->MetricsText();
}

TEST_F(GatewayProxyTest, TheLastReplicaTriedRelaysIts503AsItIs) {
  FakeEngine stopping("stopping");
  StartGateway(fmt::format(R"(
scrapeIntervalMs: 600000
limits: {{retries: 2}}
models:
- {{name: m, versions: [{{name: v1, endpoints: ["{}"]}}]}}
)",
                           stopping.address()));
  stopping.SetShuttingDown(true);
  Reply reply = Post(port(), "/v1/chat/completions", Chat("m"));
  EXPECT_EQ(reply.status, 503) << reply.body;
  // With no other replica to try, the client gets the replica's own answer.
  EXPECT_NE(reply.body.find("server is shutting down"), std::string::npos) << reply.body;
  EXPECT_EQ(reply.headers["x-served-by"], "stopping");
  EXPECT_EQ(stopping.requests(), 1);
}

TEST_F(GatewayProxyTest, ReplicaReportingAnInfiniteQueueDrawsNoTraffic) {
  // +Inf used to be cast to INT64_MIN waiting requests: the saturated replica looked the idlest
  // to a profile that routes by scraped figures. Now its page is no reading: its figures are
  // unknown, as after a failed scrape, and the replica whose figures are known wins.
  FakeEngine healthy("healthy"), broken("broken");
  broken.SetWaiting(std::numeric_limits<double>::infinity());
  // One scrape each, at the start: a reading lives five intervals (MetricsLifetime), so the
  // figures stay as first read however slow this machine is.
  StartGateway(fmt::format(R"(
policy: epp-default
scrapeIntervalMs: 600000
models:
- {{name: m, versions: [{{name: v1, endpoints: ["{}", "{}"]}}]}}
)",
                           healthy.address(), broken.address()));
  // The counter's name alone would match its zero line before the first scrape: wait for the
  // readings themselves, the broken replica's "down" and the healthy one's "up".
  const std::string broken_down =
      fmt::format("strata_gateway_endpoint_up{{endpoint=\"{}\"}} 0", broken.address());
  const std::string healthy_up =
      fmt::format("strata_gateway_endpoint_up{{endpoint=\"{}\"}} 1", healthy.address());
  // Both replicas scraped at least once.
  std::string metrics = MetricsOnce([&](const std::string& m) {
    return m.find(broken_down) != std::string::npos && m.find(healthy_up) != std::string::npos;
  });
  ASSERT_NE(metrics.find(broken_down), std::string::npos) << metrics;
  ASSERT_NE(metrics.find(healthy_up), std::string::npos) << metrics;
  EXPECT_EQ(
      metrics.find(fmt::format("strata_gateway_scrapes_total{{endpoint=\"{}\",result=\"error\"}} 0",
                               broken.address())),
      std::string::npos)
      << metrics;
  // Past the 500 ms that every reading lived, whatever the interval: a gateway scraping every
  // second or slower once routed on no figures at all.
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  for (int i = 0; i < 10; ++i) {
    Reply reply = Post(port(), "/v1/chat/completions", Chat("m"));
    ASSERT_EQ(reply.status, 200) << reply.body;
    EXPECT_EQ(reply.headers["x-served-by"], "healthy");
  }
  EXPECT_EQ(broken.requests(), 0);
}

TEST_F(GatewayProxyTest, AnUnreadableQueueCountsAsBusierThanABusyReplica) {
  // The issue's case: beside a replica that reports 1000 waiting requests, one reporting +Inf
  // (or NaN, or a count past 2^63) took most of the traffic. Its figures are unknown now, and
  // an unknown load counts as more than the largest one known, under each routing profile.
  for (const std::string policy : {"epp-default", "strata", "least-request"}) {
    for (double reading : {std::numeric_limits<double>::infinity(),
                           std::numeric_limits<double>::quiet_NaN(), 1e300}) {
      SCOPED_TRACE(fmt::format("{} reporting {}", policy, reading));
      FakeEngine busy("busy"), broken("broken");
      busy.SetWaiting(1000);
      broken.SetWaiting(reading);
      // One scrape each, at the start, whose readings outlive the test (MetricsLifetime).
      StartGateway(fmt::format(R"(
policy: {}
scrapeIntervalMs: 600000
models:
- {{name: m, versions: [{{name: v1, endpoints: ["{}", "{}"]}}]}}
)",
                               policy, busy.address(), broken.address()));
      // Both replicas scraped, the busy one's reading taken.
      const std::string broken_failed = fmt::format(
          "strata_gateway_scrapes_total{{endpoint=\"{}\",result=\"error\"}}", broken.address());
      const std::string busy_ok = fmt::format(
          "strata_gateway_scrapes_total{{endpoint=\"{}\",result=\"ok\"}}", busy.address());
      auto scraped = [&](const std::string& m) {
        return Counted(m, broken_failed) && Counted(m, busy_ok);
      };
      std::string metrics = MetricsOnce(scraped);
      ASSERT_TRUE(scraped(metrics)) << metrics;
      for (int i = 0; i < 10; ++i) {
        Reply reply = Post(port(), "/v1/chat/completions", Chat("m"));
        ASSERT_EQ(reply.status, 200) << reply.body;
        EXPECT_EQ(reply.headers["x-served-by"], "busy");
      }
      EXPECT_EQ(broken.requests(), 0);
      gateway_.reset();
    }
  }
}

TEST(GatewayStartTest, ASecondGatewayOnAPortInUseFailsNamingIt) {
  GatewayConfig config;
  config.threads = 2;  // the first gateway's loops share its port with SO_REUSEPORT
  auto first = GatewayServer::Start(config, "127.0.0.1", 0, RealClock::Instance());
  ASSERT_TRUE(first.has_value()) << first.error().ToString();
  const uint16_t port = (*first)->port();
  for (int threads : {1, 2}) {
    config.threads = threads;
    auto second = GatewayServer::Start(config, "127.0.0.1", port, RealClock::Instance());
    ASSERT_FALSE(second.has_value()) << threads;
    EXPECT_EQ(second.error().code(), StatusCode::kUnavailable);
    EXPECT_NE(second.error().message().find(fmt::format("cannot listen on 127.0.0.1:{}", port)),
              std::string::npos)
        << second.error().message();
  }
  // The port is free again once the first has stopped.
  (*first)->Stop();
  first->reset();
  auto again = GatewayServer::Start(config, "127.0.0.1", port, RealClock::Instance());
  EXPECT_TRUE(again.has_value()) << again.error().ToString();
}

TEST_F(GatewayProxyTest, NoLiveReplicaIsA502NotAHang) {
  FakeEngine doomed("doomed");
  const std::string address = doomed.address();
  doomed.Kill();
  StartGateway(fmt::format(R"(
scrapeIntervalMs: 600000
models:
- {{name: m, versions: [{{name: v1, endpoints: ["{}"]}}]}}
)",
                           address));
  Reply reply = Post(port(), "/v1/chat/completions", Chat("m"));
  EXPECT_TRUE(reply.status == 502 || reply.status == 503) << reply.status;
}

}  // namespace
}  // namespace strata::gateway
