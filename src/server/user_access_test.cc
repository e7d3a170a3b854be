#include "server/user_access.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "node/test_support.h"
#include "server/access_tokens.h"
#include "server/test_api_server.h"

namespace strata::server {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;

constexpr char kYaml[] = "application/yaml";

std::string Jobs(const std::string& namespace_name) {
  return "/apis/strata.dev/v1alpha1/namespaces/" + namespace_name + "/jobs";
}

std::string JobManifest(const std::string& name, const std::string& namespace_name) {
  return "apiVersion: strata.dev/v1alpha1\nkind: Job\nmetadata: {name: " + name +
         ", namespace: " + namespace_name +
         "}\nspec:\n  replicas: 1\n  resources: {gpu: 1}\n  template: {command: [sleep, '1']}\n";
}

void WriteFile(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

TEST(AccessTokenFileTest, ReadsAdminsAndScopedUsersAndNamesTheLineOfAnError) {
  node::testing::TempDir dir;
  WriteFile(dir.File("tokens"),
            "# the platform team\nroot-secret\n\nb-secret user=team-b namespaces=team-b,dev\n");
  Result<std::vector<AccessToken>> tokens = ReadAccessTokenFile(dir.File("tokens"), "--token-file");
  ASSERT_TRUE(tokens) << tokens.error().ToString();
  ASSERT_EQ(tokens->size(), 2u);
  EXPECT_EQ((*tokens)[0].token, "root-secret");
  EXPECT_EQ((*tokens)[0].user, "token 2");
  EXPECT_TRUE((*tokens)[0].admin());
  EXPECT_EQ((*tokens)[1].user, "team-b");
  EXPECT_EQ((*tokens)[1].namespaces, (std::vector<std::string>{"team-b", "dev"}));

  const std::vector<std::pair<std::string, std::string>> bad = {
      {"a\nb role=admin\n", "line 2: unknown setting \"role=admin\""},
      {"a namespaces=Team_B\n", "line 1: \"Team_B\" is not a valid name"},
      {"a\na user=x\n", "line 2: repeats the token of an earlier line"},
      {"# nothing\n", "holds no token"},
  };
  for (const auto& [text, message] : bad) {
    WriteFile(dir.File("bad"), text);
    Result<std::vector<AccessToken>> read = ReadAccessTokenFile(dir.File("bad"), "--token-file");
    ASSERT_FALSE(read) << text;
    EXPECT_EQ(read.error().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(read.error().message(), HasSubstr("--token-file \"" + dir.File("bad") + "\""));
    EXPECT_THAT(read.error().message(), HasSubstr(message));
  }
}

TEST(AccessTokenFileTest, TheAdminCredentialIsMadeOnceAndReadableByItsOwnerOnly) {
  node::testing::TempDir dir;
  std::ostringstream out;
  Result<AccessToken> made = ReadOrCreateAdminToken(dir.File("admin-token"), out);
  ASSERT_TRUE(made) << made.error().ToString();
  EXPECT_TRUE(made->admin());
  EXPECT_EQ(made->token.size(), 64u);
  EXPECT_THAT(out.str(), HasSubstr("wrote a new admin credential"));
  struct stat info {};
  ASSERT_EQ(stat(dir.File("admin-token").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600);

  std::ostringstream again;
  Result<AccessToken> read = ReadOrCreateAdminToken(dir.File("admin-token"), again);
  ASSERT_TRUE(read);
  EXPECT_EQ(read->token, made->token);
  EXPECT_EQ(again.str(), "");
}

// A server with an admin and a user scoped to team-b, as strata up --token-file makes it.
class UserAccessTest : public ::testing::Test {
 protected:
  static RestApiOptions Options() {
    RestApiOptions options;
    options.tokens = {{"admin-secret", "admin", {}}, {"b-secret", "team-b", {"team-b"}}};
    options.credential_hint = "the admin credential is in /srv/strata/admin-token";
    return options;
  }

  void SetUp() override {
    ASSERT_TRUE(admin_->Call("POST", Jobs("team-a"), JobManifest("a-train", "team-a"), kYaml));
  }

  testing::TestApiServer server_{Options()};
  std::unique_ptr<client::ApiClient> admin_ = server_.Client("admin-secret");
  std::unique_ptr<client::ApiClient> team_b_ = server_.Client("b-secret");
  std::unique_ptr<client::ApiClient> anonymous_ = server_.Client("");
};

TEST_F(UserAccessTest, WithoutATokenOnlyDiscoveryIsServed) {
  for (const char* path : {"/api", "/apis", "/version", "/apis/strata.dev/v1alpha1", "/openapi/v3"})
    EXPECT_TRUE(anonymous_->Get(path)) << path;
  for (const std::string& path :
       {Jobs("team-a"), std::string("/api/v1/nodes"), std::string("/apis/strata.dev/v1alpha1/jobs"),
        std::string("/api/v1/namespaces/team-a/pods/p/log")}) {
    auto read = anonymous_->Get(path);
    ASSERT_FALSE(read) << path;
    EXPECT_EQ(read.error().code(), StatusCode::kUnauthenticated) << path;
    EXPECT_THAT(read.error().message(),
                HasSubstr("the admin credential is in /srv/strata/admin-token"));
  }
  auto created = anonymous_->Call("POST", Jobs("team-a"), JobManifest("x", "team-a"), kYaml);
  ASSERT_FALSE(created);
  EXPECT_EQ(created.error().code(), StatusCode::kUnauthenticated);
  auto deleted = anonymous_->Call("DELETE", Jobs("team-a") + "/a-train");
  ASSERT_FALSE(deleted);
  EXPECT_EQ(deleted.error().code(), StatusCode::kUnauthenticated);
  auto applied = anonymous_->Call("POST", api::kApplyPath, JobManifest("x", "team-a"), kYaml);
  ASSERT_FALSE(applied);
  EXPECT_EQ(applied.error().code(), StatusCode::kUnauthenticated);
  EXPECT_TRUE(admin_->Get(Jobs("team-a") + "/a-train"));  // still there
}

TEST_F(UserAccessTest, AScopedTokenReachesItsNamespacesOnly) {
  // Its own namespace: create, read, list, watch-less list, delete.
  ASSERT_TRUE(team_b_->Call("POST", Jobs("team-b"), JobManifest("b-train", "team-b"), kYaml));
  Result<Json> mine = team_b_->Get(Jobs("team-b"));
  ASSERT_TRUE(mine);
  EXPECT_EQ((*mine)["items"].size(), 1u);
  EXPECT_TRUE(team_b_->Get("/api/v1/namespaces/team-b/pods"));

  // Another team's namespace, or every namespace: refused, saying why.
  for (const std::string& path :
       {Jobs("team-a"), Jobs("team-a") + "/a-train", std::string("/apis/strata.dev/v1alpha1/jobs"),
        std::string("/api/v1/pods"), std::string("/api/v1/namespaces/team-a/pods/p/log")}) {
    auto read = team_b_->Get(path);
    ASSERT_FALSE(read) << path;
    EXPECT_EQ(read.error().code(), StatusCode::kPermissionDenied) << path;
    EXPECT_THAT(read.error().message(),
                HasSubstr("the token of user \"team-b\" is scoped to namespace team-b"));
  }
  auto listed = team_b_->Get("/apis/strata.dev/v1alpha1/jobs");
  EXPECT_THAT(listed.error().message(), HasSubstr("jobs in every namespace"));
  auto deleted = team_b_->Call("DELETE", Jobs("team-a") + "/a-train");
  ASSERT_FALSE(deleted);
  EXPECT_THAT(deleted.error().message(), HasSubstr("jobs in namespace team-a is outside it"));
  EXPECT_TRUE(admin_->Get(Jobs("team-a") + "/a-train"));

  // Cluster-scoped: nodes and queues are readable (why a job waits), tenants are not (they hold
  // API keys), and nothing cluster-scoped is writable; /metrics spans every namespace.
  EXPECT_TRUE(team_b_->Get("/api/v1/nodes"));
  EXPECT_TRUE(team_b_->Get("/apis/strata.dev/v1alpha1/queues"));
  auto tenants = team_b_->Get("/apis/strata.dev/v1alpha1/tenants");
  ASSERT_FALSE(tenants);
  EXPECT_EQ(tenants.error().code(), StatusCode::kPermissionDenied);
  auto queue =
      team_b_->Call("POST", "/apis/strata.dev/v1alpha1/queues",
                    "apiVersion: strata.dev/v1alpha1\nkind: Queue\nmetadata: {name: q}\n", kYaml);
  ASSERT_FALSE(queue);
  EXPECT_EQ(queue.error().code(), StatusCode::kPermissionDenied);
  auto metrics = team_b_->Call("GET", "/metrics");
  ASSERT_FALSE(metrics);
  EXPECT_EQ(metrics.error().code(), StatusCode::kPermissionDenied);
}

TEST_F(UserAccessTest, AnApplyReachingOutsideTheScopeWritesNothing) {
  const std::string body =
      JobManifest("b-first", "team-b") + "---\n" + JobManifest("a-second", "team-a");
  auto applied = team_b_->Call("POST", api::kApplyPath, body, kYaml);
  ASSERT_FALSE(applied);
  EXPECT_EQ(applied.error().code(), StatusCode::kPermissionDenied);
  EXPECT_THAT(applied.error().message(), HasSubstr("document 2 (Job \"team-a/a-second\")"));
  EXPECT_THAT(applied.error().message(), HasSubstr("no document was applied"));
  EXPECT_FALSE(admin_->Get(Jobs("team-b") + "/b-first"));
  EXPECT_FALSE(admin_->Get(Jobs("team-a") + "/a-second"));

  // Within the scope the same endpoint applies.
  auto mine = team_b_->Call("POST", api::kApplyPath, JobManifest("b-first", "team-b"), kYaml);
  ASSERT_TRUE(mine) << mine.error().ToString();
  EXPECT_TRUE(admin_->Get(Jobs("team-b") + "/b-first"));
}

TEST_F(UserAccessTest, AWrongTokenIsRefusedEvenForDiscovery) {
  auto wrong = server_.Client("guess")->Get("/api");
  ASSERT_FALSE(wrong);
  EXPECT_EQ(wrong.error().code(), StatusCode::kUnauthenticated);
}

}  // namespace
}  // namespace strata::server
