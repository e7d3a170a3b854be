#include "client/api_client.h"

#include <charconv>

#include "api/api_status.h"
#include "api/served_form.h"

namespace strata::client {

Result<std::unique_ptr<ApiClient>> ApiClient::Create(std::string_view server, std::string token,
                                                     net::HttpClientOptions http) {
  auto bad = [&](std::string_view why) {
    return Err(InvalidArgumentError("server \"" + std::string(server) + "\": " + std::string(why)));
  };
  constexpr std::string_view kScheme = "http://";
  if (server.substr(0, kScheme.size()) != kScheme) {
    return bad("expected http://HOST:PORT (https is not served by strata up)");
  }
  std::string_view rest = server.substr(kScheme.size());
  while (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
  if (rest.find('/') != std::string_view::npos) return bad("expected no path after HOST:PORT");
  size_t colon = rest.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return bad("expected http://HOST:PORT");
  std::string host(rest.substr(0, colon));
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  std::string_view port_text = rest.substr(colon + 1);
  int port = 0;
  auto [end, error] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (error != std::errc() || end != port_text.data() + port_text.size() || port <= 0 ||
      port > 65535) {
    return bad("the port must be a number from 1 to 65535");
  }
  return std::unique_ptr<ApiClient>(
      new ApiClient(std::string(server), std::move(host), port, std::move(token), http));
}

ApiClient::ApiClient(std::string server, std::string host, int port, std::string token,
                     net::HttpClientOptions http)
    : server_(std::move(server)),
      host_(std::move(host)),
      port_(port),
      token_(std::move(token)),
      http_(http) {}

net::HttpRequest ApiClient::Request(std::string_view method, std::string_view path) const {
  net::HttpRequest request;
  request.method = std::string(method);
  request.target = std::string(path);
  // strata's own form of the core kinds (a pod's placement), not Kubernetes' v1 Pod.
  request.headers.emplace_back("Accept", api::kStrataFormAccept);
  if (!token_.empty()) request.headers.emplace_back("Authorization", "Bearer " + token_);
  // Its product names the writer in objects' managedFields, as "kubectl" names kubectl's.
  request.headers.emplace_back("User-Agent", "strata");
  return request;
}

Result<nlohmann::json> ApiClient::Call(std::string_view method, std::string_view path,
                                       std::string body, std::string_view content_type) {
  net::HttpRequest request = Request(method, path);
  if (!content_type.empty()) request.headers.emplace_back("Content-Type", content_type);
  request.body = std::move(body);
  Result<net::HttpResponse> response = http_.Send(host_, port_, request);
  if (!response) {
    return Err(UnavailableError("cannot reach the strata server at " + server_ + ": " +
                                response.error().message()));
  }
  if (response->status >= 300)
    return Err(api::StatusFromResponse(response->status, response->body));
  nlohmann::json parsed = nlohmann::json::parse(response->body, nullptr, false);
  if (parsed.is_discarded()) {
    return Err(InternalError("the server at " + server_ + " answered " + std::string(path) +
                             " with something that is not JSON"));
  }
  return parsed;
}

Result<std::string> ApiClient::GetText(std::string_view path) {
  Result<net::HttpResponse> response = http_.Send(host_, port_, Request("GET", path));
  if (!response) {
    return Err(UnavailableError("cannot reach the strata server at " + server_ + ": " +
                                response.error().message()));
  }
  if (response->status >= 300)
    return Err(api::StatusFromResponse(response->status, response->body));
  return std::move(response->body);
}

Status ApiClient::Stream(std::string_view path,
                         const std::function<bool(std::string_view)>& on_data) {
  std::string last;  // an error response's body is its last piece
  bool stopped = false;
  Result<net::HttpResponse> response =
      http_.SendStreaming(host_, port_, Request("GET", path), [&](std::string_view data) {
        last = data;
        if (on_data(data)) return true;
        stopped = true;
        return false;
      });
  if (!response) {
    if (stopped) return Status::Ok();
    return UnavailableError("cannot reach the strata server at " + server_ + ": " +
                            response.error().message());
  }
  if (response->status >= 300) return api::StatusFromResponse(response->status, last);
  return Status::Ok();
}

Status ApiClient::Watch(std::string_view path,
                        const std::function<bool(const nlohmann::json&)>& on_event) {
  // Events are newline-terminated; an error response is one Status object without a newline,
  // left in `pending` when the response ends.
  std::string pending;
  bool stopped = false;
  net::HttpRequest request = Request("GET", path);
  Result<net::HttpResponse> response =
      http_.SendStreaming(host_, port_, request, [&](std::string_view data) {
        pending.append(data);
        size_t newline;
        while ((newline = pending.find('\n')) != std::string::npos) {
          std::string line = pending.substr(0, newline);
          pending.erase(0, newline + 1);
          if (line.empty()) continue;
          nlohmann::json event = nlohmann::json::parse(line, nullptr, false);
          if (event.is_discarded()) continue;
          if (!on_event(event)) {
            stopped = true;
            return false;
          }
        }
        return true;
      });
  if (!response) {
    if (stopped) return Status::Ok();
    return UnavailableError("cannot reach the strata server at " + server_ + ": " +
                            response.error().message());
  }
  if (response->status >= 300) {
    return api::StatusFromResponse(response->status, pending);
  }
  return Status::Ok();
}

}  // namespace strata::client
