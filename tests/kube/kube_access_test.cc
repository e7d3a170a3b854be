// Who the kube client is and how it reaches the server, against a real kube-apiserver: RBAC
// refusals for an impersonated user and for a ServiceAccount token, a token the server does
// not know, TLS verification that fails closed, an unreachable server, and the client-side rate
// limit.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "kube_test_cluster.h"

namespace strata::kube::testing {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

ClientOptions Unlimited() {
  ClientOptions options;
  options.qps = 0;
  return options;
}

TEST(KubeAccessTest, AnImpersonatedUserWithoutRolesIsRefused) {
  KubeConfig config = AdminConfig();
  config.impersonate_user = "alice";
  std::unique_ptr<Client> alice = NewClient(config, Unlimited());
  Result<ObjectList> pods = alice->List(resources::kPods, "default");
  ASSERT_FALSE(pods);
  EXPECT_EQ(pods.error().code(), StatusCode::kPermissionDenied);
  EXPECT_THAT(pods.error().message(),
              HasSubstr("User \"alice\" cannot list resource \"pods\" in API group \"\" in the "
                        "namespace \"default\""));

  config.impersonate_groups = {"system:masters"};  // the admin may impersonate a group too
  std::unique_ptr<Client> alice_as_admin = NewClient(config, Unlimited());
  Result<ObjectList> allowed = alice_as_admin->List(resources::kPods, "default");
  EXPECT_TRUE(allowed) << allowed.error().ToString();
}

TEST(KubeAccessTest, AServiceAccountTokenIsAuthenticatedAndLimitedByRbac) {
  std::unique_ptr<Client> admin = AdminClient();
  std::string ns = NewNamespace(*admin, "rbac");
  ASSERT_TRUE(admin->Create(
      resources::kServiceAccounts, ns,
      {{"apiVersion", "v1"}, {"kind", "ServiceAccount"}, {"metadata", {{"name", "scheduler"}}}}));
  Result<json> token_request =
      admin->CreateSubresource(resources::kServiceAccounts, ns, "scheduler", "token",
                               {{"apiVersion", "authentication.k8s.io/v1"},
                                {"kind", "TokenRequest"},
                                {"spec", {{"expirationSeconds", 600}}}});
  ASSERT_TRUE(token_request) << token_request.error().ToString();
  std::string token = (*token_request)["status"]["token"];
  ASSERT_FALSE(token.empty());

  KubeConfig config = AdminConfig();
  config.client_certificate_pem.clear();
  config.client_key_pem.clear();
  config.bearer_token = token;
  std::unique_ptr<Client> service_account = NewClient(config, Unlimited());
  Result<ObjectList> nodes = service_account->List(resources::kNodes, "");
  ASSERT_FALSE(nodes);
  EXPECT_EQ(nodes.error().code(), StatusCode::kPermissionDenied);
  EXPECT_THAT(nodes.error().message(), HasSubstr("system:serviceaccount:" + ns +
                                                 ":scheduler\" cannot list resource "
                                                 "\"nodes\""));

  // Granted a role, the same token may list pods in its namespace and still not elsewhere.
  ASSERT_TRUE(admin->Create(
      GroupVersionResource{"rbac.authorization.k8s.io", "v1", "roles"}, ns,
      {{"apiVersion", "rbac.authorization.k8s.io/v1"},
       {"kind", "Role"},
       {"metadata", {{"name", "pod-reader"}}},
       {"rules", {{{"apiGroups", {""}}, {"resources", {"pods"}}, {"verbs", {"list"}}}}}}));
  ASSERT_TRUE(admin->Create(
      GroupVersionResource{"rbac.authorization.k8s.io", "v1", "rolebindings"}, ns,
      {{"apiVersion", "rbac.authorization.k8s.io/v1"},
       {"kind", "RoleBinding"},
       {"metadata", {{"name", "scheduler-reads-pods"}}},
       {"roleRef",
        {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "Role"}, {"name", "pod-reader"}}},
       {"subjects", {{{"kind", "ServiceAccount"}, {"name", "scheduler"}, {"namespace", ns}}}}}));
  bool allowed =
      WaitFor(10, [&] { return service_account->List(resources::kPods, ns).has_value(); });
  EXPECT_TRUE(allowed);
  Result<ObjectList> elsewhere = service_account->List(resources::kPods, "kube-system");
  ASSERT_FALSE(elsewhere);
  EXPECT_EQ(elsewhere.error().code(), StatusCode::kPermissionDenied);
}

