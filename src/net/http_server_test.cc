#include "net/http_server.h"

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <future>
#include <thread>

#include "net/http_client.h"

namespace strata::net {
namespace {

using ::testing::HasSubstr;

constexpr auto kLiveness = std::chrono::seconds(30);  // a hang guard, not a timing assertion

HttpRequest Get(std::string target) {
  HttpRequest request;
  request.target = std::move(target);
  return request;
}

HttpRequest Post(std::string target, std::string body) {
  HttpRequest request;
  request.method = "POST";
  request.target = std::move(target);
  request.body = std::move(body);
  return request;
}

// Sends raw bytes on a new connection and returns everything the server sends back until it
// closes.
std::string RawExchange(int port, const std::string& bytes) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
  EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  EXPECT_EQ(write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  std::string reply;
  char buffer[4096];
  ssize_t n;
  while ((n = read(fd, buffer, sizeof(buffer))) > 0) reply.append(buffer, n);
  close(fd);
  return reply;
}

class HttpServerTest : public ::testing::Test {
 protected:
  void StartServer(HttpServerOptions options = {}) {
    server_ = std::make_unique<HttpServer>(options);
    server_->Route("GET", "/hello", [](HttpRequest request, ResponseWriter writer) {
      writer.Respond(HttpResponse::Text(200, "text/plain", "hello " + std::string(request.Path())));
    });
    server_->Route("POST", "/echo", [](HttpRequest request, ResponseWriter writer) {
      HttpResponse response = HttpResponse::Text(201, "text/plain", request.body);
      response.headers.emplace_back("X-Seen-Header", std::string(request.Header("x-custom")));
      writer.Respond(std::move(response));
    });
    server_->Route("GET", "/stream", [this](HttpRequest request, ResponseWriter writer) {
      writer.StartStream(200, {{"Content-Type", "text/event-stream"}});
      writer.WriteChunk("data: 1\n\n");
      // The rest arrives later, from a task, as an engine's tokens do.
      server_->PostAfter(std::chrono::milliseconds(5), [writer]() mutable {
        writer.WriteChunk("data: 2\n\n");
        writer.WriteChunk("data: [DONE]\n\n");
        writer.EndStream();
      });
    });
    server_->Route("GET", "/forever", [this](HttpRequest request, ResponseWriter writer) {
      writer.StartStream(200, {{"Content-Type", "text/event-stream"}});
      writer.WriteChunk("data: first\n\n");
      writer.OnClientGone([this] { client_gone_.set_value(); });
    });
    server_->Route("GET", "/slow", [this](HttpRequest request, ResponseWriter writer) {
      slow_started_.set_value();
      server_->PostAfter(std::chrono::milliseconds(50), [writer]() mutable {
        writer.Respond(HttpResponse::Text(200, "text/plain", "finally"));
      });
    });
    Status status = server_->Start();
    ASSERT_TRUE(status.ok()) << status.ToString();
    ASSERT_GT(server_->port(), 0);
  }

