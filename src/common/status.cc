#include "common/status.h"

namespace strata {

std::string_view StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "OK";
    case StatusCode::kInvalidArgument:
      return "InvalidArgument";
    case StatusCode::kNotFound:
      return "NotFound";
    case StatusCode::kAlreadyExists:
      return "AlreadyExists";
    case StatusCode::kConflict:
      return "Conflict";
    case StatusCode::kExpired:
      return "Expired";
    case StatusCode::kFailedPrecondition:
      return "FailedPrecondition";
    case StatusCode::kResourceExhausted:
      return "ResourceExhausted";
    case StatusCode::kUnauthenticated:
      return "Unauthenticated";
    case StatusCode::kPermissionDenied:
      return "PermissionDenied";
    case StatusCode::kUnavailable:
      return "Unavailable";
    case StatusCode::kDeadlineExceeded:
      return "DeadlineExceeded";
    case StatusCode::kCancelled:
      return "Cancelled";
    case StatusCode::kUnimplemented:
      return "Unimplemented";
    case StatusCode::kInternal:
      return "Internal";
  }
  return "Unknown";
}

int HttpStatusFor(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return 200;
    case StatusCode::kInvalidArgument:
      return 400;
    case StatusCode::kNotFound:
      return 404;
    case StatusCode::kAlreadyExists:
      return 409;
    case StatusCode::kConflict:
      return 409;
    case StatusCode::kExpired:
      return 410;
    case StatusCode::kFailedPrecondition:
      return 412;
    case StatusCode::kResourceExhausted:
      return 429;
    case StatusCode::kUnauthenticated:
      return 401;
    case StatusCode::kPermissionDenied:
      return 403;
    case StatusCode::kUnavailable:
      return 503;
    case StatusCode::kDeadlineExceeded:
      return 504;
    case StatusCode::kCancelled:
      return 499;
    case StatusCode::kUnimplemented:
      return 501;
    case StatusCode::kInternal:
      return 500;
  }
  return 500;
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  std::string out(StatusCodeName(code_));
  out += ": ";
  out += message_;
  return out;
}

Status Status::WithPrefix(std::string_view prefix) const {
  if (ok()) return *this;
  std::string message(prefix);
  message += ": ";
  message += message_;
  return Status(code_, std::move(message));
}

Status InvalidArgumentError(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
Status NotFoundError(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
Status AlreadyExistsError(std::string m) { return {StatusCode::kAlreadyExists, std::move(m)}; }
Status ConflictError(std::string m) { return {StatusCode::kConflict, std::move(m)}; }
Status ExpiredError(std::string m) { return {StatusCode::kExpired, std::move(m)}; }
Status FailedPreconditionError(std::string m) {
  return {StatusCode::kFailedPrecondition, std::move(m)};
}
Status ResourceExhaustedError(std::string m) {
  return {StatusCode::kResourceExhausted, std::move(m)};
}
Status UnauthenticatedError(std::string m) { return {StatusCode::kUnauthenticated, std::move(m)}; }
Status PermissionDeniedError(std::string m) {
  return {StatusCode::kPermissionDenied, std::move(m)};
}
Status UnavailableError(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
Status DeadlineExceededError(std::string m) {
  return {StatusCode::kDeadlineExceeded, std::move(m)};
}
Status CancelledError(std::string m) { return {StatusCode::kCancelled, std::move(m)}; }
Status UnimplementedError(std::string m) { return {StatusCode::kUnimplemented, std::move(m)}; }
Status InternalError(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

}  // namespace strata
