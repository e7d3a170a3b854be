#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "node/test_support.h"
#include "server/api_client.h"
#include "strata_process.h"

namespace strata::platform_test {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;

constexpr char kNoNvml[] = "--nvml-library=/nonexistent/libnvidia-ml.so.1";

std::string ReadExample(const std::string& relative) {
  std::ifstream file(SourceDir() + "/examples/" + relative);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

std::unique_ptr<server::ApiClient> ClientFor(const UpProcess& up, std::string token = "") {
  auto client = server::ApiClient::Create(up.url(), std::move(token));
  EXPECT_TRUE(client);
  return std::move(*client);
}

// Applies a manifest file of examples/ through the API's apply endpoint.
void ApplyExample(server::ApiClient& client, const std::string& relative) {
  auto applied = client.Call("POST", "/apis/strata.dev/v1alpha1/apply", ReadExample(relative),
                             "application/yaml");
  ASSERT_TRUE(applied) << relative << ": " << applied.error().ToString();
}

class PlatformTest : public ::testing::Test {
 protected:
  std::vector<std::string> UpArgs() {
    return {"--data-dir", data_.path(), "--listen", "127.0.0.1:0", kNoNvml};
  }
  CommandResult Cli(std::vector<std::string> args) {
    args.push_back("--server");
    args.push_back(up_.url());
    return RunStrata(args);
  }

  node::testing::TempDir data_;
  UpProcess up_;
};

TEST_F(PlatformTest, UpSaysNvmlIsAbsentAndRegistersTheSimulatedNodes) {
  ASSERT_TRUE(up_.Start(UpArgs())) << up_.output();
  EXPECT_THAT(up_.output(), HasSubstr("no NVIDIA GPU found"));
  EXPECT_THAT(up_.output(), HasSubstr("registered 4 node(s)"));
  EXPECT_THAT(up_.url(), HasSubstr("http://127.0.0.1:"));

  CommandResult nodes = Cli({"get", "nodes"});
  ASSERT_EQ(nodes.exit_code, 0) << nodes.err;
  EXPECT_THAT(nodes.out, HasSubstr("sim-node-3"));
  EXPECT_THAT(nodes.out, HasSubstr("8x H100-80GB"));
  EXPECT_THAT(nodes.out, HasSubstr("Ready"));
  EXPECT_THAT(nodes.out, HasSubstr("rack-1"));

  CommandResult top = Cli({"top", "nodes"});
  ASSERT_EQ(top.exit_code, 0) << top.err;
  EXPECT_THAT(top.out, HasSubstr("HELD BY"));
  EXPECT_EQ(std::count(top.out.begin(), top.out.end(), '\n'), 1 + 32);

  EXPECT_EQ(up_.Terminate(), 0);
  EXPECT_THAT(up_.output(), HasSubstr("stopping"));
}

TEST_F(PlatformTest, ExamplesAppliedOverHttpAreReadAndDeletedWithTheCli) {
  ASSERT_TRUE(up_.Start(UpArgs())) << up_.output();
  auto client = ClientFor(up_);
  ApplyExample(*client, "team-queues/kueue.yaml");
  ApplyExample(*client, "resnet50-train/pytorchjob.yaml");

  CommandResult jobs = Cli({"get", "jobs", "-n", "team-a"});
  ASSERT_EQ(jobs.exit_code, 0) << jobs.err;
  EXPECT_THAT(jobs.out, HasSubstr("resnet50-train"));
  EXPECT_THAT(jobs.out, HasSubstr("4x8"));

  CommandResult all = Cli({"get", "jobs", "-A"});
  ASSERT_EQ(all.exit_code, 0) << all.err;
  EXPECT_THAT(all.out, HasSubstr("NAMESPACE"));

  CommandResult as_json = Cli({"get", "job", "resnet50-train", "-n", "team-a", "-o", "json"});
  ASSERT_EQ(as_json.exit_code, 0) << as_json.err;
  Json job = Json::parse(as_json.out);
  EXPECT_EQ(job["kind"], "Job");
  EXPECT_EQ(job["spec"]["replicas"], 4);

  CommandResult queues = Cli({"get", "queues"});
  ASSERT_EQ(queues.exit_code, 0) << queues.err;
  EXPECT_THAT(queues.out, HasSubstr("team-a-cq"));

  CommandResult described = Cli({"describe", "job", "resnet50-train", "-n", "team-a"});
  ASSERT_EQ(described.exit_code, 0) << described.err;
  EXPECT_THAT(described.out, HasSubstr("Name:         resnet50-train"));
  EXPECT_THAT(described.out, HasSubstr("procPerNode: 8"));

  CommandResult deleted = Cli({"delete", "job", "resnet50-train", "-n", "team-a"});
  ASSERT_EQ(deleted.exit_code, 0) << deleted.err;
  EXPECT_THAT(deleted.out, HasSubstr("job.strata.dev/resnet50-train deleted"));

  CommandResult missing = Cli({"get", "job", "resnet50-train", "-n", "team-a"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_THAT(missing.err, HasSubstr("not found"));

  CommandResult unknown_kind = Cli({"get", "widgets"});
  EXPECT_EQ(unknown_kind.exit_code, 2);
  EXPECT_THAT(unknown_kind.err, HasSubstr("unknown kind \"widgets\""));
}

TEST_F(PlatformTest, BadManifestsChangeNothing) {
  ASSERT_TRUE(up_.Start(UpArgs())) << up_.output();
  auto client = ClientFor(up_);
  std::string bad = ReadExample("team-queues/native.yaml") +
                    "---\napiVersion: strata.dev/v1alpha1\nkind: Queue\nmetadata: {name: q}\n"
                    "spec: {cohrt: pool}\n";
  auto applied = client->Call("POST", "/apis/strata.dev/v1alpha1/apply", bad, "application/yaml");
  ASSERT_FALSE(applied);
  EXPECT_EQ(applied.error().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(applied.error().message(), HasSubstr("spec.cohrt: unknown field"));
  // Neither the flavor nor the queues of the good documents were stored.
  for (const char* path :
       {"/apis/strata.dev/v1alpha1/queues", "/apis/strata.dev/v1alpha1/resourceflavors"}) {
    auto listed = client->Get(path);
    ASSERT_TRUE(listed) << path;
    EXPECT_TRUE((*listed)["items"].empty()) << path;
  }
}

TEST_F(PlatformTest, EveryObjectSurvivesKillNineAndRestart) {
  ASSERT_TRUE(up_.Start(UpArgs())) << up_.output();
  auto client = ClientFor(up_);
  ApplyExample(*client, "team-queues/native.yaml");
  ApplyExample(*client, "llama2-7b/inferenceservice.yaml");
  ApplyExample(*client, "gpu-probe/pod.yaml");
  std::map<std::string, Json> before;
  for (const char* path : {"/apis/strata.dev/v1alpha1/queues", "/apis/strata.dev/v1alpha1/services",
                           "/api/v1/pods", "/apis/strata.dev/v1alpha1/resourceflavors"}) {
    auto listed = client->Get(path);
    ASSERT_TRUE(listed);
    ASSERT_FALSE((*listed)["items"].empty()) << path;
    before[path] = (*listed)["items"];
  }
  up_.Kill();

  UpProcess restarted;
  ASSERT_TRUE(restarted.Start(UpArgs())) << restarted.output();
  auto again = ClientFor(restarted);
  for (const auto& [path, items] : before) {
    auto listed = again->Get(path);
    ASSERT_TRUE(listed) << path;
    EXPECT_EQ((*listed)["items"], items) << path;
  }
}

TEST_F(PlatformTest, ASecondUpOnTheSameDataDirIsRefused) {
  ASSERT_TRUE(up_.Start(UpArgs())) << up_.output();
  UpProcess second;
  EXPECT_FALSE(second.Start(UpArgs()));
  EXPECT_NE(second.WaitExit(), 0);
  EXPECT_THAT(second.output(), HasSubstr("strata up:"));
}

TEST_F(PlatformTest, ListeningOffLoopbackRequiresTokens) {
  UpProcess refused;
  EXPECT_FALSE(refused.Start({"--data-dir", data_.path(), "--listen", "0.0.0.0:0", kNoNvml}));
  EXPECT_NE(refused.WaitExit(), 0);
  EXPECT_THAT(refused.output(), HasSubstr("--token-file"));

  std::string tokens = data_.File("tokens");
  std::ofstream(tokens) << "s3cret\n";
  // 127.0.0.2 stands for "another interface": it is not the default address.
  ASSERT_TRUE(up_.Start(
      {"--data-dir", data_.File("d"), "--listen", "127.0.0.2:0", "--token-file", tokens, kNoNvml}))
      << up_.output();
  auto anonymous = ClientFor(up_)->Get("/api/v1/nodes");
  ASSERT_FALSE(anonymous);
  EXPECT_EQ(anonymous.error().code(), StatusCode::kUnauthenticated);
  EXPECT_TRUE(ClientFor(up_, "s3cret")->Get("/api/v1/nodes").has_value());

  CommandResult without = Cli({"get", "nodes"});
  EXPECT_EQ(without.exit_code, 1);
  EXPECT_THAT(without.err, HasSubstr("bearer token"));
  CommandResult with = Cli({"get", "nodes", "--token", "s3cret"});
  EXPECT_EQ(with.exit_code, 0) << with.err;
}

TEST_F(PlatformTest, WatchFromAListVersionSeesLaterChanges) {
  ASSERT_TRUE(up_.Start(UpArgs())) << up_.output();
  auto client = ClientFor(up_);
  auto listed = client->Get("/apis/strata.dev/v1alpha1/queues");
  ASSERT_TRUE(listed);
  std::string version = (*listed)["metadata"]["resourceVersion"];
  ApplyExample(*client, "team-queues/native.yaml");
  std::vector<std::string> seen;
  Status watched =
      client->Watch("/apis/strata.dev/v1alpha1/queues?watch=1&resourceVersion=" + version,
                    [&](const Json& event) {
                      seen.push_back(event["type"].get<std::string>() + " " +
                                     event["object"]["metadata"]["name"].get<std::string>());
                      return seen.size() < 2;
                    });
  ASSERT_TRUE(watched.ok()) << watched.ToString();
  EXPECT_THAT(seen, ::testing::ElementsAre("ADDED team-a-cq", "ADDED team-b-cq"));
}

TEST_F(PlatformTest, TheKubernetesPythonClientDiscoversAndUsesTheApi) {
  // Debian's package installs for the system interpreter, which a python3 earlier on PATH
  // (pyenv, a virtualenv) may not see.
  std::string python;
  for (const char* candidate : {"python3", "/usr/bin/python3"}) {
    if (RunProgram({candidate, "-c", "import kubernetes"}).exit_code == 0) {
      python = candidate;
      break;
    }
  }
  if (python.empty()) {
    GTEST_SKIP() << "python3-kubernetes is not installed (apt-get install python3-kubernetes)";
  }
  ASSERT_TRUE(up_.Start(UpArgs())) << up_.output();
  CommandResult checked =
      RunProgram({python, SourceDir() + "/tests/platform/kubernetes_client_check.py", up_.url()});
  EXPECT_EQ(checked.exit_code, 0) << checked.out << checked.err;
  EXPECT_THAT(checked.out, HasSubstr("dynamic delete"));
}

}  // namespace
}  // namespace strata::platform_test
