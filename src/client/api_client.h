#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "common/status.h"
#include "net/http_client.h"

namespace strata::client {

// Where a client finds the control plane: "http://127.0.0.1:7070".
inline constexpr char kDefaultServer[] = "http://127.0.0.1:7070";

// A client of the REST API for the CLI and tests: JSON in, JSON out, error responses turned
// back into the Status the server meant (api::StatusFromResponse). Owned by its user; not
// thread-safe (one per thread), like the HttpClient under it.
class ApiClient {
 public:
  // `server` is http://HOST:PORT (a trailing slash is accepted); `token`, when not empty, is
  // sent as a bearer token; `http` tunes the connection (a long idle_timeout for a log that is
  // followed). Returns InvalidArgument naming the URL when it is malformed.
  static Result<std::unique_ptr<ApiClient>> Create(std::string_view server, std::string token,
                                                   net::HttpClientOptions http = {});

  // Sends `method` to `path` (with its query) and returns the response's JSON. Errors: the
  // server's Status; Unavailable (naming the server) when it cannot be reached; Internal when
  // the response is not JSON.
  Result<nlohmann::json> Call(std::string_view method, std::string_view path, std::string body = "",
                              std::string_view content_type = "");

  Result<nlohmann::json> Get(std::string_view path) { return Call("GET", path); }

  // Streams a watch: calls `on_event` with each line's JSON until it returns false or the
  // server ends the stream. Errors as Call's (a 410 before the stream starts is Expired).
  Status Watch(std::string_view path, const std::function<bool(const nlohmann::json&)>& on_event);

  // Sends GET `path` and returns the body as text (a pod's log). Errors as Call's.
  Result<std::string> GetText(std::string_view path);

  // Sends GET `path` and hands the body to `on_data` as it arrives, until `on_data` returns
  // false or the server ends the response (a followed log). An error response's body is handed
  // over too, then returned as the server's Status: check the request with GetText first where
  // that matters. Unavailable when the server cannot be reached.
  Status Stream(std::string_view path, const std::function<bool(std::string_view)>& on_data);

  const std::string& server() const { return server_; }

 private:
  ApiClient(std::string server, std::string host, int port, std::string token,
            net::HttpClientOptions http);
  net::HttpRequest Request(std::string_view method, std::string_view path) const;

  std::string server_;
  std::string host_;
  int port_;
  std::string token_;
  net::HttpClient http_;
};

}  // namespace strata::client
