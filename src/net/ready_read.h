#pragma once

// Reading a TCP socket only when it has data, as an edge-triggered event loop (nginx) does.
//
// Asio's asynchronous read tries the read at once, before it waits for the socket: right for a
// socket that probably has data, but on a proxy's kept-alive connections (a client that sends
// its next request only after it got the answer, a replica still computing the answer) that
// first read almost always fails with EAGAIN, a wasted system call per wait. Asio's
// alternative, waiting for readiness first (`async_wait`), costs an `epoll_ctl` per wait
// instead. ReadWhenReady remembers, per socket, whether the socket was drained since the
// event loop last reported data on it, and then queues the read without trying it: the read
// happens once, when epoll reports the data.
//
// The memory is the reactor's own per-socket flag (`try_speculative_` of Asio's epoll reactor,
// which Asio sets whenever epoll reports the socket readable); it lives in Asio's internals,
// which is why the Boost version is pinned below. On its first read a socket is also registered
// for EPOLLRDHUP (one epoll_ctl per socket): an end of stream that arrived behind the last data
// keeps the next read trying at once, since no further report would come for it. Boost stays in
// this header: it is for the modules that already speak Asio (the gateway's event loops).

#include <boost/asio/awaitable.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/system/error_code.hpp>
#include <boost/version.hpp>
#include <cstddef>
#include <utility>

// The flag and the moment it is set are Asio 1.81's (Boost 1.81, Debian 12). Another version
// may keep them differently: re-read epoll_reactor.ipp (start_op, descriptor_state::perform_io)
// before changing this.
static_assert(BOOST_VERSION / 100 == 1081, "ReadWhenReady relies on Boost 1.81's epoll reactor");

namespace strata::net {

// Reads into `buffer` what `socket` has, waiting for data when it has none, and returns the
// error (end of stream: boost::asio::error::eof) and the bytes read (at least one on success).
// Unlike `socket.async_read_some`, it makes no system call that is bound to fail: when the
// socket was drained (a read returned less than it asked, or EAGAIN) and the event loop has
// not reported new data since, the read waits for the report instead of being tried.
//
// REQUIRES: `socket` is open, in non-blocking mode (`non_blocking(true)`), served by an
// io_context run by one thread (the calling coroutine's), and has no other operation pending
// while this one runs; `buffer` is not empty. A read whose completion could be delayed past
// the event loop's next poll would let the flag miss a report; an operation's completion runs
// at once, inside the reactor's handling of the report, only under these conditions.
boost::asio::awaitable<std::pair<boost::system::error_code, size_t>> ReadWhenReady(
    boost::asio::ip::tcp::socket& socket, boost::asio::mutable_buffer buffer);

}  // namespace strata::net
