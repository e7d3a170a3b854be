#include "node/pod_identity.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "node/test_support.h"

namespace strata::node {
namespace {

using ::testing::HasSubstr;

api::SecurityContext Asked(std::optional<int64_t> user, std::optional<int64_t> group,
                           std::optional<bool> non_root) {
  api::SecurityContext asked;
  asked.run_as_user = user;
  asked.run_as_group = group;
  asked.run_as_non_root = non_root;
  return asked;
}

std::optional<PodSpec::RunAs> Identity(const api::SecurityContext& asked, bool allow_root) {
  Result<std::optional<PodSpec::RunAs>> identity = PodIdentity(asked, 0, allow_root);
  EXPECT_TRUE(identity) << identity.error().ToString();
  return identity ? *identity : std::nullopt;
}

TEST(PodIdentityTest, ARootAgentRunsPodsAsNobodyUnlessTheyNameAUser) {
  std::optional<PodSpec::RunAs> nobody = Identity({}, /*allow_root=*/true);
  ASSERT_TRUE(nobody);
  EXPECT_EQ(nobody->uid, kUnprivilegedUid);
  EXPECT_EQ(nobody->gid, kUnprivilegedGid);
  std::optional<PodSpec::RunAs> named = Identity(Asked(1000, 100, true), false);
  ASSERT_TRUE(named);
  EXPECT_EQ(named->uid, 1000u);
  EXPECT_EQ(named->gid, 100u);
  std::optional<PodSpec::RunAs> group_only =
      Identity(Asked(std::nullopt, 100, std::nullopt), false);
  ASSERT_TRUE(group_only);
  EXPECT_EQ(group_only->uid, kUnprivilegedUid);
  EXPECT_EQ(group_only->gid, 100u);
}

TEST(PodIdentityTest, RootOnlyWhenThePodAsksAndTheNodeAllows) {
  for (const api::SecurityContext& asked :
       {Asked(0, std::nullopt, std::nullopt), Asked(std::nullopt, std::nullopt, false)}) {
    Result<std::optional<PodSpec::RunAs>> refused = PodIdentity(asked, 0, false);
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().code(), StatusCode::kFailedPrecondition);
    EXPECT_THAT(refused.error().message(), HasSubstr("--allow-root-pods"));
    std::optional<PodSpec::RunAs> root = Identity(asked, /*allow_root=*/true);
    ASSERT_TRUE(root);
    EXPECT_EQ(root->uid, 0u);
    EXPECT_EQ(root->gid, 0u);
  }
}

TEST(PodIdentityTest, AnAgentThatIsNotRootRunsPodsAsItself) {
  Result<std::optional<PodSpec::RunAs>> identity =
      PodIdentity(Asked(0, std::nullopt, std::nullopt), 1000, false);
  ASSERT_TRUE(identity);
  EXPECT_FALSE(identity->has_value());
}

TEST(PodIdentityTest, TheDataDirOpensOnlyWhatPodsNeed) {
  testing::TempDir data;
  std::filesystem::create_directories(data.File("pods"));
  std::filesystem::create_directories(data.File("keys"));
  std::ofstream(data.File("strata.db")) << "x";
  chmod(data.path().c_str(), 0700);
  chmod(data.File("strata.db").c_str(), 0644);
  chmod(data.File("keys").c_str(), 0755);
  chmod(data.File("pods").c_str(), 0755);
  ASSERT_TRUE(OpenDataDirToPods(data.path()).ok());
  auto mode = [](const std::string& path) {
    struct stat info {};
    stat(path.c_str(), &info);
    return info.st_mode & 0777;
  };
  EXPECT_EQ(mode(data.path()), 0701u);
  EXPECT_EQ(mode(data.File("strata.db")), 0640u);
  EXPECT_EQ(mode(data.File("keys")), 0750u);
  EXPECT_EQ(mode(data.File("pods")), 0755u);
}

}  // namespace
}  // namespace strata::node
