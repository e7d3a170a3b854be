#pragma once

#include <memory>
#include <string>

#include "client/api_client.h"
#include "metrics/metrics.h"
#include "server/api_listener.h"
#include "server/rest_api.h"
#include "store/store.h"

namespace strata::server::testing {

// For tests: a RestApi over a memory store behind a real listener on an ephemeral loopback
// port. Owned by the test; not thread-safe (the store and the API are).
class TestApiServer {
 public:
  // The admin token the server accepts when `options` gives no tokens.
  static constexpr char kAdminToken[] = "test-admin-token";

  // Starts serving; the listener's failure fails the calling test.
  explicit TestApiServer(RestApiOptions options = {});
  ~TestApiServer();

  // "http://127.0.0.1:PORT".
  std::string url() const;
  store::Store& store() { return *store_; }
  metrics::Registry& registry() { return registry_; }
  // A client sending `token` as its bearer token (none when empty): by default the admin's.
  std::unique_ptr<client::ApiClient> Client(const std::string& token = kAdminToken) const;

 private:
  metrics::Registry registry_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<RestApi> api_;
  std::unique_ptr<ApiListener> listener_;
};

}  // namespace strata::server::testing
