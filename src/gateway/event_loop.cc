#include "gateway/event_loop.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <climits>

#include "common/check.h"
#include "gateway/loop_socket.h"

namespace strata::gateway {

EventLoop::EventLoop()
    : epoll_fd_(epoll_create1(EPOLL_CLOEXEC)),
      wake_fd_(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)),
      io_(std::make_unique<asio::io_context>(1)) {
  // Running out of descriptors before the gateway has even started is not recoverable here.
  STRATA_CHECK(epoll_fd_ >= 0 && wake_fd_ >= 0);
  epoll_event wake{};
  wake.events = EPOLLIN;
  wake.data.u64 = kWakeKey;
  STRATA_CHECK(epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &wake) == 0);
}

EventLoop::~EventLoop() {
  if (io_ != nullptr) Shutdown();
  close(wake_fd_);
  close(epoll_fd_);
}

void EventLoop::Run() {
  // Handlers run inside io().run(), so coroutine frames come from Asio's per-thread recycling
  // cache, which lives as long as the run does.
  auto work = asio::make_work_guard(*io_);
  asio::post(*io_, [this] { Loop(); });
  io_->run();
}

void EventLoop::Stop() {
  stopped_.store(true, std::memory_order_release);
  Wake();
}

void EventLoop::Wake() {
  const uint64_t one = 1;
  // Fails only when the counter is already huge: the loop wakes anyway.
  [[maybe_unused]] ssize_t written = write(wake_fd_, &one, sizeof(one));
}

void EventLoop::Loop() {
  std::array<epoll_event, 128> events;
  while (!stopped_.load(std::memory_order_acquire)) {
    // Handlers posted since the last turn: new connections' coroutines, Post from other
    // threads, aborted waits. io() has no reactor, so this makes no system call.
    io_->poll();
    if (stopped_.load(std::memory_order_acquire)) break;
    // Counted from the turn's start: a timer may fire later by the time the turn took.
    const int n = epoll_wait(epoll_fd_, events.data(), static_cast<int>(events.size()),
                             WaitMilliseconds(now_));
    now_ = SteadyClock::now();
    for (int i = 0; i < n; ++i) Dispatch(events[static_cast<size_t>(i)]);
    if (!timers_.empty()) FireTimers(now_);
  }
  // Coroutines still suspended keep io() busy: run() returns only when told.
  io_->stop();
}

void EventLoop::Dispatch(const epoll_event& event) {
  if (event.data.u64 == kWakeKey) {
    uint64_t count = 0;
    [[maybe_unused]] ssize_t read_bytes = read(wake_fd_, &count, sizeof(count));
    return;
  }
  const auto fd = static_cast<size_t>(event.data.u64 & 0xffffffffu);
  const auto serial = static_cast<uint32_t>(event.data.u64 >> 32);
  if (fd >= sockets_.size()) return;
  LoopSocket* socket = sockets_[fd];
  // Closed after epoll_wait returned, its descriptor perhaps taken by a newer socket.
  if (socket == nullptr || socket->serial_ != serial) return;
  socket->OnEvent(event.events);
}

void EventLoop::FireTimers(SteadyClock::time_point now) {
  while (!timers_.empty() && timers_.begin()->first <= now) {
    LoopTimer* timer = timers_.begin()->second;
    timers_.erase(timers_.begin());
    timer->armed_ = false;
    Resume(timer->waiter_, {}, false);
  }
}

int EventLoop::WaitMilliseconds(SteadyClock::time_point now) const {
  if (timers_.empty()) return -1;
  const SteadyClock::time_point at = timers_.begin()->first;
  if (at <= now) return 0;
  const auto wait = std::chrono::ceil<std::chrono::milliseconds>(at - now).count();
  return wait > INT_MAX ? INT_MAX : static_cast<int>(wait);
}

ErrorCode EventLoop::Add(LoopSocket& socket, uint32_t events) {
  const auto fd = static_cast<size_t>(socket.fd_);
  if (fd >= sockets_.size()) sockets_.resize(fd + 1, nullptr);
  STRATA_CHECK(sockets_[fd] == nullptr);
  socket.serial_ = next_serial_++;
  epoll_event event{};
  event.events = events;
  event.data.u64 = EventKey(socket.fd_, socket.serial_);
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, socket.fd_, &event) != 0) {
    return ErrorCode(errno, asio::error::get_system_category());
  }
  sockets_[fd] = &socket;
  return {};
}

void EventLoop::Remove(LoopSocket& socket) {
  const auto fd = static_cast<size_t>(socket.fd_);
  // Closing the descriptor takes it out of the epoll instance.
  if (fd < sockets_.size() && sockets_[fd] == &socket) sockets_[fd] = nullptr;
}

void EventLoop::Resume(WaitHandler& slot, ErrorCode error, bool later) {
  if (!slot) return;
  WaitHandler handler(std::move(slot));
  if (later) {
    asio::post(*io_, [handler = std::move(handler), error]() mutable { handler(error); });
  } else {
    handler(error);
  }
}

void EventLoop::Shutdown() {
  // A dropped handler posts the unwinding of its coroutine's frames to io(); destroying io()
  // destroys them, and the sockets and timers in them leave this loop as they go.
  std::vector<WaitHandler> dropped;
  for (LoopSocket* socket : sockets_) {
    if (socket == nullptr) continue;
    for (WaitHandler& waiter : socket->waiters_) {
      if (waiter) dropped.emplace_back(std::move(waiter));
    }
  }
  for (auto& [at, timer] : timers_) {
    if (timer->waiter_) dropped.emplace_back(std::move(timer->waiter_));
  }
  dropped.clear();
  io_.reset();
}

LoopTimer::~LoopTimer() {
  if (armed_) loop_.timers_.erase(entry_);
}

asio::awaitable<ErrorCode> LoopTimer::WaitUntil(SteadyClock::time_point at) {
  STRATA_CHECK(!armed_);
  entry_ = loop_.timers_.emplace(at, this);
  armed_ = true;
  auto [error] = co_await EventLoop::Suspend(waiter_);
  co_return error;
}

void LoopTimer::Cancel() {
  if (!armed_) return;
  loop_.timers_.erase(entry_);
  armed_ = false;
  loop_.Resume(waiter_, asio::error::operation_aborted, true);
}

}  // namespace strata::gateway
