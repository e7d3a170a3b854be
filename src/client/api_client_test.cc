#include "client/api_client.h"

#include <gtest/gtest.h>

namespace strata::client {
namespace {

TEST(ApiClientTest, AcceptsHttpUrlsWithAPort) {
  auto client = ApiClient::Create("http://127.0.0.1:7070/", "");
  ASSERT_TRUE(client);
  EXPECT_EQ((*client)->server(), "http://127.0.0.1:7070/");
  EXPECT_TRUE(ApiClient::Create("http://[::1]:80", ""));
}

TEST(ApiClientTest, RejectsMalformedUrlsNamingThem) {
  for (const char* url : {"127.0.0.1:7070", "https://x:1", "http://x", "http://x:port",
                          "http://x:70000", "http://x:1/api"}) {
    auto client = ApiClient::Create(url, "");
    ASSERT_FALSE(client) << url;
    EXPECT_NE(client.error().message().find(url), std::string::npos) << url;
  }
}

TEST(ApiClientTest, AnUnreachableServerIsUnavailable) {
  // Port 1 on loopback: nothing listens there in a test environment.
  auto client = ApiClient::Create("http://127.0.0.1:1", "");
  ASSERT_TRUE(client);
  auto result = (*client)->Get("/api");
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code(), StatusCode::kUnavailable);
  EXPECT_NE(result.error().message().find("http://127.0.0.1:1"), std::string::npos);
}

}  // namespace
}  // namespace strata::client
