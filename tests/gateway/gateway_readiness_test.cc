// The gateway's reads on connections that pause, arrive in pieces or half-close: no data and no
// end of stream may be missed, however the reads are issued. A kept-alive client
// whose next request comes later and in pieces, pipelined requests, a client that half-closes,
// a replica whose answer arrives in pieces, and a pooled replica connection that the replica
// closed meanwhile. Real loopback sockets; nothing here asserts timing.

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <poll.h>

#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "gateway/config.h"
#include "gateway/server.h"

namespace strata::gateway {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

constexpr std::string_view kAnswer =
    R"({"id":"c","object":"chat.completion","choices":[{"index":0,"message":)"
    R"({"role":"assistant","content":"hi"},"finish_reason":"stop"}],)"
    R"("usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}})";

// How PieceReplica frames its answers' bodies.
enum class Framing {
  kLength,        // Content-Length
  kInterimFirst,  // a "100 Continue" interim answer, then the answer with Content-Length
  kChunked,       // chunked, in two chunks (one with an extension), and a trailer field
  kUntilClose,    // no length: the body ends when the replica closes the connection
};

// A replica written by hand, one thread per connection: it answers every chat completion with
// kAnswer, writing the status line, the header and the body as three separate sends, and
// half-closes a connection after `answers_per_connection` answers although each answer says
// keep-alive (a replica closing an idle kept-alive connection). GET /metrics gets an empty page.
// It remembers whether any request it read carried an Expect field.
class PieceReplica {
 public:
  explicit PieceReplica(int answers_per_connection, Framing framing = Framing::kLength)
      : answers_per_connection_(framing == Framing::kUntilClose ? 1 : answers_per_connection),
        framing_(framing),
        acceptor_(io_, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)) {
    accept_thread_ = std::thread([this] { AcceptLoop(); });
  }
  ~PieceReplica() {
    ::shutdown(acceptor_.native_handle(), SHUT_RDWR);  // ends the blocked accept
    accept_thread_.join();
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& socket : sockets_) ::shutdown(socket->native_handle(), SHUT_RDWR);
    for (std::thread& thread : threads_) thread.join();
  }

  std::string address() const {
    return fmt::format("127.0.0.1:{}", acceptor_.local_endpoint().port());
  }
  int64_t connections() const { return connections_.load(); }
  int64_t answers() const { return answers_.load(); }
  bool saw_expect() const { return saw_expect_.load(); }

 private:
  void AcceptLoop() {
    while (true) {
      beast::error_code ec;
      auto socket = std::make_shared<tcp::socket>(io_);
      acceptor_.accept(*socket, ec);
      if (ec) return;
      socket->set_option(tcp::no_delay(true), ec);
      ++connections_;
      std::lock_guard<std::mutex> lock(mutex_);
      sockets_.push_back(socket);
      threads_.emplace_back([this, socket] { Serve(*socket); });
    }
  }

  void Serve(tcp::socket& socket) {
    beast::flat_buffer buffer;
    for (int answered = 0; answered < answers_per_connection_; ++answered) {
      http::request<http::string_body> request;
      beast::error_code ec;
      http::read(socket, buffer, request, ec);
      if (ec) break;
      if (request.find(http::field::expect) != request.end()) saw_expect_ = true;
      const bool metrics = request.target() == "/metrics";
      const std::string_view answer = metrics ? std::string_view() : kAnswer;
      const Framing framing = metrics ? Framing::kLength : framing_;
      std::string head = "Content-Type: application/json\r\n";
      std::string body(answer);
      if (framing == Framing::kChunked) {
        const size_t half = answer.size() / 2;
        head += "Transfer-Encoding: chunked\r\nConnection: keep-alive\r\n\r\n";
        body = fmt::format("{:x};piece=1\r\n{}\r\n{:X}\r\n{}\r\n0\r\nX-Checksum: none\r\n\r\n",
                           half, answer.substr(0, half), answer.size() - half, answer.substr(half));
      } else if (framing == Framing::kUntilClose) {
        head += "Connection: close\r\n\r\n";
      } else {
        head += fmt::format("Content-Length: {}\r\nConnection: keep-alive\r\n\r\n", body.size());
      }
      if (!metrics) ++answers_;  // before the client can have the answer
      if (framing == Framing::kInterimFirst) {
        asio::write(socket, asio::buffer(std::string_view("HTTP/1.1 100 Continue\r\n\r\n")), ec);
      }
      if (!ec) asio::write(socket, asio::buffer(std::string_view("HTTP/1.1 200 OK\r\n")), ec);
      if (!ec) asio::write(socket, asio::buffer(head), ec);
      if (!ec && !body.empty()) asio::write(socket, asio::buffer(body), ec);
      if (ec) break;
    }
    // Half-closes, and reads on (a lingering close): what the gateway writes meanwhile is taken
    // and never answered, and no reset tells the gateway; only the end of stream does.
    beast::error_code ec;
    socket.shutdown(tcp::socket::shutdown_send, ec);
    char sink[4096];
    while (!ec) socket.read_some(asio::buffer(sink), ec);
  }

  const int answers_per_connection_;
  const Framing framing_;
  std::atomic<bool> saw_expect_{false};
  asio::io_context io_;
  tcp::acceptor acceptor_;
  std::atomic<int64_t> connections_{0};
  std::atomic<int64_t> answers_{0};
  std::mutex mutex_;
  std::vector<std::shared_ptr<tcp::socket>> sockets_;
  std::vector<std::thread> threads_;
  std::thread accept_thread_;
};

