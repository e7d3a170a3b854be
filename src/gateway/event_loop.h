#pragma once

// Internal to the gateway module: the event loop each gateway thread runs. It owns an epoll
// instance in which every socket of the loop is registered once, edge-triggered, so a socket is
// read only after the kernel said it has something (as nginx does), and timers of its own. The
// loop's coroutines are asio::awaitable, resumed by the loop itself or through an io_context
// that holds no socket and no timer: with no reactor behind it, running its handlers makes no
// system call. Boost stays in here, out of server.h.

#include <sys/epoll.h>

#include <array>
#include <atomic>
#include <boost/asio.hpp>
#include <chrono>
#include <cstdint>
#include <map>
#include <vector>

#include "common/check.h"

namespace strata::gateway {

namespace asio = boost::asio;
using SteadyClock = std::chrono::steady_clock;
using ErrorCode = boost::system::error_code;

// What a coroutine suspended on a socket or a timer is resumed with.
using WaitHandler = asio::any_completion_handler<void(ErrorCode)>;

class LoopSocket;
class LoopTimer;

// One event loop: sockets (LoopSocket), timers (LoopTimer) and coroutines spawned on io().
// Created and destroyed on any thread; Run on one thread. Post and Stop are thread-safe;
// everything else belongs to the loop's thread (before Run: to the thread that made it).
class EventLoop {
 public:
  EventLoop();
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  // The executor coroutines run on. Never give it an Asio socket or timer: that would add
  // Asio's reactor, whose poll is a system call in every turn of the loop.
  asio::io_context& io() { return *io_; }

  // Runs the loop on the calling thread until Stop: waits on epoll and the nearest timer,
  // resumes the coroutines whose socket or timer is ready, and runs the handlers posted to io().
  void Run();
  // Makes Run return soon. Thread-safe.
  void Stop();
  // Runs `task` on the loop's thread. Thread-safe.
  template <typename Task>
  void Post(Task&& task) {
    asio::post(*io_, std::forward<Task>(task));
    Wake();
  }

  // When the current turn of the loop began (it is read once per turn, after epoll returns):
  // what coarse deadlines are counted from, without a clock read each. On the loop's thread.
  SteadyClock::time_point Now() const { return now_; }

  // Ends every coroutine suspended on this loop's sockets and timers, and those waiting in
  // io(): their frames are destroyed, with what they hold. REQUIRES: Run has returned.
  // Afterwards only destruction is left.
  void Shutdown();

 private:
  friend class LoopSocket;
  friend class LoopTimer;
  // What identifies a socket in the epoll events: its descriptor and a registration serial, so
  // an event still queued for a socket closed meanwhile (its descriptor maybe reused) is
  // dropped.
  static uint64_t EventKey(int fd, uint32_t serial) {
    return (uint64_t{serial} << 32) | static_cast<uint32_t>(fd);
  }
  static constexpr uint64_t kWakeKey = UINT64_MAX;

  // Registers `socket`'s open descriptor (edge-triggered: input, output, peer hang-up).
  // Returns the error, if any.
  ErrorCode Add(LoopSocket& socket, uint32_t events);
  void Remove(LoopSocket& socket);
  void Wake();
  void Loop();
  void Dispatch(const epoll_event& event);
  // Resumes the coroutines of timers due by `now`.
  void FireTimers(SteadyClock::time_point now);
  // Milliseconds epoll may wait: until the nearest timer, rounded up; -1 without timers.
  int WaitMilliseconds(SteadyClock::time_point now) const;
  // Suspends the calling coroutine, its handler kept in `slot` (empty) until the loop resumes
  // it with the wait's error (none, or operation_aborted). Every wait of LoopSocket and
  // LoopTimer is this.
  static auto Suspend(WaitHandler& slot) {
    auto token = asio::as_tuple(asio::use_awaitable);
    return asio::async_initiate<decltype(token), void(ErrorCode)>(
        [&slot](auto handler) {
          STRATA_CHECK(!slot);  // one wait per direction of a socket, one per timer
          WaitHandler(std::move(handler)).swap(slot);
        },
        token);
  }
  // Resumes the coroutine whose handler `slot` holds, if any, with `error`: at once, or (when
  // `later`) from io(), so that the caller's loop over sockets or deadlines stays valid.
  void Resume(WaitHandler& slot, ErrorCode error, bool later);

  int epoll_fd_ = -1;
  int wake_fd_ = -1;  // an eventfd: Post and Stop write it to end epoll_wait
  std::atomic<bool> stopped_{false};
  SteadyClock::time_point now_ = SteadyClock::now();
  uint32_t next_serial_ = 1;
  std::vector<LoopSocket*> sockets_;  // by descriptor; null where none of this loop's
  std::multimap<SteadyClock::time_point, LoopTimer*> timers_;
  // Last, so that it goes first: frames it destroys unregister their sockets and timers.
  std::unique_ptr<asio::io_context> io_;
};

// A timer of one event loop, for its coroutines. Not thread-safe: used on its loop's thread.
class LoopTimer {
 public:
  explicit LoopTimer(EventLoop& loop) : loop_(loop) {}
  ~LoopTimer();
  LoopTimer(const LoopTimer&) = delete;
  LoopTimer& operator=(const LoopTimer&) = delete;

  // Waits until `at`. Returns no error then, operation_aborted when Cancel came first.
  // REQUIRES: no other wait of this timer pending.
  asio::awaitable<ErrorCode> WaitUntil(SteadyClock::time_point at);
  asio::awaitable<ErrorCode> WaitFor(SteadyClock::duration duration) {
    return WaitUntil(SteadyClock::now() + duration);
  }
  // Ends the pending wait, if any, with operation_aborted (from the loop, not from this call).
  void Cancel();

 private:
  friend class EventLoop;
  EventLoop& loop_;
  std::multimap<SteadyClock::time_point, LoopTimer*>::iterator entry_;
  bool armed_ = false;
  WaitHandler waiter_;
};

}  // namespace strata::gateway
