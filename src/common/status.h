#pragma once

#include <string>
#include <string_view>
#include <tl/expected.hpp>
#include <utility>

namespace strata {

// The outcome of an operation that can fail. No exception crosses a module boundary: functions
// return Status or Result<T> instead. Codes are few and map to HTTP in one place
// (HttpStatusFor). Cheap to copy; thread-compatible.
enum class StatusCode {
  kOk = 0,
  kInvalidArgument,     // bad input from a user: manifest, flag, request body (HTTP 400/422)
  kNotFound,            // the named object does not exist (404)
  kAlreadyExists,       // create of an object that exists (409)
  kConflict,            // stale resourceVersion on update (409)
  kExpired,             // watch from a version older than what is kept (410)
  kFailedPrecondition,  // the system is not in a state that allows the operation (412)
  kResourceExhausted,   // quota, size or capacity limit reached (429 / 413)
  kUnauthenticated,     // missing or unknown credentials (401)
  kPermissionDenied,    // credentials known but not allowed (403)
  kUnavailable,         // transient: retry may succeed (503)
  kDeadlineExceeded,    // timed out (504)
  kCancelled,           // the caller went away
  kUnimplemented,       // a valid request strata does not support (501)
  kInternal,            // a bug or an environment failure (500)
};

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // "NotFound: job \"a\" not found"; "OK" for success.
  std::string ToString() const;

  // Returns a copy whose message is "<prefix>: <message>", keeping the code.
  Status WithPrefix(std::string_view prefix) const;

  // Drops the status on purpose (a rollback after an earlier error, whose own failure changes
  // nothing the caller can do): Status is [[nodiscard]], and this says so where it is read.
  void IgnoreError() const {}

  bool operator==(const Status& other) const = default;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// The short name of a code as it appears in ToString() and in API errors: "InvalidArgument".
std::string_view StatusCodeName(StatusCode code);

// The one place where codes become HTTP status codes.
int HttpStatusFor(StatusCode code);

Status InvalidArgumentError(std::string message);
Status NotFoundError(std::string message);
Status AlreadyExistsError(std::string message);
Status ConflictError(std::string message);
Status ExpiredError(std::string message);
Status FailedPreconditionError(std::string message);
Status ResourceExhaustedError(std::string message);
Status UnauthenticatedError(std::string message);
Status PermissionDeniedError(std::string message);
Status UnavailableError(std::string message);
Status DeadlineExceededError(std::string message);
Status CancelledError(std::string message);
Status UnimplementedError(std::string message);
Status InternalError(std::string message);

// A value or the Status that explains why there is none. A tl::expected that must not be
// dropped unread.
template <typename T>
class [[nodiscard]] Result : public tl::expected<T, Status> {
 public:
  using tl::expected<T, Status>::expected;
  Result(tl::expected<T, Status> other) : tl::expected<T, Status>(std::move(other)) {}
};

// Wraps an error Status for returning from a function that returns Result<T>.
inline tl::unexpected<Status> Err(Status status) {
  return tl::unexpected<Status>(std::move(status));
}

}  // namespace strata

#define STRATA_CONCAT_INNER(a, b) a##b
#define STRATA_CONCAT(a, b) STRATA_CONCAT_INNER(a, b)

// Returns the Status from the enclosing function if `expr` (a Status) is not OK.
#define RETURN_IF_ERROR(expr)                                                  \
  do {                                                                         \
    ::strata::Status strata_status_ = (expr);                                  \
    if (!strata_status_.ok()) return ::strata::Err(std::move(strata_status_)); \
  } while (0)

// `ASSIGN_OR_RETURN(auto x, F())`: if F() (a Result) holds an error, return it from the
// enclosing function; otherwise bind its value.
#define ASSIGN_OR_RETURN(lhs, expr)                                                   \
  auto STRATA_CONCAT(strata_result_, __LINE__) = (expr);                              \
  if (!STRATA_CONCAT(strata_result_, __LINE__))                                       \
    return ::strata::Err(std::move(STRATA_CONCAT(strata_result_, __LINE__).error())); \
  lhs = std::move(*STRATA_CONCAT(strata_result_, __LINE__))
