#include "kube/kubeconfig.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

namespace strata::kube {
namespace {

using ::testing::HasSubstr;

// "-----BEGIN CERTIFICATE-----\nCA\n" and friends, base64-encoded as a kubeconfig holds them.
constexpr char kCaData[] = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCkNBCg==";
constexpr char kCertData[] = "Q0VSVA==";  // "CERT"
constexpr char kKeyData[] = "S0VZ";       // "KEY"

std::string AdminConfig(std::string_view extra_user_fields = "") {
  return std::string(R"(apiVersion: v1
kind: Config
clusters:
- name: strata-kube
  cluster:
    server: https://127.0.0.1:6443
    certificate-authority-data: )") +
         kCaData + R"(
users:
- name: admin
  user:
    client-certificate-data: )" +
         kCertData + R"(
    client-key-data: )" +
         kKeyData + "\n" + std::string(extra_user_fields) + R"(
contexts:
- name: strata-kube
  context:
    cluster: strata-kube
    user: admin
current-context: strata-kube
)";
}

class TempDir {
 public:
  TempDir() {
    path_ = std::filesystem::temp_directory_path() /
            ("kubeconfig_test." + std::to_string(::getpid()) + "." + std::to_string(counter_++));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string Write(const std::string& name, const std::string& text) const {
    std::filesystem::path file = path_ / name;
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file) << text;
    return file.string();
  }
  std::string path() const { return path_.string(); }

 private:
  static inline int counter_ = 0;
  std::filesystem::path path_;
};

KubeConfigOptions Explicit(std::string path) {
  KubeConfigOptions options;
  options.explicit_path = std::move(path);
  return options;
}

KubeConfigEnvironment FakeEnvironment(std::map<std::string, std::string> variables,
                                      std::string service_account_dir = "/nonexistent") {
  KubeConfigEnvironment environment;
  environment.getenv = [variables](const char* name) -> std::optional<std::string> {
    auto it = variables.find(name);
    if (it == variables.end()) return std::nullopt;
    return it->second;
  };
  environment.service_account_dir = std::move(service_account_dir);
  return environment;
}

TEST(KubeConfigTest, ReadsTheEmbeddedCredentialsOfTheCurrentContext) {
  Result<KubeConfig> config = ParseKubeConfig({{"/k/config", AdminConfig()}});
  ASSERT_TRUE(config) << config.error().ToString();
  EXPECT_EQ(config->server, "https://127.0.0.1:6443");
  EXPECT_EQ(config->ca_pem, "-----BEGIN CERTIFICATE-----\nCA\n");
  EXPECT_EQ(config->client_certificate_pem, "CERT");
  EXPECT_EQ(config->client_key_pem, "KEY");
  EXPECT_EQ(config->namespace_name, "default");
  EXPECT_EQ(config->source, "kubeconfig /k/config, context strata-kube");
}

TEST(KubeConfigTest, ReadsFilesRelativeToTheKubeconfigAndAToken) {
  TempDir dir;
  dir.Write("pki/ca.crt", "CA PEM");
  dir.Write("token", "secret-token\n");
  std::string file = dir.Write("config", R"(
clusters:
- name: c
  cluster: {server: "https://kube.example:8443/prefix", certificate-authority: pki/ca.crt,
            tls-server-name: api.internal}
users:
- name: u
  user: {tokenFile: token, as: alice, as-groups: [team-a, team-b]}
contexts:
- name: ctx
  context: {cluster: c, user: u, namespace: team-a}
current-context: ctx
)");
  Result<KubeConfig> config = LoadKubeConfig(Explicit(file), FakeEnvironment({}));
  ASSERT_TRUE(config) << config.error().ToString();
  EXPECT_EQ(config->server, "https://kube.example:8443/prefix");
  EXPECT_EQ(config->tls_server_name, "api.internal");
  EXPECT_EQ(config->ca_pem, "CA PEM");
  EXPECT_EQ(config->bearer_token, "secret-token");
  EXPECT_EQ(config->bearer_token_file, dir.path() + "/token");
  EXPECT_EQ(config->impersonate_user, "alice");
  EXPECT_THAT(config->impersonate_groups, ::testing::ElementsAre("team-a", "team-b"));
  EXPECT_EQ(config->namespace_name, "team-a");
}

TEST(KubeConfigTest, AContextCanBeChosen) {
  std::string text = AdminConfig() + R"(
)";
  // A second context in a second file, selected by name.
  std::string other = R"(
clusters:
- name: other
  cluster: {server: "https://10.0.0.1"}