  std::unique_ptr<HttpServer> server_;
  std::promise<void> client_gone_;
  std::promise<void> slow_started_;
};

TEST_F(HttpServerTest, RoutesByMethodAndPath) {
  StartServer();
  HttpClient client;
  Result<HttpResponse> hello = client.Send("127.0.0.1", server_->port(), Get("/hello?x=1"));
  ASSERT_TRUE(hello.has_value()) << hello.error().ToString();
  EXPECT_EQ(hello->status, 200);
  EXPECT_EQ(hello->body, "hello /hello");
  EXPECT_EQ(hello->Header("content-type"), "text/plain");

  HttpRequest echo = Post("/echo", "payload");
  echo.headers.emplace_back("X-Custom", "abc");
  Result<HttpResponse> echoed = client.Send("127.0.0.1", server_->port(), echo);
  ASSERT_TRUE(echoed.has_value());
  EXPECT_EQ(echoed->status, 201);
  EXPECT_EQ(echoed->body, "payload");
  EXPECT_EQ(echoed->Header("X-Seen-Header"), "abc");

  Result<HttpResponse> missing = client.Send("127.0.0.1", server_->port(), Get("/nope"));
  EXPECT_EQ(missing->status, 404);
  EXPECT_THAT(missing->body, HasSubstr("no route for /nope"));
  Result<HttpResponse> wrong_method = client.Send("127.0.0.1", server_->port(), Post("/hello", ""));
  EXPECT_EQ(wrong_method->status, 405);
}

TEST_F(HttpServerTest, ClientReusesKeptAliveConnections) {
  StartServer();
  HttpClient client;
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(client.Send("127.0.0.1", server_->port(), Get("/hello"))->status, 200);
  }
  EXPECT_EQ(client.IdleConnections(), 1u);
}

TEST_F(HttpServerTest, StreamsChunksAsTheyAreWritten) {
  StartServer();
  HttpClient client;
  std::vector<std::string> pieces;
  Result<HttpResponse> response =
      client.SendStreaming("127.0.0.1", server_->port(), Get("/stream"), [&](std::string_view d) {
        pieces.emplace_back(d);
        return true;
      });
  ASSERT_TRUE(response.has_value()) << response.error().ToString();
  EXPECT_EQ(response->Header("Transfer-Encoding"), "chunked");
  EXPECT_EQ(response->Header("Content-Type"), "text/event-stream");
  std::string all;
  for (const std::string& piece : pieces) all += piece;
  EXPECT_EQ(all, "data: 1\n\ndata: 2\n\ndata: [DONE]\n\n");
  EXPECT_GE(pieces.size(), 2u);  // the first event came before the later ones were written
  // The connection is reusable after a complete stream.
  EXPECT_EQ(client.Send("127.0.0.1", server_->port(), Get("/hello"))->status, 200);
}

TEST_F(HttpServerTest, ClientGoingAwayMidStreamIsReported) {
  StartServer();
  HttpClient client;
  Result<HttpResponse> response = client.SendStreaming(
      "127.0.0.1", server_->port(), Get("/forever"), [](std::string_view) { return false; });
  ASSERT_TRUE(response.has_value());
  EXPECT_EQ(client_gone_.get_future().wait_for(kLiveness), std::future_status::ready);
}

TEST_F(HttpServerTest, EnforcesBodyAndHeaderLimits) {
  HttpServerOptions options;
  options.max_body_bytes = 10;
  options.max_header_bytes = 512;
  StartServer(options);
  HttpClient client;
  Result<HttpResponse> big_body =
      client.Send("127.0.0.1", server_->port(), Post("/echo", std::string(11, 'x')));
  ASSERT_TRUE(big_body.has_value()) << big_body.error().ToString();
  EXPECT_EQ(big_body->status, 413);
  HttpRequest big_header = Get("/hello");
  big_header.headers.emplace_back("X-Big", std::string(1000, 'y'));
  Result<HttpResponse> rejected = client.Send("127.0.0.1", server_->port(), big_header);
  ASSERT_TRUE(rejected.has_value()) << rejected.error().ToString();
  EXPECT_EQ(rejected->status, 431);
}

TEST(HttpServerFallbackTest, FallbackTakesUnroutedRequestsAndErrorsUseTheGivenShape) {
  HttpServerOptions options;
  options.max_body_bytes = 10;
  options.error_response = [](int status, const std::string& message) {
    return HttpResponse::Text(status, "text/plain", "refused: " + message);
  };
  HttpServer server(options);
  server.Route("GET", "/hello", [](HttpRequest, ResponseWriter writer) {
    writer.Respond(HttpResponse::Text(200, "text/plain", "routed"));
  });
  server.Fallback([](HttpRequest request, ResponseWriter writer) {
    writer.Respond(HttpResponse::Text(
        200, "text/plain", "fallback " + request.method + " " + std::string(request.Path())));
  });
  ASSERT_TRUE(server.Start().ok());
  HttpClient client;
  EXPECT_EQ(client.Send("127.0.0.1", server.port(), Get("/hello"))->body, "routed");
  // Neither 404 for an unknown path nor 405 for a routed path with another method.
  EXPECT_EQ(client.Send("127.0.0.1", server.port(), Get("/apis/x?watch=1"))->body,
            "fallback GET /apis/x");
  EXPECT_EQ(client.Send("127.0.0.1", server.port(), Post("/hello", ""))->body,
            "fallback POST /hello");
  Result<HttpResponse> big = client.Send("127.0.0.1", server.port(), Post("/x", "01234567890"));
  ASSERT_TRUE(big.has_value()) << big.error().ToString();
  EXPECT_EQ(big->status, 413);
  EXPECT_EQ(big->body, "refused: request body is larger than the limit of 10 bytes");
}

TEST(HttpServerPosterTest, RunsTasksOnTheLoopAndDropsThemOnceTheServerIsGone) {
  auto server = std::make_unique<HttpServer>(HttpServerOptions{});
  ASSERT_TRUE(server->Start().ok());
  std::function<void(std::function<void()>)> post = server->Poster();
  std::promise<void> ran;
  post([&ran] { ran.set_value(); });
  EXPECT_EQ(ran.get_future().wait_for(kLiveness), std::future_status::ready);
  server->Stop();
  bool late = false;
  post([&late] { late = true; });
  server.reset();
  post([&late] { late = true; });
  EXPECT_FALSE(late);
}

TEST_F(HttpServerTest, MalformedRequestGets400) {
  StartServer();
  std::string reply = RawExchange(server_->port(), "NOT HTTP AT ALL\r\n\r\n");
  EXPECT_THAT(reply, HasSubstr("HTTP/1.1 400"));
  EXPECT_THAT(reply, HasSubstr("malformed HTTP request"));
}

TEST_F(HttpServerTest, Http11RequestNeedsExactlyOneHost) {
  StartServer();
  std::string missing = RawExchange(server_->port(), "GET /hello HTTP/1.1\r\n\r\n");
  EXPECT_THAT(missing, HasSubstr("HTTP/1.1 400"));
  EXPECT_THAT(missing, HasSubstr("HTTP/1.1 without a Host field"));
  std::string twice =
      RawExchange(server_->port(), "GET /hello HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n");
  EXPECT_THAT(twice, HasSubstr("HTTP/1.1 400"));
  EXPECT_THAT(twice, HasSubstr("more than one Host field"));
  // HTTP/1.0 has no such rule.
  EXPECT_THAT(RawExchange(server_->port(), "GET /hello HTTP/1.0\r\n\r\n"),
              HasSubstr("hello /hello"));
}

TEST_F(HttpServerTest, ClientTooSlowToSendItsRequestGets408) {
  HttpServerOptions options;
  options.read_timeout = std::chrono::seconds(1);
  options.idle_timeout = std::chrono::seconds(1);
  StartServer(options);
  // A head that never ends: answered 408, then closed.
  std::string reply = RawExchange(server_->port(), "GET /hello HTTP/1.1\r\nHost: a\r\nX-");
  EXPECT_THAT(reply, HasSubstr("HTTP/1.1 408 Request Timeout"));
  EXPECT_THAT(reply, HasSubstr("request not received whole within 1000 ms"));
  // So is a body that stops short.
  reply = RawExchange(server_->port(),
                      "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\n01234");
  EXPECT_THAT(reply, HasSubstr("HTTP/1.1 408 Request Timeout"));
  // A connection that sends nothing is closed without an answer.
  EXPECT_EQ(RawExchange(server_->port(), ""), "");
}

TEST_F(HttpServerTest, EachLimitCountsFromItsOwnPhaseOfTheConnection) {
  HttpServerOptions options;
  options.read_timeout = std::chrono::milliseconds(800);
  options.idle_timeout = std::chrono::milliseconds(800);
  StartServer(options);
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(server_->port()));
  inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  // Four requests on one kept-alive connection over 2 s, each after 500 ms idle and sent in two
  // halves 300 ms apart: no phase is longer than its limit, so all are answered although the
  // connection outlives both.
  const std::string request = "GET /hello HTTP/1.1\r\nHost: a\r\n\r\n";
  const std::string first_half = request.substr(0, 10);
  const std::string second_half = request.substr(10);
  for (int i = 0; i < 4; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    ASSERT_EQ(write(fd, first_half.data(), first_half.size()),
              static_cast<ssize_t>(first_half.size()));
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    ASSERT_EQ(write(fd, second_half.data(), second_half.size()),
              static_cast<ssize_t>(second_half.size()));
    std::string reply;
    char buffer[4096];
    while (reply.find("hello /hello") == std::string::npos) {
      ssize_t n = read(fd, buffer, sizeof(buffer));
      ASSERT_GT(n, 0) << "request " << i << " was not answered: " << reply;
      reply.append(buffer, n);
    }
    EXPECT_THAT(reply, HasSubstr("HTTP/1.1 200 OK"));
  }
  // Then idle past the limit: closed without an answer.
  char byte;
  EXPECT_EQ(read(fd, &byte, 1), 0);
  close(fd);
}

