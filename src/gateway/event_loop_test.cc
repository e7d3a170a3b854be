#include "gateway/event_loop.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <future>
#include <string>
#include <thread>

#include "gateway/loop_socket.h"

namespace strata::gateway {
namespace {

using namespace std::chrono_literals;

// A loop running on its own thread, with a listener on a free loopback port.
class EventLoopTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(listener_.Listen(tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0), false));
    port_ = listener_.LocalEndpoint().port();
    thread_ = std::thread([this] { loop_.Run(); });
  }
  void TearDown() override { StopLoop(); }

  void StopLoop() {
    if (!thread_.joinable()) return;
    loop_.Stop();
    thread_.join();
    listener_.Close();
    loop_.Shutdown();
  }

  // Starts `coroutine` on the loop.
  template <typename Coroutine>
  void Spawn(Coroutine coroutine) {
    loop_.Post([this, coroutine = std::move(coroutine)]() mutable {
      asio::co_spawn(loop_.io(), std::move(coroutine), asio::detached);
    });
  }

  // A blocking client connection to the listener, from the test's thread.
  int ConnectClient() const {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port_);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
    return fd;
  }

  // Accepts one connection on the loop.
  asio::awaitable<std::unique_ptr<LoopSocket>> AcceptOne() {
    auto [error, fd] = co_await listener_.Accept();
    EXPECT_FALSE(error) << error.message();
    auto socket = std::make_unique<LoopSocket>(loop_);
    EXPECT_FALSE(socket->Adopt(fd));
    co_return socket;
  }

  static void SendAll(int fd, std::string_view text) {
    ASSERT_EQ(send(fd, text.data(), text.size(), 0), static_cast<ssize_t>(text.size()));
  }

  EventLoop loop_;
  LoopSocket listener_{loop_};
  uint16_t port_ = 0;
  std::thread thread_;
};

