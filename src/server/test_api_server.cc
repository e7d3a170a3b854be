#include "server/test_api_server.h"

#include <gtest/gtest.h>

namespace strata::server::testing {

TestApiServer::TestApiServer(RestApiOptions options) {
  store_ = store::NewMemoryStore(store::StoreOptions{});
  if (options.tokens.empty()) options.tokens.push_back({kAdminToken, "admin", {}});
  api_ = std::make_unique<RestApi>(*store_, registry_, std::move(options));
  ApiListenerOptions listener_options;
  listener_options.max_body_bytes = 64 * 1024;
  listener_ = std::make_unique<ApiListener>(
      listener_options, [this](const net::HttpRequest& r) { return api_->Handle(r); });
  Status started = listener_->Start();
  EXPECT_TRUE(started.ok()) << started.ToString();
}

TestApiServer::~TestApiServer() { listener_->Stop(); }

std::string TestApiServer::url() const {
  return "http://127.0.0.1:" + std::to_string(listener_->port());
}

std::unique_ptr<client::ApiClient> TestApiServer::Client(const std::string& token) const {
  auto client = client::ApiClient::Create(url(), token);
  EXPECT_TRUE(client.has_value());
  return std::move(*client);
}

}  // namespace strata::server::testing
