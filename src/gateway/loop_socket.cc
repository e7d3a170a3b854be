#include "gateway/loop_socket.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/check.h"

namespace strata::gateway {
namespace {

constexpr uint32_t kConnectionEvents = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
constexpr uint32_t kInputEvents = EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR;
constexpr uint32_t kOutputEvents = EPOLLOUT | EPOLLHUP | EPOLLERR;

ErrorCode LastError() { return ErrorCode(errno, asio::error::get_system_category()); }

bool WouldBlock() { return errno == EAGAIN || errno == EWOULDBLOCK; }

void SetNoDelay(int fd) {
  const int one = 1;
  // A socket without it still works, only slower for small writes.
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

}  // namespace

ErrorCode LoopSocket::Adopt(int fd) {
  STRATA_CHECK(fd_ < 0);
  fd_ = fd;
  if (ErrorCode error = loop_.Add(*this, kConnectionEvents)) {
    close(fd_);
    fd_ = -1;
    return error;
  }
  // A connection just accepted has usually brought its request already.
  readable_ = true;
  hung_up_ = false;
  return {};
}

ErrorCode LoopSocket::Open(const tcp::endpoint& address) {
  STRATA_CHECK(fd_ < 0);
  fd_ = socket(address.protocol().family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd_ < 0) return LastError();
  readable_ = false;
  hung_up_ = false;
  return {};
}

ErrorCode LoopSocket::Listen(const tcp::endpoint& address, bool reuse_port) {
  if (ErrorCode error = Open(address)) return error;
  const int one = 1;
  ErrorCode error;
  if (setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
      (reuse_port && setsockopt(fd_, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) != 0) ||
      bind(fd_, address.data(), static_cast<socklen_t>(address.size())) != 0 ||
      listen(fd_, SOMAXCONN) != 0) {
    error = LastError();
  } else {
    error = loop_.Add(*this, EPOLLIN | EPOLLET);
  }
  if (error) {
    close(fd_);
    fd_ = -1;
    return error;
  }
  readable_ = true;
  return {};
}

asio::awaitable<ErrorCode> LoopSocket::Connect(const tcp::endpoint& address) {
  if (ErrorCode error = Open(address)) co_return error;
  SetNoDelay(fd_);
  // Registered once the connection is under way: polling a socket not yet connecting reports a
  // hang-up.
  const bool connected = connect(fd_, address.data(), static_cast<socklen_t>(address.size())) == 0;
  ErrorCode error =
      connected || errno == EINPROGRESS ? loop_.Add(*this, kConnectionEvents) : LastError();
  if (error) {
    close(fd_);
    fd_ = -1;
    co_return error;
  }
  if (!connected) {
    // The socket reports output once the connection is made or has failed; which, it says.
    std::tie(error) = co_await EventLoop::Suspend(waiters_[kWrite]);
    int failure = 0;
    socklen_t size = sizeof(failure);
    if (!error && getsockopt(fd_, SOL_SOCKET, SO_ERROR, &failure, &size) != 0) failure = errno;
    if (!error && failure != 0) error = ErrorCode(failure, asio::error::get_system_category());
  }
  if (error) Close();
  co_return error;
}

asio::awaitable<std::pair<ErrorCode, int>> LoopSocket::Accept() {
  while (is_open()) {
    if (readable_) {
      const int fd = accept4(fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd >= 0) {
        SetNoDelay(fd);
        co_return std::pair(ErrorCode(), fd);
      }
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (!WouldBlock()) co_return std::pair(LastError(), -1);
      readable_ = false;
    }
    auto [error] = co_await EventLoop::Suspend(waiters_[kRead]);
    if (error) co_return std::pair(error, -1);
  }
  co_return std::pair(ErrorCode(asio::error::operation_aborted), -1);
}

asio::awaitable<IoResult> LoopSocket::ReadSome(asio::mutable_buffer buffer) {
  if (buffer.size() == 0) co_return IoResult{};
  while (is_open()) {
    if (readable_) {
      const ssize_t n = recv(fd_, buffer.data(), buffer.size(), 0);
      if (n > 0) {
        // Less than asked for: the socket is empty until the next event. After a hang-up there
        // is no next event, so the reads go on until they find the end.
        if (static_cast<size_t>(n) < buffer.size() && !hung_up_) readable_ = false;
        co_return IoResult{{}, static_cast<size_t>(n)};
      }
      if (n == 0) co_return IoResult{asio::error::eof, 0};
      if (errno == EINTR) continue;
      if (!WouldBlock()) co_return IoResult{LastError(), 0};
      readable_ = false;
    }
    auto [error] = co_await EventLoop::Suspend(waiters_[kRead]);
    if (error) co_return IoResult{error, 0};
  }
  co_return IoResult{asio::error::operation_aborted, 0};
}

size_t LoopSocket::SendSome(std::span<const asio::const_buffer> buffers, size_t skip,
                            ErrorCode* error) {
  // On the thread's stack, not in a coroutine frame: a frame over 1 KB misses Asio's recycling
  // cache and costs a malloc per write.
  std::array<iovec, kMaxBuffers> vector;
  size_t count = 0;
  for (const asio::const_buffer& buffer : buffers) {
    if (skip >= buffer.size()) {
      skip -= buffer.size();
      continue;
    }
    vector[count++] = {const_cast<char*>(static_cast<const char*>(buffer.data())) + skip,
                       buffer.size() - skip};
    skip = 0;
  }
  msghdr message{};
  message.msg_iov = vector.data();
  message.msg_iovlen = count;
  while (true) {
    const ssize_t n = sendmsg(fd_, &message, MSG_NOSIGNAL);
    if (n >= 0) return static_cast<size_t>(n);
    if (errno == EINTR) continue;
    if (!WouldBlock()) *error = LastError();
    return 0;
  }
}

asio::awaitable<ErrorCode> LoopSocket::WriteAll(std::span<const asio::const_buffer> buffers) {
  STRATA_CHECK(buffers.size() <= kMaxBuffers);
  size_t total = 0;
  for (const asio::const_buffer& buffer : buffers) total += buffer.size();
  size_t written = 0;
  while (written < total) {
    if (!is_open()) co_return asio::error::operation_aborted;
    ErrorCode error;
    const size_t n = SendSome(buffers, written, &error);
    if (error) co_return error;
    written += n;
    if (n > 0) continue;
    // The send buffer is full: wait for the event that says it has room.
    auto [wait_error] = co_await EventLoop::Suspend(waiters_[kWrite]);
    if (wait_error) co_return wait_error;
  }
  co_return ErrorCode();
}

asio::awaitable<ErrorCode> LoopSocket::WriteAll(asio::const_buffer buffer) {
  // A coroutine of its own, so that the buffer the span points at lives in its frame.
  co_return co_await WriteAll(std::span<const asio::const_buffer>(&buffer, 1));
}

void LoopSocket::ShutdownSend() {
  if (is_open()) shutdown(fd_, SHUT_WR);
}

void LoopSocket::Close() {
  if (fd_ < 0) return;
  loop_.Remove(*this);
  close(fd_);
  fd_ = -1;
  readable_ = false;
  hung_up_ = false;
  loop_.Resume(waiters_[kRead], asio::error::operation_aborted, true);
  loop_.Resume(waiters_[kWrite], asio::error::operation_aborted, true);
}

bool LoopSocket::EndRead() {
  if (!waiters_[kRead]) return false;
  loop_.Resume(waiters_[kRead], asio::error::operation_aborted, true);
  return true;
}

tcp::endpoint LoopSocket::LocalEndpoint() const {
  tcp::endpoint endpoint;
  auto size = static_cast<socklen_t>(endpoint.capacity());
  if (getsockname(fd_, endpoint.data(), &size) == 0) endpoint.resize(size);
  return endpoint;
}

void LoopSocket::OnEvent(uint32_t events) {
  if ((events & kInputEvents) != 0) readable_ = true;
  if ((events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) != 0) hung_up_ = true;
  // Both handlers are taken before either runs: the first may end with this socket gone.
  WaitHandler input, output;
  if ((events & kInputEvents) != 0) input.swap(waiters_[kRead]);
  if ((events & kOutputEvents) != 0) output.swap(waiters_[kWrite]);
  if (input) input(ErrorCode());
  if (output) output(ErrorCode());
}

}  // namespace strata::gateway