TEST_F(EventLoopTest, ReadWaitsForInputThatArrivesLaterAndSeesTheEnd) {
  std::promise<std::string> received;
  std::promise<void> first_read;
  Spawn([&]() -> asio::awaitable<void> {
    std::unique_ptr<LoopSocket> socket = co_await AcceptOne();
    std::string text;
    char buffer[4];
    while (true) {
      auto [error, n] = co_await socket->ReadSome(asio::buffer(buffer));
      if (error) {
        // The end of input, once everything before it was read.
        EXPECT_EQ(error, asio::error::eof) << error.message();
        break;
      }
      if (text.empty()) first_read.set_value();
      text.append(buffer, n);
    }
    received.set_value(text);
  });
  const int client = ConnectClient();
  SendAll(client, "ab");
  first_read.get_future().wait();
  // Each piece arrives after the socket was found empty: only its event can wake the read.
  std::this_thread::sleep_for(20ms);
  SendAll(client, "cdefgh");
  std::this_thread::sleep_for(20ms);
  SendAll(client, "ij");
  shutdown(client, SHUT_WR);
  auto future = received.get_future();
  ASSERT_EQ(future.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(future.get(), "abcdefghij");
  close(client);
}

TEST_F(EventLoopTest, DataAndHangUpTogetherAreBothRead) {
  std::promise<std::string> received;
  const int client = ConnectClient();
  // Everything, the end included, is there before the loop first looks.
  SendAll(client, "hello");
  shutdown(client, SHUT_WR);
  Spawn([&]() -> asio::awaitable<void> {
    std::unique_ptr<LoopSocket> socket = co_await AcceptOne();
    std::string text;
    char buffer[64];
    ErrorCode error;
    while (!error) {
      auto result = co_await socket->ReadSome(asio::buffer(buffer));
      text.append(buffer, result.bytes);
      error = result.error;
    }
    received.set_value(text + "|" + (error == asio::error::eof ? "eof" : error.message()));
  });
  auto future = received.get_future();
  ASSERT_EQ(future.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(future.get(), "hello|eof");
  close(client);
}

TEST_F(EventLoopTest, WriteLargerThanTheSocketBufferWaitsForRoom) {
  const std::string payload(8 << 20, 'x');
  std::promise<ErrorCode> written;
  Spawn([&]() -> asio::awaitable<void> {
    std::unique_ptr<LoopSocket> socket = co_await AcceptOne();
    const std::array<asio::const_buffer, 2> parts = {
        asio::buffer(payload.data(), 1000),
        asio::buffer(payload.data() + 1000, payload.size() - 1000)};
    written.set_value(co_await socket->WriteAll(parts));
    // Stays open until the client has read everything.
    char byte;
    co_await socket->ReadSome(asio::buffer(&byte, 1));
  });
  const int client = ConnectClient();
  std::this_thread::sleep_for(50ms);  // the send buffer fills while nobody reads
  size_t total = 0;
  std::vector<char> buffer(1 << 16);
  while (total < payload.size()) {
    const ssize_t n = recv(client, buffer.data(), buffer.size(), 0);
    ASSERT_GT(n, 0);
    total += static_cast<size_t>(n);
  }
  auto future = written.get_future();
  ASSERT_EQ(future.wait_for(10s), std::future_status::ready);
  EXPECT_FALSE(future.get());
  EXPECT_EQ(total, payload.size());
  close(client);
}

TEST_F(EventLoopTest, CloseEndsAPendingReadWithOperationAborted) {
  std::promise<ErrorCode> ended;
  Spawn([&]() -> asio::awaitable<void> {
    std::unique_ptr<LoopSocket> socket = co_await AcceptOne();
    LoopTimer timer(loop_);
    // Closed by another coroutine while the read waits, as the deadline watchdog does.
    asio::co_spawn(
        loop_.io(),
        [&]() -> asio::awaitable<void> {
          co_await timer.WaitFor(10ms);
          socket->Close();
        },
        asio::detached);
    char buffer[16];
    auto [error, n] = co_await socket->ReadSome(asio::buffer(buffer));
    ended.set_value(error);
  });
  const int client = ConnectClient();
  auto future = ended.get_future();
  ASSERT_EQ(future.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(future.get(), asio::error::operation_aborted);
  close(client);
}

TEST_F(EventLoopTest, TimersFireInOrderAndCancelEndsTheWait) {
  std::promise<std::string> order;
  Spawn([&]() -> asio::awaitable<void> {
    auto text = std::make_shared<std::string>();
    auto late = std::make_shared<LoopTimer>(loop_);
    LoopTimer early(loop_), cancel(loop_);
    asio::co_spawn(
        loop_.io(),
        [&, text, late]() -> asio::awaitable<void> {
          ErrorCode error = co_await late->WaitFor(40ms);
          *text += error ? "late-cancelled " : "late ";
        },
        asio::detached);
    asio::co_spawn(
        loop_.io(),
        [&, text]() -> asio::awaitable<void> {
          ErrorCode error = co_await early.WaitFor(5ms);
          *text += error ? "early-cancelled " : "early ";
          late->Cancel();
        },
        asio::detached);
    co_await cancel.WaitFor(100ms);
    order.set_value(*text);
  });
  auto future = order.get_future();
  ASSERT_EQ(future.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(future.get(), "early late-cancelled ");
}

TEST_F(EventLoopTest, ConnectReachesAListenerAndFailsOnAClosedPort) {
  // A port that was free a moment ago: nothing listens there.
  const int probe = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in bound{};
  bound.sin_family = AF_INET;
  bound.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof(bound);
  ASSERT_EQ(bind(probe, reinterpret_cast<sockaddr*>(&bound), sizeof(bound)), 0);
  ASSERT_EQ(getsockname(probe, reinterpret_cast<sockaddr*>(&bound), &size), 0);
  const uint16_t closed_port = ntohs(bound.sin_port);
  close(probe);
  std::promise<std::string> outcome;
  Spawn([&]() -> asio::awaitable<void> {
    LoopSocket refused(loop_);
    const ErrorCode refused_error =
        co_await refused.Connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), closed_port));
    LoopSocket client(loop_);
    const ErrorCode error =
        co_await client.Connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port_));
    std::unique_ptr<LoopSocket> server = co_await AcceptOne();
    EXPECT_FALSE(co_await client.WriteAll(asio::buffer(std::string_view("ping"))));
    char buffer[8];
    auto [read_error, n] = co_await server->ReadSome(asio::buffer(buffer));
    EXPECT_FALSE(refused.is_open());
    outcome.set_value((refused_error ? "refused " : "connected ") + std::string(buffer, n) +
                      (error ? " " + error.message() : "") + (read_error ? " read failed" : ""));
  });
  auto future = outcome.get_future();
  ASSERT_EQ(future.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(future.get(), "refused ping");
}

TEST_F(EventLoopTest, ShutdownEndsSuspendedCoroutinesAndFreesWhatTheyHold) {
  auto held = std::make_shared<int>(0);
  std::weak_ptr<int> watch = held;
  std::promise<void> suspended;
  Spawn([&, held = std::move(held)]() -> asio::awaitable<void> {
    std::unique_ptr<LoopSocket> socket = co_await AcceptOne();
    LoopTimer never(loop_);
    suspended.set_value();
    char buffer[8];
    co_await socket->ReadSome(asio::buffer(buffer));  // the client never writes
    ADD_FAILURE() << "the read ended without input";
  });
  const int client = ConnectClient();
  suspended.get_future().wait();
  StopLoop();
  EXPECT_TRUE(watch.expired());
  close(client);
}

TEST(EventLoop, PostFromAnotherThreadWakesABlockedLoop) {
  EventLoop loop;
  std::thread thread([&] { loop.Run(); });
  std::promise<std::thread::id> ran;
  std::this_thread::sleep_for(20ms);  // the loop is blocked in epoll_wait, with no timer
  loop.Post([&] { ran.set_value(std::this_thread::get_id()); });
  auto future = ran.get_future();
  ASSERT_EQ(future.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(future.get(), thread.get_id());
  loop.Stop();
  thread.join();
}

}  // namespace
}  // namespace strata::gateway
