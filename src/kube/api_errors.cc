#include "kube/api_errors.h"

namespace strata::kube {
namespace {

using nlohmann::json;

std::string StringOf(const json& object, const char* key) {
  if (!object.is_object() || !object.contains(key) || !object[key].is_string()) return "";
  return object[key].get<std::string>();
}

bool HasCause(const json& status, std::string_view reason) {
  if (!status.is_object() || !status.contains("details") || !status["details"].is_object()) {
    return false;
  }
  const json& details = status["details"];
  if (!details.contains("causes") || !details["causes"].is_array()) return false;
  for (const json& cause : details["causes"]) {
    if (StringOf(cause, "reason") == reason) return true;
  }
  return false;
}

StatusCode CodeFor(int http_status, std::string_view reason, const json& status) {
  switch (http_status) {
    case 400:
    case 415:
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
      return reason == "AlreadyExists" ? StatusCode::kAlreadyExists : StatusCode::kConflict;
    case 410:
      return StatusCode::kExpired;
    case 413:
    case 429:
      return StatusCode::kResourceExhausted;
    case 500:
      return StatusCode::kInternal;
    case 503:
      return StatusCode::kUnavailable;
    case 504:
      return HasCause(status, "ResourceVersionTooLarge") ? StatusCode::kExpired
                                                         : StatusCode::kDeadlineExceeded;
    default:
      return http_status < 500 ? StatusCode::kInvalidArgument : StatusCode::kUnavailable;
  }
}

Status Build(int http_status, const json& status, std::string_view fallback_body,
             std::string_view what) {
  std::string reason = StringOf(status, "reason");
  std::string message = StringOf(status, "message");
  std::string text(what);
  text += ": ";
  if (!reason.empty()) {
    text += reason + ": ";
  } else {
    text += "HTTP " + std::to_string(http_status) + ": ";
  }
  if (!message.empty()) {
    text += message;
  } else {
    constexpr size_t kMaxQuoted = 200;
    std::string body(fallback_body.substr(0, kMaxQuoted));
    while (!body.empty() && (body.back() == '\n' || body.back() == '\r')) body.pop_back();
    text += body.empty() ? std::string("(no message)") : body;
    if (fallback_body.size() > kMaxQuoted) text += "...";
  }
  return Status(CodeFor(http_status, reason, status), std::move(text));
}

}  // namespace

Status StatusFromApiResponse(int http_status, std::string_view body, std::string_view what) {
  json status = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!status.is_object() || StringOf(status, "kind") != "Status") status = json();
  return Build(http_status, status, body, what);
}

Status StatusFromWatchError(const json& status_object, std::string_view what) {
  int code = 500;
  if (status_object.is_object() && status_object.contains("code") &&
      status_object["code"].is_number_integer()) {
    code = status_object["code"].get<int>();
  }
  return Build(code, status_object, status_object.dump(), what);
}

}  // namespace strata::kube