std::string ChatRequest(bool keep_alive, std::string_view extra_fields = "") {
  const std::string body = R"({"model":"m","messages":[{"role":"user","content":"Say hi."}]})";
  return fmt::format(
      "POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\nContent-Type: application/json\r\n"
      "{}Content-Length: {}\r\nConnection: {}\r\n\r\n{}",
      extra_fields, body.size(), keep_alive ? "keep-alive" : "close", body);
}

// Reads one response from `socket`; its status, or -1 when the connection ended first. Gives up
// after 30 s without a byte (a bound on a hang, not a timing assertion).
int ReadStatus(tcp::socket& socket, beast::flat_buffer& buffer, std::string* body = nullptr) {
  pollfd fd{socket.native_handle(), POLLIN, 0};
  if (buffer.size() == 0 && ::poll(&fd, 1, 30'000) != 1) return -1;
  http::response<http::string_body> response;
  beast::error_code ec;
  http::read(socket, buffer, response, ec);
  if (ec) return -1;
  if (body != nullptr) *body = response.body();
  return response.result_int();
}

// Whether the gateway closes `socket` (reads end of stream) within 30 s.
bool ClosedByPeer(tcp::socket& socket) {
  pollfd fd{socket.native_handle(), POLLIN, 0};
  if (::poll(&fd, 1, 30'000) != 1) return false;
  char byte;
  beast::error_code ec;
  socket.read_some(asio::buffer(&byte, 1), ec);
  return ec == asio::error::eof;
}

class GatewayReadinessTest : public ::testing::Test {
 protected:
  void StartGateway(const std::string& endpoint) {
    auto config = ParseGatewayConfig(fmt::format(R"(
threads: 1
scrapeIntervalMs: 600000
models:
- {{name: m, versions: [{{name: v1, endpoints: ["{}"]}}]}}
)",
                                                 endpoint));
    ASSERT_TRUE(config.has_value()) << config.error().ToString();
    auto server = GatewayServer::Start(std::move(*config), "127.0.0.1", 0, RealClock::Instance());
    ASSERT_TRUE(server.has_value()) << server.error().ToString();
    gateway_ = std::move(*server);
    socket_.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), gateway_->port()));
    socket_.set_option(tcp::no_delay(true));
  }

  asio::io_context io_;
  tcp::socket socket_{io_};
  beast::flat_buffer buffer_;
  std::unique_ptr<GatewayServer> gateway_;
};

