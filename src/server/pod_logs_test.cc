#include "server/pod_logs.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "node/node_runtime.h"
#include "node/test_support.h"
#include "server/test_api_server.h"

namespace strata::server {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;

constexpr char kLogPath[] = "/api/v1/namespaces/default/pods/probe/log";

class PodLogsTest : public ::testing::Test {
 protected:
  PodLogsTest() : server_(Options(dir_.path())), admin_(server_.Client()) {}

  static RestApiOptions Options(const std::string& dir) {
    RestApiOptions options;
    options.pod_logs_dir = dir;
    return options;
  }

  // Creates pod "probe" bound to `node` and returns its uid.
  std::string CreatePod(const std::string& node) {
    Json pod = {{"apiVersion", "strata.dev/v1alpha1"},
                {"kind", "Pod"},
                {"metadata", {{"name", "probe"}, {"namespace", "default"}}},
                {"spec", {{"nodeName", node}, {"template", {{"command", {"true"}}}}}}};
    auto created =
        admin_->Call("POST", "/api/v1/namespaces/default/pods", pod.dump(), "application/json");
    EXPECT_TRUE(created) << created.error().ToString();
    return (*created)["metadata"]["uid"];
  }

  void Append(const std::string& uid, const std::string& process, const std::string& text) {
    std::filesystem::create_directories(dir_.path() + "/" + uid + "/logs");
    std::ofstream(dir_.File(uid + "/logs/" + process + ".log"), std::ios::app) << text;
  }

  void Finish() {
    auto done = admin_->Call("PUT", std::string("/api/v1/namespaces/default/pods/probe/status"),
                             Json{{"status", {{"phase", "Succeeded"}}}}.dump(), "application/json");
    ASSERT_TRUE(done) << done.error().ToString();
  }

  node::testing::TempDir dir_;
  testing::TestApiServer server_;
  std::unique_ptr<client::ApiClient> admin_;
};

TEST_F(PodLogsTest, APodsOnlyProcessLogIsServedWholeOrItsTail) {
  std::string uid = CreatePod("local");
  Append(uid, "main", "one\ntwo\nthree\n");
  auto whole = admin_->GetText(kLogPath);
  ASSERT_TRUE(whole) << whole.error().ToString();
  EXPECT_EQ(*whole, "one\ntwo\nthree\n");
  auto tail = admin_->GetText(std::string(kLogPath) + "?tailLines=2");
  ASSERT_TRUE(tail);
  EXPECT_EQ(*tail, "two\nthree\n");
  auto bad = admin_->GetText(std::string(kLogPath) + "?tailLines=-1");
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message(), HasSubstr("tailLines"));
  // Never restarted: --previous says there is no previous instance, not the current log.
  auto previous = admin_->GetText(std::string(kLogPath) + "?previous=true");
  ASSERT_FALSE(previous);
  EXPECT_THAT(previous.error().message(),
              HasSubstr("previous: pod \"probe\" has no previous instance on this server"));
  EXPECT_TRUE(admin_->GetText(std::string(kLogPath) + "?previous=false"));
}

// A restarted job's pod, or a replaced replica, is a new pod of the same name: --previous
// reads the newest earlier one's log, by the name the node runtime records beside each pod's
// directory; another pod's name, or a name file inside a pod's own directory, does not count.
TEST_F(PodLogsTest, PreviousReadsTheEarlierInstanceOfTheSameName) {
  auto name = [this](const std::string& uid, const std::string& text) {
    std::ofstream(dir_.File(uid + node::kPodNameSuffix)) << text;
  };
  Append("first-run", "main", "attempt 1\n");
  name("first-run", "default/probe\n");
  Append("second-run", "main", "attempt 2\n");
  name("second-run", "default/probe\n");
  Append("other-pod", "main", "someone else\n");
  name("other-pod", "default/probe-2\n");
  Append("spoof", "main", "spoofed\n");
  std::ofstream(dir_.File("spoof/logs/../" + std::string("pod-name"))) << "default/probe\n";
  // The first run's name file is older than the second's.
  std::filesystem::last_write_time(dir_.File(std::string("first-run") + node::kPodNameSuffix),
                                   std::filesystem::last_write_time(dir_.File(
                                       std::string("second-run") + node::kPodNameSuffix)) -
                                       std::chrono::seconds(10));
  std::string uid = CreatePod("local");
  Append(uid, "main", "attempt 3\n");
  name(uid, "default/probe\n");
  auto previous = admin_->GetText(std::string(kLogPath) + "?previous=true");
  ASSERT_TRUE(previous) << previous.error().ToString();
  EXPECT_EQ(*previous, "attempt 2\n");
  // Followed or not, a previous instance's log is served whole.
  auto followed = admin_->GetText(std::string(kLogPath) + "?previous=true&follow=true");
  ASSERT_TRUE(followed) << followed.error().ToString();
  EXPECT_EQ(*followed, "attempt 2\n");
  auto current = admin_->GetText(kLogPath);
  ASSERT_TRUE(current);
  EXPECT_EQ(*current, "attempt 3\n");
}

TEST_F(PodLogsTest, APodWithSeveralProcessesNeedsTheContainerParameter) {
  std::string uid = CreatePod("local");
  Append(uid, "rank-0", "zero\n");
  Append(uid, "rank-1", "one\n");
  auto ambiguous = admin_->GetText(kLogPath);
  ASSERT_FALSE(ambiguous);
  EXPECT_EQ(ambiguous.error().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(ambiguous.error().message(), HasSubstr("choose one of: rank-0, rank-1"));
  auto one = admin_->GetText(std::string(kLogPath) + "?container=rank-1");
  ASSERT_TRUE(one);
  EXPECT_EQ(*one, "one\n");
  // The v1 Pod's one container, as kubectl names it on Kubernetes: the first process.
  auto main = admin_->GetText(std::string(kLogPath) + "?container=main");
  ASSERT_TRUE(main) << main.error().ToString();
  EXPECT_EQ(*main, "zero\n");
}

TEST_F(PodLogsTest, FollowingSendsWhatIsAppendedUntilThePodEnds) {
  std::string uid = CreatePod("local");
  Append(uid, "main", "first\n");
  std::string received;
  bool appended = false;
  Status followed =
      server_.Client()->Stream(std::string(kLogPath) + "?follow=true", [&](std::string_view data) {
        received.append(data);
        if (!appended) {
          appended = true;
          Append(uid, "main", "last\n");
          Finish();
        }
        return true;
      });
  ASSERT_TRUE(followed.ok()) << followed.ToString();
  EXPECT_EQ(received, "first\nlast\n");
}

TEST_F(PodLogsTest, LogsOfAPodOnAnotherMachineOrNotStartedAreExplained) {
  CreatePod("far-away");
  auto elsewhere = admin_->GetText(kLogPath);
  ASSERT_FALSE(elsewhere);
  EXPECT_EQ(elsewhere.error().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(elsewhere.error().message(), HasSubstr("runs on node \"far-away\""));
  auto missing = admin_->GetText("/api/v1/namespaces/default/pods/nobody/log");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace strata::server
