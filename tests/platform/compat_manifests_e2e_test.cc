// The manifests of testdata/manifests/compat/ (Kueue's, Kubernetes', Kubeflow Trainer's,
// JobSet's, Volcano's and LeaderWorkerSet's own shapes) applied with the real CLI to a live
// `strata up`, one file at a time as a user would: each is accepted with the warnings its header
// declares, every Job they hold runs to Succeeded, and every Service (from a Deployment,
// StatefulSet or LeaderWorkerSet) gets all its replicas ready.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <thread>

#include "client/api_client.h"
#include "node/test_support.h"
#include "strata_process.h"

namespace strata::platform_test {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

int DeclaredWarnings(const fs::path& file) {
  std::ifstream in(file);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::smatch m;
  return std::regex_search(text, m, std::regex("# warnings: ([0-9]+)")) ? std::stoi(m[1]) : -1;
}

int CountLines(const std::string& text, const std::string& prefix) {
  int n = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) n += line.rfind(prefix, 0) == 0 ? 1 : 0;
  return n;
}

TEST(CompatManifestsE2eTest, EveryFileAppliesWithItsWarningsAndEveryJobSucceeds) {
  node::testing::TempDir data;
  UpProcess up;
  ASSERT_TRUE(up.Start({"--data-dir", data.path(), "--listen", "127.0.0.1:0",
                        "--nvml-library=/nonexistent/libnvidia-ml.so.1", "--simulate",
                        "4x8:H100-80GB,racks=2"}))
      << up.output();
  std::vector<fs::path> files;
  for (const char* project : {"kueue", "batch", "trainer", "jobset", "volcano"}) {
    for (const fs::directory_entry& e :
         fs::directory_iterator(fs::path(SourceDir()) / "testdata/manifests/compat" / project)) {
      files.push_back(e.path());
    }
  }
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 27u);
  for (const fs::path& file : files) {
    CommandResult applied = RunStrata({"apply", "-f", file.string(), "--server", up.url()});
    ASSERT_EQ(applied.exit_code, 0) << file << "\n" << applied.err;
    EXPECT_EQ(CountLines(applied.err, "Warning: "), DeclaredWarnings(file)) << file << "\n"
                                                                            << applied.err;
  }

  auto client = client::ApiClient::Create(up.url(), AdminTokenFor(up.url()));
  ASSERT_TRUE(client);
  // Every Job of every file, however it was named (several use generateName), ends Succeeded.
  Json jobs;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(180);
  std::string pending;
  while (std::chrono::steady_clock::now() < deadline) {
    auto listed = (*client)->Get("/apis/strata.dev/v1alpha1/jobs");
    ASSERT_TRUE(listed) << listed.error().ToString();
    jobs = (*listed)["items"];
    pending.clear();
    for (const Json& job : jobs) {
      std::string phase = job.value(Json::json_pointer("/status/phase"), std::string());
      if (phase == "Failed") FAIL() << job.dump(2);
      if (phase != "Succeeded") pending += job["metadata"].value("name", "") + " (" + phase + ") ";
    }
    if (pending.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  EXPECT_EQ(pending, "") << "still not Succeeded after 180 s";
  EXPECT_EQ(jobs.size(), 40u);
  // A Kueue WorkloadPriorityClass applied with its Jobs gave them their priority.
  auto high = (*client)->Get("/apis/strata.dev/v1alpha1/namespaces/default/jobs/pr-high-priority");
  ASSERT_TRUE(high) << high.error().ToString();
  EXPECT_EQ((*high)["spec"].value("priority", 0), 10000) << high->dump();
  CommandResult logs = RunStrata({"logs", "pod", "indexed-job-worker-2", "--server", up.url()});
  EXPECT_EQ(logs.out, "item 2\n") << logs.err;
  // A TrainJob without a trainer runs its runtime's command; restarts come from the runtime
  // (a JobSet failurePolicy, a torch elasticPolicy), a JobSet's failurePolicy and a Volcano
  // Job's RestartJob policy: each of the four jobs checked below failed once, then succeeded.
  CommandResult hello = RunStrata({"logs", "pod", "tj-hello-worker-0", "--server", up.url()});
  EXPECT_THAT(hello.out, ::testing::StartsWith("torch-distributed: node 0 of 1\n")) << hello.err;
  // Volcano's env plugin: each pod of a one-task job reads its index in VK_TASK_INDEX.
  CommandResult task = RunStrata({"logs", "pod", "vc-job-plugin-worker-2", "--server", up.url()});
  EXPECT_EQ(task.out, "task 2\n") << task.err;
  for (const Json& job : jobs) {
    std::string name = job["metadata"].value("name", "");
    if (name == "tj-restart" || name == "tj-elastic" || name == "js-failurepolicy" ||
        name == "vc-restart") {
      EXPECT_EQ(job.value(Json::json_pointer("/status/restartCount"), -1), 1) << job.dump(2);
    }
  }
}

// Deployments, StatefulSets and LeaderWorkerSets (testdata/manifests/compat/apps and lws) become
// Services: every file applies with the warnings its header declares, and every Service ends
// with all its replicas ready (engine-sim stands in for the engines of pods on simulated GPUs)
// or, without GPUs, running their own commands; its pods under the names and with the labels
// their kind gives them.
TEST(CompatManifestsE2eTest, ServingKindsApplyAndEveryReplicaRuns) {
  node::testing::TempDir data;
  UpProcess up;
  ASSERT_TRUE(up.Start({"--data-dir", data.path(), "--listen", "127.0.0.1:0",
                        "--nvml-library=/nonexistent/libnvidia-ml.so.1", "--simulate",
                        "4x8:H100-80GB,racks=2", "--sim-startup-delay", "1"}))
      << up.output();
  std::vector<fs::path> files;
  for (const char* project : {"apps", "lws"}) {
    for (const fs::directory_entry& e :
         fs::directory_iterator(fs::path(SourceDir()) / "testdata/manifests/compat" / project)) {
      files.push_back(e.path());
    }
  }
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 15u);
  for (const fs::path& file : files) {
    CommandResult applied = RunStrata({"apply", "-f", file.string(), "--server", up.url()});
    ASSERT_EQ(applied.exit_code, 0) << file << "\n" << applied.err;
    EXPECT_EQ(CountLines(applied.err, "Warning: "), DeclaredWarnings(file)) << file << "\n"
                                                                            << applied.err;
  }

  auto client = client::ApiClient::Create(up.url(), AdminTokenFor(up.url()));
  ASSERT_TRUE(client);
  // A Service whose pods have GPUs is ready when every replica is (engine-sim answers /health);
  // one without GPUs runs its own command, which serves nothing: ready when every pod runs.
  Json services;
  std::map<std::string, Json> by_name;
  std::string waiting;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (std::chrono::steady_clock::now() < deadline) {
    auto listed = (*client)->Get("/apis/strata.dev/v1alpha1/services");
    ASSERT_TRUE(listed) << listed.error().ToString();
    services = (*listed)["items"];
    auto pods = (*client)->Get("/api/v1/namespaces/default/pods");
    ASSERT_TRUE(pods) << pods.error().ToString();
    by_name.clear();
    std::map<std::string, int64_t> running;
    for (const Json& pod : (*pods)["items"]) {
      by_name[pod["metadata"].value("name", "")] = pod;
      if (pod.value(Json::json_pointer("/status/phase"), std::string()) == "Running") {
        ++running[pod["metadata"]["labels"].value("strata.dev/service", "")];
      }
    }
    waiting.clear();
    for (const Json& service : services) {
      const std::string name = service["metadata"].value("name", "");
      const Json& spec = service["spec"];
      int64_t want = spec.value("minReplicas", 0);
      int64_t have = spec.contains("resources") && spec["resources"].contains("gpu")
                         ? service.value(Json::json_pointer("/status/versions/0/readyReplicas"), 0)
                         : running[name] / spec.value("nodesPerReplica", 1);
      if (have != want) {
        waiting += name + " (" + std::to_string(have) + "/" + std::to_string(want) + ") ";
      }
    }
    if (waiting.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  EXPECT_EQ(waiting, "") << "replicas still not ready (or running) after 120 s";
  EXPECT_EQ(services.size(), 16u);

  // Pods without GPUs ran their own commands, with the port and LWS's environment (a running
  // pod's first line may reach its log a moment later).
  auto log_of = [&](const std::string& pod, const std::string& pattern) {
    CommandResult logs;
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    do {
      logs = RunStrata({"logs", "pod", pod, "--server", up.url()});
      if (std::regex_match(logs.out, std::regex(pattern))) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    } while (std::chrono::steady_clock::now() < until);
    return logs.out + logs.err;
  };
  EXPECT_THAT(log_of("web-frontend-v1-0", "serving on [0-9]+\n"),
              ::testing::MatchesRegex("serving on [0-9]+\n"));
  EXPECT_EQ(log_of("lws-sample-v1-0-0", "leader of 3\n"), "leader of 3\n");
  EXPECT_THAT(log_of("lws-sample-v1-0-2", "worker 2 of [0-9a-z.:-]+\n"),
              ::testing::MatchesRegex("worker 2 of [0-9a-z.:-]+\n"));
  // A StatefulSet's pods are <name>-<ordinal>; a Deployment's carry its template's labels.
  for (const char* name : {"web-0", "web-1", "shard-0", "shard-1", "llm-0", "single-0"}) {
    EXPECT_EQ(by_name.count(name), 1u) << name;
  }
  ASSERT_EQ(by_name.count("web-frontend-v1-1"), 1u);
  EXPECT_EQ(by_name["web-frontend-v1-1"]["metadata"]["labels"].value("app", ""), "web-frontend");
  // A LeaderWorkerSet's group spans its pods, labelled as LWS labels them.
  ASSERT_EQ(by_name.count("lws-sample-v1-1-2"), 1u);
  const Json& labels = by_name["lws-sample-v1-1-2"]["metadata"]["labels"];
  EXPECT_EQ(labels.value("leaderworkerset.sigs.k8s.io/name", ""), "lws-sample");
  EXPECT_EQ(labels.value("leaderworkerset.sigs.k8s.io/group-index", ""), "1");
  EXPECT_EQ(labels.value("leaderworkerset.sigs.k8s.io/worker-index", ""), "2");
  // Exclusive placement: the group's two pods share a rack.
  std::set<std::string> racks;
  for (const char* name : {"lws-exclusive-v1-0-0", "lws-exclusive-v1-0-1"}) {
    ASSERT_EQ(by_name.count(name), 1u) << name;
    std::string node = by_name[name]["spec"].value("nodeName", "");
    auto found = (*client)->Get("/api/v1/nodes/" + node);
    ASSERT_TRUE(found) << node << ": " << found.error().ToString();
    racks.insert((*found)["metadata"]["labels"].value("topology.strata.dev/rack", ""));
  }
  EXPECT_EQ(racks.size(), 1u);
}

}  // namespace
}  // namespace strata::platform_test
