#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

// HTTP/1.1 messages as plain data, free of Boost, for the server's handlers and the client's
// callers.

namespace strata::net {

using HttpHeaders = std::vector<std::pair<std::string, std::string>>;

// The value of header `name` (case-insensitive) in `headers`, or "" when absent.
std::string_view FindHeader(const HttpHeaders& headers, std::string_view name);

struct HttpRequest {
  std::string method = "GET";  // "GET", "POST", ...
  std::string target = "/";    // path and query as sent: "/metrics?x=1"
  HttpHeaders headers;
  std::string body;

  // The target without its query.
  std::string_view Path() const;
  std::string_view Header(std::string_view name) const { return FindHeader(headers, name); }
};

struct HttpResponse {
  int status = 200;
  HttpHeaders headers;
  std::string body;

  std::string_view Header(std::string_view name) const { return FindHeader(headers, name); }
  // A response with `status`, a Content-Type header and `body`.
  static HttpResponse Text(int status, std::string content_type, std::string body);
};

}  // namespace strata::net
