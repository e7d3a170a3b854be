#include "api/api_status.h"

#include <array>
#include <utility>

namespace strata::api {
namespace {

constexpr std::array<std::pair<StatusCode, std::string_view>, 14> kReasons = {{
    {StatusCode::kInvalidArgument, "BadRequest"},
    {StatusCode::kNotFound, "NotFound"},
    {StatusCode::kAlreadyExists, "AlreadyExists"},
    {StatusCode::kConflict, "Conflict"},
    {StatusCode::kExpired, "Expired"},
    {StatusCode::kFailedPrecondition, "PreconditionFailed"},
    {StatusCode::kResourceExhausted, "TooManyRequests"},
    {StatusCode::kUnauthenticated, "Unauthorized"},
    {StatusCode::kPermissionDenied, "Forbidden"},
    {StatusCode::kUnavailable, "ServiceUnavailable"},
    {StatusCode::kDeadlineExceeded, "Timeout"},
    {StatusCode::kCancelled, "Timeout"},
    {StatusCode::kUnimplemented, "MethodNotAllowed"},
    {StatusCode::kInternal, "InternalError"},
}};

StatusCode CodeForHttpStatus(int http_code) {
  switch (http_code) {
    case 400:
    case 413:
    case 422:
      return StatusCode::kInvalidArgument;
    case 401:
      return StatusCode::kUnauthenticated;
    case 403:
      return StatusCode::kPermissionDenied;
    case 404:
      return StatusCode::kNotFound;
    case 405:
      return StatusCode::kUnimplemented;
    case 409:
      return StatusCode::kConflict;
    case 410:
      return StatusCode::kExpired;
    case 429:
      return StatusCode::kResourceExhausted;
    case 501:
      return StatusCode::kUnimplemented;
    case 503:
      return StatusCode::kUnavailable;
    case 504:
      return StatusCode::kDeadlineExceeded;
    default:
      return StatusCode::kInternal;
  }
}

}  // namespace

std::string_view StatusReason(StatusCode code) {
  for (const auto& [c, reason] : kReasons) {
    if (c == code) return reason;
  }
  return "Unknown";
}

nlohmann::json StatusObject(const Status& status) {
  return {{"kind", "Status"},
          {"apiVersion", "v1"},
          {"metadata", nlohmann::json::object()},
          {"status", "Failure"},
          {"message", status.message()},
          {"reason", StatusReason(status.code())},
          {"code", HttpStatusFor(status.code())}};
}

Status StatusFromResponse(int http_code, std::string_view body) {
  StatusCode code = CodeForHttpStatus(http_code);
  nlohmann::json parsed = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object() || !parsed.contains("message") || !parsed["message"].is_string()) {
    std::string text(body.empty() ? "HTTP " + std::to_string(http_code) : std::string(body));
    return Status(code, text);
  }
  if (parsed.contains("reason") && parsed["reason"].is_string()) {
    const std::string& reason = parsed["reason"].get_ref<const std::string&>();
    for (const auto& [c, name] : kReasons) {
      // "Timeout" names two codes; the HTTP code has already told them apart.
      if (name == reason && name != "Timeout") code = c;
    }
  }
  return Status(code, parsed["message"].get<std::string>());
}

}  // namespace strata::api