// Asks for a token of `account` in `ns` (the account is created first).
std::string ServiceAccountToken(Client& admin, const std::string& ns, const std::string& account) {
  Result<json> created = admin.Create(
      resources::kServiceAccounts, ns,
      {{"apiVersion", "v1"}, {"kind", "ServiceAccount"}, {"metadata", {{"name", account}}}});
  EXPECT_TRUE(created) << created.error().ToString();
  Result<json> token_request =
      admin.CreateSubresource(resources::kServiceAccounts, ns, account, "token",
                              {{"apiVersion", "authentication.k8s.io/v1"},
                               {"kind", "TokenRequest"},
                               {"spec", {{"expirationSeconds", 600}}}});
  EXPECT_TRUE(token_request) << token_request.error().ToString();
  return token_request ? (*token_request)["status"]["token"].get<std::string>() : "";
}

TEST(KubeAccessTest, ARotatedTokenFileIsReadAgainAfterA401) {
  std::unique_ptr<Client> admin = AdminClient();
  std::string ns = NewNamespace(*admin, "rotation");
  std::string file = ClusterDir() + "/token-" + ns;
  std::ofstream(file) << ServiceAccountToken(*admin, ns, "agent") << "\n";

  KubeConfig config = AdminConfig();
  config.client_certificate_pem.clear();
  config.client_key_pem.clear();
  config.bearer_token = ReadFile(file);
  config.bearer_token.pop_back();  // the newline, as LoadKubeConfig trims it
  config.bearer_token_file = file;
  std::unique_ptr<Client> agent = NewClient(config, Unlimited());
  // Authenticated (RBAC then refuses the list): the token works.
  Result<ObjectList> nodes = agent->List(resources::kNodes, "");
  ASSERT_FALSE(nodes);
  EXPECT_EQ(nodes.error().code(), StatusCode::kPermissionDenied);

  // The account is replaced, which voids its old token; the new one lands in the file, as a
  // kubelet rotates a projected token. The next request gets 401, re-reads, and goes through.
  ASSERT_TRUE(admin->Delete(resources::kServiceAccounts, ns, "agent"));
  // (The API server caches a token's authentication for 10 s.)
  ASSERT_TRUE(WaitFor(30, [&] {
    Result<ObjectList> refused = agent->List(resources::kNodes, "");
    return !refused && refused.error().code() == StatusCode::kUnauthenticated;
  }));
  uint64_t rereads = agent->stats().token_rereads;
  std::ofstream(file) << ServiceAccountToken(*admin, ns, "agent") << "\n";
  nodes = agent->List(resources::kNodes, "");
  ASSERT_FALSE(nodes);
  EXPECT_EQ(nodes.error().code(), StatusCode::kPermissionDenied) << nodes.error().ToString();
  EXPECT_EQ(agent->stats().token_rereads, rereads + 1);
  std::filesystem::remove(file);
}