contexts:
- name: other
  context: {cluster: other, namespace: ops}
)";
  Result<KubeConfig> config = ParseKubeConfig({{"/a", text}, {"/b", other}}, "other");
  ASSERT_TRUE(config) << config.error().ToString();
  EXPECT_EQ(config->server, "https://10.0.0.1");
  EXPECT_EQ(config->namespace_name, "ops");
  EXPECT_TRUE(config->client_certificate_pem.empty());  // a context without a user
}

TEST(KubeConfigTest, MergedFilesTheFirstToDefineANameWins) {
  std::string first = R"(
clusters:
- name: strata-kube
  cluster: {server: "https://first:1"}
current-context: strata-kube
)";
  Result<KubeConfig> config = ParseKubeConfig({{"/first", first}, {"/second", AdminConfig()}});
  ASSERT_TRUE(config) << config.error().ToString();
  EXPECT_EQ(config->server, "https://first:1");
  EXPECT_EQ(config->client_key_pem, "KEY");  // the user only the second file defines
}

TEST(KubeConfigTest, ErrorsNameTheFileAndTheField) {
  struct Case {
    std::string text;
    std::string expected;
  };
  std::vector<Case> cases = {
      {"current-context: nope\ncontexts: []\n",
       "kubeconfig /k/config: context \"nope\" not found (contexts: none)"},
      {"contexts: []\n", "kubeconfig /k/config: current-context is not set"},
      {AdminConfig("    exec: {command: aws}\n"),
       "kubeconfig /k/config: users[\"admin\"].user.exec: exec credential plugins are not "
       "supported"},
      {AdminConfig("    client-certificate: /x.crt\n"),
       "users[\"admin\"].user: both client-certificate-data and client-certificate are set"},
      {AdminConfig("    username: bob\n"), "basic authentication is not supported"},
      {"clusters: {a: b}\n", "kubeconfig /k/config: clusters: must be a list"},
      {"clusters:\n- cluster: {}\n", "clusters[0].name: required"},
      {"clusters:\n- {name: c, cluster: [1]}\n",
       "kubeconfig /k/config: clusters[0].cluster: must be a mapping"},
      {AdminConfig("    as-groups: [dev, 3]\n"),
       "kubeconfig /k/config: users[\"admin\"].user.as-groups[1]: must be a string"},
      {"current-context: [a]\n", "kubeconfig /k/config: current-context: must be a string"},
      {"users: [\n", "kubeconfig /k/config: line"},
  };
  for (const Case& c : cases) {
    Result<KubeConfig> config = ParseKubeConfig({{"/k/config", c.text}});
    ASSERT_FALSE(config) << c.text;
    EXPECT_EQ(config.error().code(), StatusCode::kInvalidArgument) << c.text;
    EXPECT_THAT(config.error().message(), HasSubstr(c.expected)) << c.text;
  }
}

TEST(KubeConfigTest, RefusesToSkipServerVerificationOrToSpeakPlainHttp) {
  std::string insecure = AdminConfig();
  insecure.replace(insecure.find("    certificate-authority-data"), 0,
                   "    insecure-skip-tls-verify: true\n");
  Result<KubeConfig> config = ParseKubeConfig({{"/k/config", insecure}});
  ASSERT_FALSE(config);
  EXPECT_THAT(config.error().message(),
              HasSubstr("clusters[\"strata-kube\"].cluster.insecure-skip-tls-verify: strata "
                        "always verifies"));

  std::string plain = AdminConfig();
  plain.replace(plain.find("https://"), 8, "http://");
  config = ParseKubeConfig({{"/k/config", plain}});
  ASSERT_FALSE(config);
  EXPECT_THAT(config.error().message(),
              HasSubstr("clusters[\"strata-kube\"].cluster.server: \"http://127.0.0.1:6443\" is "
                        "not an https:// URL"));
}

TEST(KubeConfigTest, BadCredentialsNameTheirField) {
  std::string text = AdminConfig();
  text.replace(text.find(kKeyData), 4, "a$b%");
  Result<KubeConfig> config = ParseKubeConfig({{"/k/config", text}});
  ASSERT_FALSE(config);
  EXPECT_THAT(config.error().message(),
              HasSubstr("kubeconfig /k/config: users[\"admin\"].user.client-key-data: not valid "
                        "base64"));

  TempDir dir;
  std::string file = dir.Write("config", R"(
clusters:
- name: c
  cluster: {server: "https://h", certificate-authority: missing.crt}
contexts:
- name: c
  context: {cluster: c}
current-context: c
)");
  config = LoadKubeConfig(Explicit(file), FakeEnvironment({}));
  ASSERT_FALSE(config);
  EXPECT_EQ(config.error().code(), StatusCode::kNotFound);
  EXPECT_THAT(config.error().message(),
              HasSubstr("clusters[\"c\"].cluster.certificate-authority: cannot read " + dir.path() +
                        "/missing.crt"));
}

