#pragma once

#include <string_view>

#include "common/clock.h"
#include "common/status.h"
#include "net/http_message.h"

namespace strata::net {

// Sends `request` to host:port over TLS (1.2 or later) on a new connection, and returns the whole
// response, whatever its status. The server's certificate is not verified: this is the kubelet's
// HTTPS probe, which checks that a server answers, not who it is; never use it to send anything
// secret. `timeout` bounds the connect, the handshake and each wait for progress. Errors as
// HttpClient::Send's (Unavailable, DeadlineExceeded, ResourceExhausted past max_response_bytes).
// Blocks the calling thread; thread-safe (each call has its own I/O).
Result<HttpResponse> HttpsGetUnverified(std::string_view host, int port, const HttpRequest& request,
                                        Duration timeout, size_t max_response_bytes);

}  // namespace strata::net