TEST(KubeAccessTest, OneClientServesManyThreads) {
  std::unique_ptr<Client> client = AdminClient();
  constexpr int kThreads = 8, kRequests = 25;
  std::atomic<int> succeeded{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kRequests; ++i) {
        Result<ObjectList> nodes = client->List(resources::kNodes, "");
        if (nodes && nodes->items.size() == 3) ++succeeded;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(succeeded.load(), kThreads * kRequests);
  // Connections are reused: at most one per thread was ever open at once.
  EXPECT_LE(client->stats().connections_opened, static_cast<uint64_t>(kThreads));
}

TEST(KubeAccessTest, AnUnknownTokenIsUnauthenticated) {
  KubeConfig config = AdminConfig();
  config.client_certificate_pem.clear();
  config.client_key_pem.clear();
  config.bearer_token = "not-a-token";
  std::unique_ptr<Client> stranger = NewClient(config, Unlimited());
  Result<ObjectList> pods = stranger->List(resources::kPods, "default");
  ASSERT_FALSE(pods);
  EXPECT_EQ(pods.error().code(), StatusCode::kUnauthenticated);
}

TEST(KubeAccessTest, TheServersCertificateMustVerify) {
  // A CA that did not sign the server's certificate (the cluster's front-proxy CA).
  KubeConfig wrong_ca = AdminConfig();
  wrong_ca.ca_pem = ReadFile(ClusterDir() + "/pki/front-proxy-ca.crt");
  ASSERT_FALSE(wrong_ca.ca_pem.empty());
  std::unique_ptr<Client> client = NewClient(wrong_ca, Unlimited());
  Result<json> version = client->GetPath("/version");
  ASSERT_FALSE(version);
  EXPECT_EQ(version.error().code(), StatusCode::kUnavailable);
  EXPECT_THAT(version.error().message(), HasSubstr("TLS handshake with API server 127.0.0.1:"));
  EXPECT_THAT(version.error().message(), HasSubstr("certificate verify failed"));

  // The right CA, but a name the certificate does not carry.
  KubeConfig wrong_name = AdminConfig();
  wrong_name.tls_server_name = "api.example.com";
  client = NewClient(wrong_name, Unlimited());
  version = client->GetPath("/version");
  ASSERT_FALSE(version);
  EXPECT_EQ(version.error().code(), StatusCode::kUnavailable);
  EXPECT_THAT(version.error().message(), HasSubstr("hostname mismatch"));

  // A name it does carry.
  KubeConfig right_name = AdminConfig();
  right_name.tls_server_name = "kubernetes.default.svc";
  client = NewClient(right_name, Unlimited());
  version = client->GetPath("/version");
  EXPECT_TRUE(version) << version.error().ToString();
}

TEST(KubeAccessTest, AnUnreachableServerIsUnavailableAndNamed) {
  KubeConfig config = AdminConfig();
  config.server = "https://127.0.0.1:1";
  std::unique_ptr<Client> client = NewClient(config, Unlimited());
  Result<json> version = client->GetPath("/version");
  ASSERT_FALSE(version);
  EXPECT_EQ(version.error().code(), StatusCode::kUnavailable);
  EXPECT_THAT(version.error().message(),
              HasSubstr("GET https://127.0.0.1:1/version: cannot connect to API server "
                        "127.0.0.1:1"));
}

TEST(KubeAccessTest, KeptAliveConnectionsAreReused) {
  std::unique_ptr<Client> client = AdminClient();
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(client->GetPath("/version"));
  EXPECT_EQ(client->stats().requests, 5u);
  EXPECT_EQ(client->stats().connections_opened, 1u);
}

TEST(KubeAccessTest, TheRateLimitBoundsRequestsPerSecond) {
  ClientOptions options;
  options.qps = 10;
  options.burst = 2;
  std::unique_ptr<Client> client = NewClient(AdminConfig(), options);
  auto started = std::chrono::steady_clock::now();
  constexpr int kRequests = 22;
  for (int i = 0; i < kRequests; ++i) ASSERT_TRUE(client->GetPath("/version"));
  double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  // A lower bound only: the limiter lets the burst through, then one request per 100 ms, so 22
  // requests cannot finish in less than 2 s however fast the server is.
  EXPECT_GE(elapsed, (kRequests - options.burst) / options.qps - 0.01);
  EXPECT_GE(client->stats().throttled, static_cast<uint64_t>(kRequests - options.burst - 1));
}

}  // namespace
}  // namespace strata::kube::testing