TEST_F(HttpServerTest, StopLetsAResponseInProgressFinish) {
  StartServer();
  std::future<Result<HttpResponse>> pending = std::async(std::launch::async, [this] {
    HttpClient client;
    return client.Send("127.0.0.1", server_->port(), Get("/slow"));
  });
  ASSERT_EQ(slow_started_.get_future().wait_for(kLiveness), std::future_status::ready);
  server_->Stop(kLiveness);
  Result<HttpResponse> response = pending.get();
  ASSERT_TRUE(response.has_value()) << response.error().ToString();
  EXPECT_EQ(response->body, "finally");
  HttpClient client;
  EXPECT_EQ(client.Send("127.0.0.1", server_->port(), Get("/hello")).error().code(),
            StatusCode::kUnavailable);
}

TEST_F(HttpServerTest, SeveralLoopsShareOnePort) {
  HttpServerOptions options;
  options.threads = 3;
  StartServer(options);
  std::vector<std::future<int>> results;
  for (int i = 0; i < 6; ++i) {
    results.push_back(std::async(std::launch::async, [this] {
      HttpClient client;
      return client.Send("127.0.0.1", server_->port(), Get("/hello"))->status;
    }));
  }
  for (auto& result : results) EXPECT_EQ(result.get(), 200);
}

TEST(HttpServerStartTest, ReportsBadHostAndBusyPort) {
  HttpServerOptions bad_host;
  bad_host.host = "not-an-ip";
  EXPECT_EQ(HttpServer(bad_host).Start().code(), StatusCode::kInvalidArgument);
  HttpServer first({});
  ASSERT_TRUE(first.Start().ok());
  HttpServerOptions same_port;
  same_port.port = first.port();
  Status second = HttpServer(same_port).Start();
  EXPECT_EQ(second.code(), StatusCode::kUnavailable);
  EXPECT_THAT(second.message(), HasSubstr(std::to_string(first.port())));
}

TEST(HttpClientTest, ConnectionRefusedIsUnavailable) {
  int port;
  {
    HttpServer server({});
    ASSERT_TRUE(server.Start().ok());
    port = server.port();
  }
  HttpClient client;
  Result<HttpResponse> response = client.Send("127.0.0.1", port, Get("/"));
  ASSERT_FALSE(response.has_value());
  EXPECT_EQ(response.error().code(), StatusCode::kUnavailable);
}

}  // namespace
}  // namespace strata::net
