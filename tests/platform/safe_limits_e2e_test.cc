// Safe by default, end to end (issue 23): the real `strata` binary refuses manifests beyond the
// limits (a YAML alias bomb, a billion replicas) in the CLI's dry run and through a live API,
// and `strata up` busy creating thousands of pods stops on SIGTERM, its pods' processes with it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "client/api_client.h"
#include "node/test_support.h"
#include "strata_process.h"

namespace strata::platform_test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using Json = nlohmann::json;

constexpr char kNoNvml[] = "--nvml-library=/nonexistent/libnvidia-ml.so.1";

std::string BadManifest(const std::string& name) {
  return SourceDir() + "/testdata/manifests/bad/" + name;
}

std::string ReadFile(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// More replicas than the cluster has room for, each a process once placed: the service
// controller creates pods pass after pass, and the scheduler explains thousands.
constexpr char kWideService[] = R"(apiVersion: strata.dev/v1alpha1
kind: Service
metadata: {name: wide}
spec:
  model: wide
  engine: {command: [sleep, "600"]}
  resources: {gpu: 8}
  minReplicas: 10000
)";

// The process groups of the pods running under `data_dir`, from their state files.
std::set<pid_t> PodProcessGroups(const std::string& data_dir) {
  std::set<pid_t> groups;
  std::error_code error;
  for (std::filesystem::directory_iterator it(data_dir + "/pods", error);
       !error && it != std::filesystem::directory_iterator(); it.increment(error)) {
    Json state = Json::parse(ReadFile((it->path() / "state.json").string()), nullptr, false);
    if (state.is_object() && state.value("pgid", 0) > 0) groups.insert(state["pgid"].get<pid_t>());
  }
  return groups;
}

// Whether a process of group `pgid` is alive (a zombie counts as gone).
bool GroupAlive(pid_t pgid) {
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string pid = entry.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string stat = ReadFile("/proc/" + pid + "/stat");
    // pid (comm) state ppid pgrp ...: comm may hold spaces, so read after its ')'.
    size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream fields(stat.substr(close + 1));
    char state = 0;
    pid_t ppid = 0;
    pid_t group = 0;
    fields >> state >> ppid >> group;
    if (group == pgid && state != 'Z') return true;
  }
  return false;
}

TEST(SafeLimitsTest, TheCliDryRunRefusesAnAliasBombAndABillionReplicasNamingTheLimit) {
  CommandResult bomb =
      RunStrata({"apply", "--dry-run", "-f", BadManifest("58-yaml-alias-bomb.yaml")});
  EXPECT_EQ(bomb.exit_code, 1);
  EXPECT_THAT(bomb.err, HasSubstr("58-yaml-alias-bomb.yaml: line 8, column 52: the YAML expands "
                                  "to more than 1000000 nodes"));
  EXPECT_EQ(bomb.out, "");

  CommandResult replicas =
      RunStrata({"apply", "--dry-run", "-f", BadManifest("54-job-replicas-over-limit.yaml")});
  EXPECT_EQ(replicas.exit_code, 1);
  EXPECT_THAT(replicas.err, HasSubstr("spec.replicas: 1000000000 exceeds the limit of 10000"));
}

