#include "net/ready_read.h"

#include <sys/epoll.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/detail/reactor.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <type_traits>

#include "common/check.h"

namespace strata::net {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using Reactor = asio::detail::reactor;
static_assert(std::is_same_v<Reactor, asio::detail::epoll_reactor>,
              "ReadWhenReady knows Asio's epoll reactor only");
using DescriptorState = Reactor::descriptor_state;

// The reactor's per-socket state sits in the socket's protected implementation; a member
// pointer named through a derived class reaches it.
struct SocketInternals : tcp::socket {
  static DescriptorState* State(tcp::socket& socket) {
    return (socket.*(&SocketInternals::impl_)).get_implementation().reactor_data_;
  }
};

// The rest is private to the reactor. An explicit instantiation may name a private member
// (access is not checked there); the friend function it defines hands the member pointer out.
template <typename Tag, typename Tag::Type kMember>
struct Expose {
  friend typename Tag::Type MemberOf(Tag) { return kMember; }
};
// Whether the reactor tries a read before waiting: set whenever epoll reports the socket.
struct TrySpeculative {
  using Type = bool (DescriptorState::*)[Reactor::max_ops];
  friend Type MemberOf(TrySpeculative);
};
template struct Expose<TrySpeculative, &DescriptorState::try_speculative_>;
// The epoll events the socket is registered for (the reactor rewrites them when it adds
// EPOLLOUT for a write that has to wait).
struct RegisteredEvents {
  using Type = uint32_t DescriptorState::*;
  friend Type MemberOf(RegisteredEvents);
};
template struct Expose<RegisteredEvents, &DescriptorState::registered_events_>;
// The events of the latest epoll report about the socket (kept until the next one).
struct ReportedEvents {
  using Type = unsigned int asio::detail::scheduler_operation::*;
  friend Type MemberOf(ReportedEvents);
};
template struct Expose<ReportedEvents, &DescriptorState::task_result_>;
// The reactor's epoll instance.
struct EpollFd {
  using Type = int Reactor::*;
  friend Type MemberOf(EpollFd);
};
template struct Expose<EpollFd, &Reactor::epoll_fd_>;

// The reactor's per-socket state of an open socket.
DescriptorState& StateOf(tcp::socket& socket) {
  DescriptorState* state = SocketInternals::State(socket);
  STRATA_CHECK(state != nullptr);
  return *state;
}

// Whether the reactor would try a read of the socket before waiting for it: true when epoll
// reported the socket since it was last marked drained. Set by the reactor, on the event loop's
// thread (the caller's); cleared here.
bool& MayHaveData(DescriptorState& state) {
  return (state.*MemberOf(TrySpeculative{}))[Reactor::read_op];
}

// Whether epoll reported that the peer closed its side. A read that returns less than it asked
// empties the receive queue of data, but an end of stream behind that data is only returned by
// the next read; after such a report, that read must not wait for another report.
bool PeerClosed(DescriptorState& state) {
  // A C-style cast may convert to the private base class.
  const auto& operation = (const asio::detail::scheduler_operation&)state;
  return (operation.*MemberOf(ReportedEvents{}) & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) != 0;
}

// Asio registers sockets without EPOLLRDHUP; adds it once per socket, so PeerClosed can see it.
// Returns whether the socket is registered with it.
bool WatchPeerClose(tcp::socket& socket, DescriptorState& state) {
  uint32_t& registered = state.*MemberOf(RegisteredEvents{});
  if ((registered & EPOLLRDHUP) != 0) return true;
  Reactor& reactor =
      asio::use_service<Reactor>(asio::query(socket.get_executor(), asio::execution::context));
  epoll_event event{};
  event.events = registered | EPOLLRDHUP;
  event.data.ptr = &state;
  if (::epoll_ctl(reactor.*MemberOf(EpollFd{}), EPOLL_CTL_MOD, socket.native_handle(), &event) !=
      0) {
    return false;
  }
  registered = event.events;
  return true;
}

// After a read of `n` bytes into a buffer of `size`: marks the socket drained when it is.
void NoteRead(DescriptorState& state, size_t n, size_t size) {
  // A TCP read that returns less than asked emptied the receive queue (the kernel copies until
  // the queue and its backlog are empty or the buffer is full).
  if (n < size && !PeerClosed(state)) MayHaveData(state) = false;
}

}  // namespace

asio::awaitable<std::pair<boost::system::error_code, size_t>> ReadWhenReady(
    tcp::socket& socket, asio::mutable_buffer buffer) {
  STRATA_CHECK(buffer.size() > 0);
  boost::system::error_code ec;
  if (!socket.is_open()) co_return std::pair{asio::error::bad_descriptor, size_t{0}};
  DescriptorState& state = StateOf(socket);
  if (!WatchPeerClose(socket, state)) {
    // Blind to an end of stream behind data: read as Asio does, trying at once.
    auto [read_ec, n] =
        co_await socket.async_read_some(buffer, asio::as_tuple(asio::use_awaitable));
    co_return std::pair{read_ec, n};
  }
  if (MayHaveData(state)) {
    const size_t n = socket.read_some(buffer, ec);
    if (!ec) {
      NoteRead(state, n, buffer.size());
      co_return std::pair{ec, n};
    }
    if (ec != asio::error::would_block) co_return std::pair{ec, n};
    MayHaveData(state) = false;
  }
  // The reactor queues the read untried and performs it when epoll reports data; this
  // coroutine then resumes inside that handling, before the event loop polls again, so no
  // report can arrive between the read and NoteRead.
  auto [read_ec, n] = co_await socket.async_read_some(buffer, asio::as_tuple(asio::use_awaitable));
  if (!read_ec && socket.is_open()) NoteRead(StateOf(socket), n, buffer.size());
  co_return std::pair{read_ec, n};
}

}  // namespace strata::net
