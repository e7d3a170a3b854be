#pragma once

// Internal to the gateway module: a non-blocking TCP socket of one gateway event loop.

#include <span>
#include <utility>

#include "gateway/event_loop.h"

namespace strata::gateway {

using tcp = asio::ip::tcp;

// How an operation of a LoopSocket ended: its error (none, eof at the end of input,
// operation_aborted when the socket was closed meanwhile, or the system's) and the bytes moved.
struct IoResult {
  ErrorCode error;
  size_t bytes = 0;
};

// A TCP socket (a connection or a listener) registered with one EventLoop, edge-triggered. It
// keeps what the kernel last said about it: a read is tried only while the socket may hold
// input (a read that got less than it asked for emptied it, until the next event), so a proxy
// does not pay a failed read per request; a write is tried at once and waits only for what the
// socket did not take. Each direction has at most one operation pending. Not thread-safe: used
// on its loop's thread; destroying it closes it.
class LoopSocket {
 public:
  // A closed socket (Connect opens it).
  explicit LoopSocket(EventLoop& loop) : loop_(loop) {}
  ~LoopSocket() { Close(); }
  LoopSocket(const LoopSocket&) = delete;
  LoopSocket& operator=(const LoopSocket&) = delete;

  // Takes `fd`, an open non-blocking connected socket, and registers it. Returns the error
  // (the descriptor is then closed). REQUIRES: closed.
  ErrorCode Adopt(int fd);
  // Opens a listening socket on `address` (SO_REUSEADDR; SO_REUSEPORT when `reuse_port`, so
  // that each loop can have its own on one port). REQUIRES: closed.
  ErrorCode Listen(const tcp::endpoint& address, bool reuse_port);
  // Connects to `address`, with TCP_NODELAY. REQUIRES: closed.
  asio::awaitable<ErrorCode> Connect(const tcp::endpoint& address);
  // Accepts one connection of a listening socket: a non-blocking descriptor with TCP_NODELAY
  // set, or the error (-1).
  asio::awaitable<std::pair<ErrorCode, int>> Accept();

  // Reads what is there, up to `buffer`'s size, waiting until something is. eof when the peer
  // has ended its output.
  asio::awaitable<IoResult> ReadSome(asio::mutable_buffer buffer);
  // Writes all of `buffers` (gathered: at most kMaxBuffers), waiting only while the socket's
  // send buffer is full. Returns the error, if any.
  static constexpr size_t kMaxBuffers = 64;
  asio::awaitable<ErrorCode> WriteAll(std::span<const asio::const_buffer> buffers);
  asio::awaitable<ErrorCode> WriteAll(asio::const_buffer buffer);

  // Ends output (the peer reads eof); input stays open.
  void ShutdownSend();
  // Closes the socket, if open; a pending operation ends with operation_aborted (from the loop,
  // not from this call).
  void Close();
  // Ends a pending read with operation_aborted (from the loop, not from this call); the socket
  // stays open. Returns whether a read was pending.
  bool EndRead();
  bool is_open() const { return fd_ >= 0; }
  // Whether the peer has ended its output (or the socket failed), as far as the events so far
  // tell: a kept-alive connection in that state cannot carry another exchange.
  bool hung_up() const { return hung_up_; }
  EventLoop& loop() const { return loop_; }
  // The bound address of an open socket.
  tcp::endpoint LocalEndpoint() const;

 private:
  friend class EventLoop;
  enum Direction { kRead = 0, kWrite = 1 };
  // Marks the directions an epoll event reports ready, and resumes what waits on them.
  void OnEvent(uint32_t events);
  // Sends what it can of `buffers` after their first `skip` bytes, without waiting. Returns the
  // bytes sent (0 when the send buffer is full); sets `error` when the socket failed.
  size_t SendSome(std::span<const asio::const_buffer> buffers, size_t skip, ErrorCode* error);
  // Opens a descriptor of `address`'s family. Returns the error.
  ErrorCode Open(const tcp::endpoint& address);

  EventLoop& loop_;
  int fd_ = -1;
  uint32_t serial_ = 0;  // of the registration, see EventLoop::EventKey
  // What the last event or operation said: input may be there; the peer hung up or the socket
  // failed (then reads go on until they say so).
  bool readable_ = false;
  bool hung_up_ = false;
  std::array<WaitHandler, 2> waiters_;  // by Direction
};

}  // namespace strata::gateway
