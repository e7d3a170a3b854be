#pragma once

#include <string>
#include <string_view>

namespace strata::gateway {

// The one home of the body of every error the gateway answers itself (as opposed to an
// engine's answers, which it relays as they are): OpenAI's shape,
//   {"error": {"message": ..., "type": ..., "param": ..., "code": ...}}
// where `type` follows from the HTTP status (invalid_request_error for 4xx, authentication_error
// for 401, rate_limit_exceeded for 429, server_error / service_unavailable for 5xx), and
// `param` and `code` are null when empty. Pure; thread-safe.
std::string OpenAIErrorBody(int status, std::string_view message, std::string_view param = {},
                            std::string_view code = {});

// The `type` OpenAIErrorBody gives an error of HTTP status `status`.
std::string_view OpenAIErrorType(int status);

}  // namespace strata::gateway
