// The one translation unit that compiles Boost.Asio's SSL implementation (on OpenSSL); the rest
// of Asio and Beast is compiled once in net/asio_beast.cc.
#include <boost/asio/ssl/impl/src.hpp>