TEST(SafeLimitsTest, TheApiRefusesThemAndStoresNothing) {
  node::testing::TempDir data;
  UpProcess up;
  ASSERT_TRUE(up.Start(
      {"--data-dir", data.path(), "--listen", "127.0.0.1:0", kNoNvml, "--gateway-listen", "off"}))
      << up.output();
  Result<std::unique_ptr<client::ApiClient>> client =
      client::ApiClient::Create(up.url(), AdminTokenFor(up.url()));
  ASSERT_TRUE(client) << client.error().ToString();
  auto apply = [&](const std::string& body) {
    return (*client)->Call("POST", "/apis/strata.dev/v1alpha1/apply", body, "application/yaml");
  };
  auto bomb = apply(ReadFile(BadManifest("58-yaml-alias-bomb.yaml")));
  ASSERT_FALSE(bomb);
  EXPECT_EQ(bomb.error().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(bomb.error().message(), HasSubstr("expands to more than 1000000 nodes"));

  std::string billion = kWideService;
  billion.replace(billion.find("minReplicas: 10000"), 18, "minReplicas: 1000000000");
  auto service = apply(billion);
  ASSERT_FALSE(service);
  EXPECT_EQ(service.error().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(service.error().message(),
              HasSubstr("spec.minReplicas: 1000000000 exceeds the limit of 10000"));

  auto listed = (*client)->Get("/apis/strata.dev/v1alpha1/services");
  ASSERT_TRUE(listed) << listed.error().ToString();
  EXPECT_TRUE((*listed)["items"].empty()) << listed->dump();
  EXPECT_EQ(up.Terminate(), 0) << up.output();
}

// Starts `up` with the wide Service applied, and returns once four of its replicas run and the
// service controller is still creating the others' pods: the process groups of those four.
std::set<pid_t> StartBusy(UpProcess& up, const node::testing::TempDir& data) {
  EXPECT_TRUE(up.Start({"--data-dir", data.path(), "--listen", "127.0.0.1:0", kNoNvml,
                        "--gateway-listen", "127.0.0.1:0", "--stop-grace", "2"}))
      << up.output();
  Result<std::unique_ptr<client::ApiClient>> client =
      client::ApiClient::Create(up.url(), AdminTokenFor(up.url()));
  EXPECT_TRUE(client) << client.error().ToString();
  if (!client) return {};
  EXPECT_TRUE(
      (*client)->Call("POST", "/apis/strata.dev/v1alpha1/apply", kWideService, "application/yaml"));
  // The simulated 4 x 8 GPUs run four replicas; thousands more wait.
  std::set<pid_t> groups;
  for (int tries = 0; tries < 600 && groups.size() < 4; ++tries) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    groups = PodProcessGroups(data.path());
  }
  EXPECT_EQ(groups.size(), 4u) << up.output();
  for (pid_t group : groups) EXPECT_TRUE(GroupAlive(group)) << group;
  int64_t pods = 0;
  for (int tries = 0; tries < 600 && pods < 2000; ++tries) {
    auto page = (*client)->Get("/api/v1/namespaces/default/pods?limit=1");
    if (!page) break;
    pods = static_cast<int64_t>((*page)["items"].size()) +
           page->value(Json::json_pointer("/metadata/remainingItemCount"), int64_t{0});
    if (pods < 2000) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_GE(pods, 2000);
  EXPECT_LT(pods, 10000) << "every replica was created before the stop";
  return groups;
}

TEST(SafeLimitsTest, SigtermStopsABusyUpAndEveryPodProcess) {
  node::testing::TempDir data;
  UpProcess up;
  const std::set<pid_t> groups = StartBusy(up, data);
  ASSERT_EQ(groups.size(), 4u);

  const int exit_code = up.Terminate();
  EXPECT_THAT(up.output(), HasSubstr("strata: stopping (signal 15)"));
  // 0 when every loop ended its pass in time; 1 when one was left behind and the pods were
  // stopped directly. Either way, nothing of the pods is left.
  EXPECT_TRUE(exit_code == 0 || exit_code == 1) << exit_code << "\n" << up.output();
  for (pid_t group : groups) EXPECT_FALSE(GroupAlive(group)) << "pod process group " << group;
}

TEST(SafeLimitsTest, ASecondSigtermStopsThePodsDirectlyAndExitsAtOnce) {
  node::testing::TempDir data;
  UpProcess up;
  const std::set<pid_t> groups = StartBusy(up, data);
  ASSERT_EQ(groups.size(), 4u);

  up.Signal(SIGTERM);
  // Apart, or the kernel merges the two into one pending signal.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  up.Signal(SIGTERM);
  const int exit_code = up.WaitExit();
  if (exit_code == 1) {
    EXPECT_THAT(up.output(), HasSubstr("strata up: stopping again; stopping the pods and exiting"));
    EXPECT_THAT(up.output(), HasSubstr("strata: 4 pod(s) stopped; exiting"));
  } else {
    // The whole stop was over before the second signal came.
    EXPECT_EQ(exit_code, 0) << up.output();
    EXPECT_THAT(up.output(), Not(HasSubstr("stopping again")));
  }
  for (pid_t group : groups) EXPECT_FALSE(GroupAlive(group)) << "pod process group " << group;
}

}  // namespace
}  // namespace strata::platform_test