TEST_F(GatewayReadinessTest, KeptAliveClientSendingLaterAndInPiecesIsServed) {
  PieceReplica replica(/*answers_per_connection=*/1000);
  StartGateway(replica.address());
  asio::write(socket_, asio::buffer(ChatRequest(true)));
  std::string body;
  ASSERT_EQ(ReadStatus(socket_, buffer_, &body), 200);
  EXPECT_EQ(nlohmann::json::parse(body)["usage"]["total_tokens"], 4);
  // The gateway waits for the next request now; it arrives one byte per send.
  for (char byte : ChatRequest(true)) asio::write(socket_, asio::buffer(&byte, 1));
  ASSERT_EQ(ReadStatus(socket_, buffer_, &body), 200);
  EXPECT_EQ(nlohmann::json::parse(body)["usage"]["total_tokens"], 4);
  // Two requests in one send, then one split between its head and its body.
  asio::write(socket_, asio::buffer(ChatRequest(true) + ChatRequest(true)));
  EXPECT_EQ(ReadStatus(socket_, buffer_), 200);
  EXPECT_EQ(ReadStatus(socket_, buffer_), 200);
  const std::string split = ChatRequest(true);
  const size_t body_start = split.find("\r\n\r\n") + 4;
  asio::write(socket_, asio::buffer(split.substr(0, body_start)));
  asio::write(socket_, asio::buffer(split.substr(body_start)));
  EXPECT_EQ(ReadStatus(socket_, buffer_), 200);
  EXPECT_EQ(replica.answers(), 5);
}

TEST_F(GatewayReadinessTest, ClientThatHalfClosesGetsItsAnswerThenTheConnectionCloses) {
  PieceReplica replica(/*answers_per_connection=*/1000);
  StartGateway(replica.address());
  asio::write(socket_, asio::buffer(ChatRequest(true)));
  ASSERT_EQ(ReadStatus(socket_, buffer_), 200);
  // The end of stream arrives while the gateway waits for the next request.
  asio::write(socket_, asio::buffer(ChatRequest(true)));
  socket_.shutdown(tcp::socket::shutdown_send);
  EXPECT_EQ(ReadStatus(socket_, buffer_), 200);
  EXPECT_TRUE(ClosedByPeer(socket_));
}

TEST_F(GatewayReadinessTest, AnswersInPiecesAndReplicaClosedPooledConnectionsAreHandled) {
  // Every connection to the replica serves one answer and is then closed by the replica, while
  // the gateway keeps it in its pool: the next request finds it closed, and goes on a new one.
  PieceReplica replica(/*answers_per_connection=*/1);
  StartGateway(replica.address());
  for (int i = 0; i < 5; ++i) {
    asio::write(socket_, asio::buffer(ChatRequest(true)));
    std::string body;
    ASSERT_EQ(ReadStatus(socket_, buffer_, &body), 200) << "request " << i;
    EXPECT_EQ(nlohmann::json::parse(body)["choices"][0]["message"]["content"], "hi");
  }
  EXPECT_EQ(replica.answers(), 5);
  EXPECT_GE(replica.connections(), 5);
  const std::string metrics = gateway_->MetricsText();
  EXPECT_EQ(metrics.find("strata_gateway_upstream_failures_total{"), std::string::npos) << metrics;
}

TEST_F(GatewayReadinessTest, AnswersFramedEveryWayAreRelayedWhole) {
  for (Framing framing : {Framing::kInterimFirst, Framing::kChunked, Framing::kUntilClose}) {
    SCOPED_TRACE(static_cast<int>(framing));
    PieceReplica replica(/*answers_per_connection=*/1000, framing);
    StartGateway(replica.address());
    for (int i = 0; i < 3; ++i) {
      // The gateway answers Expect itself (it reads the whole body before sending it on), so
      // the replica never sees the field.
      const std::string request =
          i == 0 ? ChatRequest(true, "Expect: 100-continue\r\n") : ChatRequest(true);
      asio::write(socket_, asio::buffer(request));
      std::string body;
      ASSERT_EQ(ReadStatus(socket_, buffer_, &body), 200) << "request " << i;
      EXPECT_EQ(body, kAnswer);
    }
    EXPECT_EQ(replica.answers(), 3);
    EXPECT_FALSE(replica.saw_expect());
    // A connection whose answer ended with its close is not pooled: one per answer; any other
    // carries the three (the metrics scrape has a connection of its own).
    if (framing == Framing::kUntilClose) {
      EXPECT_GE(replica.connections(), 3);
    } else {
      EXPECT_LE(replica.connections(), 2);
    }
    EXPECT_EQ(gateway_->MetricsText().find("strata_gateway_upstream_failures_total{"),
              std::string::npos);
    socket_.close();
    socket_ = tcp::socket(io_);
    buffer_.clear();
    gateway_.reset();
  }
}

}  // namespace
}  // namespace strata::gateway
