#include "net/http_message.h"

#include <strings.h>

namespace strata::net {

std::string_view FindHeader(const HttpHeaders& headers, std::string_view name) {
  for (const auto& [key, value] : headers) {
    if (key.size() == name.size() && strncasecmp(key.data(), name.data(), name.size()) == 0) {
      return value;
    }
  }
  return {};
}

std::string_view HttpRequest::Path() const {
  std::string_view path = target;
  size_t query = path.find('?');
  return query == std::string_view::npos ? path : path.substr(0, query);
}

HttpResponse HttpResponse::Text(int status, std::string content_type, std::string body) {
  HttpResponse response;
  response.status = status;
  response.headers.emplace_back("Content-Type", std::move(content_type));
  response.body = std::move(body);
  return response;
}

}  // namespace strata::net
