#include "client/credentials.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "node/test_support.h"

namespace strata::client {
namespace {

TEST(CredentialsTest, RemembersOneTokenPerServerInAPrivateFile) {
  node::testing::TempDir dir;
  const std::string path = dir.File("config/strata/credentials");
  EXPECT_FALSE(FindCredential(path, "http://127.0.0.1:7070"));
  ASSERT_TRUE(RememberCredential(path, "http://127.0.0.1:7070/", "first").ok());
  ASSERT_TRUE(RememberCredential(path, "http://127.0.0.1:7071", "other").ok());
  ASSERT_TRUE(RememberCredential(path, "http://127.0.0.1:7070", "second").ok());
  EXPECT_EQ(FindCredential(path, "http://127.0.0.1:7070"), "second");
  EXPECT_EQ(FindCredential(path, "http://127.0.0.1:7071/"), "other");
  EXPECT_FALSE(FindCredential(path, "http://localhost:7070"));
  EXPECT_EQ(node::testing::ReadFileOrEmpty(path),
            "http://127.0.0.1:7071 other\nhttp://127.0.0.1:7070 second\n");
  struct stat info {};
  ASSERT_EQ(stat(path.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600);
  ASSERT_EQ(stat(dir.File("config/strata").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0700);
}

TEST(CredentialsTest, KeepsTheMostRecentServersAndLosesNoneToConcurrentWriters) {
  node::testing::TempDir dir;
  const std::string path = dir.File("credentials");
  std::vector<std::thread> writers;
  for (int w = 0; w < 4; ++w) {
    writers.emplace_back([&, w] {
      for (int i = 0; i < 25; ++i) {
        const std::string server = "http://127.0.0.1:" + std::to_string(20000 + w * 100 + i);
        EXPECT_TRUE(RememberCredential(path, server, "t" + std::to_string(w * 100 + i)).ok());
      }
    });
  }
  for (std::thread& writer : writers) writer.join();
  for (int w = 0; w < 4; ++w) {
    for (int i = 0; i < 25; ++i) {
      EXPECT_EQ(FindCredential(path, "http://127.0.0.1:" + std::to_string(20000 + w * 100 + i)),
                "t" + std::to_string(w * 100 + i));
    }
  }
  for (int i = 0; i < kMaxRememberedServers; ++i) {
    ASSERT_TRUE(RememberCredential(path, "http://10.0.0.1:" + std::to_string(i), "n").ok());
  }
  EXPECT_FALSE(FindCredential(path, "http://127.0.0.1:20000"));
  EXPECT_EQ(FindCredential(path, "http://10.0.0.1:0"), "n");
}

TEST(CredentialsTest, ThePathFollowsTheEnvironment) {
  const char* home = std::getenv("HOME");
  const std::string saved_home = home != nullptr ? home : "";
  ::setenv("STRATA_CREDENTIALS", "/somewhere/creds", 1);
  EXPECT_EQ(CredentialsPath(), "/somewhere/creds");
  ::unsetenv("STRATA_CREDENTIALS");
  ::setenv("XDG_CONFIG_HOME", "/xdg", 1);
  EXPECT_EQ(CredentialsPath(), "/xdg/strata/credentials");
  ::unsetenv("XDG_CONFIG_HOME");
  ::setenv("HOME", "/home/someone", 1);
  EXPECT_EQ(CredentialsPath(), "/home/someone/.config/strata/credentials");
  if (home != nullptr) ::setenv("HOME", saved_home.c_str(), 1);
}

}  // namespace
}  // namespace strata::client