TEST(KubeConfigTest, LoadingRulesExplicitThenKubeconfigVariableThenHome) {
  TempDir dir;
  std::string home_config = dir.Write("home/.kube/config", AdminConfig());
  std::string other = dir.Write("other", R"(
clusters: [{name: o, cluster: {server: "https://other"}}]
contexts: [{name: o, context: {cluster: o}}]
current-context: o
)");
  auto environment = FakeEnvironment(
      {{"HOME", dir.path() + "/home"}, {"KUBECONFIG", dir.path() + "/absent:" + other}});
  Result<KubeConfig> config = LoadKubeConfig({}, environment);
  ASSERT_TRUE(config) << config.error().ToString();
  EXPECT_EQ(config->server, "https://other");  // $KUBECONFIG, its missing entry skipped

  config = LoadKubeConfig(Explicit(home_config), environment);
  ASSERT_TRUE(config) << config.error().ToString();
  EXPECT_EQ(config->server, "https://127.0.0.1:6443");

  config = LoadKubeConfig({}, FakeEnvironment({{"HOME", dir.path() + "/home"}}));
  ASSERT_TRUE(config) << config.error().ToString();
  EXPECT_EQ(config->server, "https://127.0.0.1:6443");

  config = LoadKubeConfig(Explicit(dir.path() + "/absent"), environment);
  ASSERT_FALSE(config);
  EXPECT_EQ(config.error().code(), StatusCode::kNotFound);

  config = LoadKubeConfig({}, FakeEnvironment({{"HOME", dir.path()}}));
  ASSERT_FALSE(config);
  EXPECT_EQ(config.error().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(config.error().message(),
              HasSubstr("no kubeconfig found (looked at " + dir.path() + "/.kube/config)"));
}

TEST(KubeConfigTest, InClusterServiceAccount) {
  TempDir dir;
  dir.Write("sa/token", "sa-token\n");
  dir.Write("sa/ca.crt", "SA CA");
  dir.Write("sa/namespace", "strata-system");
  auto environment = FakeEnvironment(
      {{"KUBERNETES_SERVICE_HOST", "10.96.0.1"}, {"KUBERNETES_SERVICE_PORT", "443"}},
      dir.path() + "/sa");
  // With no kubeconfig anywhere, the loading rules fall back to the service account.
  Result<KubeConfig> config = LoadKubeConfig({}, environment);
  ASSERT_TRUE(config) << config.error().ToString();
  EXPECT_EQ(config->server, "https://10.96.0.1:443");
  EXPECT_EQ(config->bearer_token, "sa-token");
  EXPECT_EQ(config->bearer_token_file, dir.path() + "/sa/token");
  EXPECT_EQ(config->ca_pem, "SA CA");
  EXPECT_EQ(config->namespace_name, "strata-system");

  auto ipv6 =
      FakeEnvironment({{"KUBERNETES_SERVICE_HOST", "fd00::1"}, {"KUBERNETES_SERVICE_PORT", "6443"}},
                      dir.path() + "/sa");
  config = LoadInClusterConfig(ipv6);
  ASSERT_TRUE(config) << config.error().ToString();
  EXPECT_EQ(config->server, "https://[fd00::1]:6443");

  config = LoadInClusterConfig(FakeEnvironment(
      {{"KUBERNETES_SERVICE_HOST", "10.96.0.1"}, {"KUBERNETES_SERVICE_PORT", "443"}},
      dir.path() + "/nothing"));
  ASSERT_FALSE(config);
  EXPECT_EQ(config.error().code(), StatusCode::kNotFound);
  EXPECT_THAT(config.error().message(), HasSubstr(dir.path() + "/nothing/token"));

  config = LoadInClusterConfig(FakeEnvironment({}));
  ASSERT_FALSE(config);
  EXPECT_EQ(config.error().code(), StatusCode::kFailedPrecondition);
}

TEST(DecodeBase64Test, DecodesPaddedTextAndRejectsJunk) {
  EXPECT_EQ(DecodeBase64("aGVsbG8="), "hello");
  EXPECT_EQ(DecodeBase64("aGVsbG8h"), "hello!");
  EXPECT_EQ(DecodeBase64("aGVs\nbG8="), "hello");
  EXPECT_EQ(DecodeBase64("aGk="), "hi");
  EXPECT_EQ(DecodeBase64("aA=="), "h");
  EXPECT_EQ(DecodeBase64(""), "");
  EXPECT_EQ(DecodeBase64("aGk"), "hi");  // unpadded, as some tools write it
  EXPECT_FALSE(DecodeBase64("a"));
  EXPECT_FALSE(DecodeBase64("aG=k"));
  EXPECT_FALSE(DecodeBase64("a$=="));
  EXPECT_FALSE(DecodeBase64("aGk=="));
}

}  // namespace
}  // namespace strata::kube
