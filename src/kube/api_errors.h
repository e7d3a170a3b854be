#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "common/status.h"

// How the Kubernetes API's answers become strata Status codes: the one mapping of HTTP status
// codes and metav1.Status reasons for the kube module.

namespace strata::kube {

// The Status for an HTTP answer `http_status` (>= 300) with body `body` (a metav1.Status
// object when the API server wrote it; anything else is quoted, shortened). `what` names the
// request ("GET https://127.0.0.1:6443/api/v1/pods") and starts the message, followed by the
// server's reason and message: "POST https://...: AlreadyExists: pods \"p\" already exists".
//
//   400 BadRequest, 415, 422 Invalid -> InvalidArgument    401 -> Unauthenticated
//   403 -> PermissionDenied      404 -> NotFound           405 -> Unimplemented
//   409 AlreadyExists -> AlreadyExists, other 409 (Conflict) -> Conflict
//   410 Gone/Expired -> Expired  413 -> ResourceExhausted  429 -> ResourceExhausted
//   500 -> Internal   503 -> Unavailable
//   504 with cause ResourceVersionTooLarge -> Expired (client-go relists, as for 410)
//   other 504 -> DeadlineExceeded; other 4xx -> InvalidArgument, other 5xx -> Unavailable
Status StatusFromApiResponse(int http_status, std::string_view body, std::string_view what);

// The Status for an ERROR event of a watch stream, whose object is a metav1.Status: mapped by
// its `code` as above (410 -> Expired).
Status StatusFromWatchError(const nlohmann::json& status_object, std::string_view what);

}  // namespace strata::kube
