#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "common/status.h"

namespace strata::api {

// Errors on the wire, in the shape of a Kubernetes `Status` object:
//   {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
//    "message": "...", "reason": "NotFound", "code": 404}
// The HTTP code comes from HttpStatusFor (common/status.h), the one place codes are mapped.

// The Kubernetes reason word for `code`: "NotFound", "AlreadyExists", "Conflict", "Expired",
// "BadRequest", "Unauthorized", "Forbidden", ...
std::string_view StatusReason(StatusCode code);

// REQUIRES: !status.ok().
nlohmann::json StatusObject(const Status& status);

// The Status a client reads back from an error response: the code from `reason` (falling back
// on the HTTP code), the message from `message` (falling back on the body itself).
Status StatusFromResponse(int http_code, std::string_view body);

}  // namespace strata::api
