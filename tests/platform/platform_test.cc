#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "api/node_lease.h"
#include "client/api_client.h"
#include "gateway/server.h"
#include "node/test_support.h"
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

// A client with `token`; by default the admin credential strata up recorded for the CLI.
std::unique_ptr<client::ApiClient> ClientFor(const UpProcess& up, std::string token = "") {
  if (token.empty()) token = AdminTokenFor(up.url());
  auto client = client::ApiClient::Create(up.url(), std::move(token));
  EXPECT_TRUE(client);
  return std::move(*client);
}

// Applies a manifest file of examples/ through the API's apply endpoint.
void ApplyExample(client::ApiClient& client, const std::string& relative) {
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
  EXPECT_THAT(jobs.out, HasSubstr("/4"));

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
  EXPECT_THAT(described.out, HasSubstr("Name:             resnet50-train"));
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
  // What users wrote (names, uids and specs); the control loops keep changing statuses, the
  // scheduler may bind a pod (nodeName, assignedGpus) at any moment around the kill, and the
  // service controller creates the service's replica pods whenever its loop runs, the restarted
  // one's included.
  auto written = [](const Json& items) {
    Json out = Json::array();
    for (const Json& item : items) {
      if (item["spec"].value(Json::json_pointer("/owner/kind"), "") == "Service") continue;
      Json spec = item["spec"];
      spec.erase("nodeName");
      spec.erase("assignedGpus");
      out.push_back({item["metadata"]["name"], item["metadata"]["uid"], spec});
    }
    return out;
  };
  std::map<std::string, Json> before;
  for (const char* path : {"/apis/strata.dev/v1alpha1/queues", "/apis/strata.dev/v1alpha1/services",
                           "/api/v1/pods", "/apis/strata.dev/v1alpha1/resourceflavors"}) {
    auto listed = client->Get(path);
    ASSERT_TRUE(listed);
    ASSERT_FALSE((*listed)["items"].empty()) << path;
    before[path] = written((*listed)["items"]);
  }
  up_.Kill();

  UpProcess restarted;
  ASSERT_TRUE(restarted.Start(UpArgs())) << restarted.output();
  auto again = ClientFor(restarted);
  for (const auto& [path, items] : before) {
    auto listed = again->Get(path);
    ASSERT_TRUE(listed) << path;
    EXPECT_EQ(written((*listed)["items"]), items) << path;
  }
}

TEST_F(PlatformTest, ASecondUpOnTheSameDataDirIsRefused) {
  ASSERT_TRUE(up_.Start(UpArgs())) << up_.output();
  UpProcess second;
  EXPECT_FALSE(second.Start(UpArgs()));
  EXPECT_NE(second.WaitExit(), 0);
  EXPECT_THAT(second.output(), HasSubstr("strata up:"));
}

TEST_F(PlatformTest, AStoreFileTruncatedToNothingIsRefusedNamingIt) {
  // SQLite would read it as a new, empty database: the cluster's objects gone without a word.
  std::ofstream(data_.File("strata.db")).close();
  UpProcess refused;
  EXPECT_FALSE(refused.Start(UpArgs()));
  EXPECT_NE(refused.WaitExit(), 0);
  EXPECT_THAT(refused.output(), HasSubstr(data_.File("strata.db") + " is empty (0 bytes)"));
}

TEST_F(PlatformTest, AGatewayOnAPortInUseFailsToStartNamingIt) {
  const std::string config = data_.File("gateway.yaml");
  std::ofstream(config)
      << "models: [{name: m, versions: [{name: v1, endpoints: [127.0.0.1:1]}]}]\n";
  auto first = gateway::GatewayServer::Start(gateway::GatewayConfig{}, "127.0.0.1", 0,
                                             RealClock::Instance());
  ASSERT_TRUE(first.has_value()) << first.error().ToString();
  const std::string taken = "127.0.0.1:" + std::to_string((*first)->port());
  // The timeout only bounds a second gateway that starts anyway (the kernel would then split
  // the port's connections between the two).
  CommandResult second = RunProgram(
      {"timeout", "20", StrataBinary(), "gateway", "--listen", taken, "--config", config});
  EXPECT_EQ(second.exit_code, 1) << second.out << second.err;
  EXPECT_THAT(second.err, HasSubstr("cannot listen on " + taken));
  // So does the gateway of a `strata up` told to use that port.
  UpProcess up;
  std::vector<std::string> args = UpArgs();
  args.insert(args.end(), {"--gateway-listen", taken});
  up.Start(args);  // the API may announce itself before the gateway starts
  EXPECT_NE(up.WaitExit(), 0);
  EXPECT_THAT(up.output(), HasSubstr("strata up: cannot listen on " + taken));
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
  // Both creations, in order; the scheduler adapter's writes of the queues' status (their use)
  // may come between them as MODIFIED.
  std::vector<std::string> added;
  Status watched =
      client->Watch("/apis/strata.dev/v1alpha1/queues?watch=1&resourceVersion=" + version,
                    [&](const Json& event) {
                      if (event["type"] == "ADDED") {
                        added.push_back(event["object"]["metadata"]["name"].get<std::string>());
                      }
                      return added.size() < 2;
                    });
  ASSERT_TRUE(watched.ok()) << watched.ToString();
  EXPECT_THAT(added, ::testing::ElementsAre("team-a-cq", "team-b-cq"));
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
      RunProgram({python, SourceDir() + "/tests/platform/kubernetes_client_check.py", up_.url(),
                  AdminTokenFor(up_.url())});
  EXPECT_EQ(checked.exit_code, 0) << checked.out << checked.err;
  EXPECT_THAT(checked.out, HasSubstr("dynamic delete"));
}

TEST_F(PlatformTest, GetShowsEveryKindInTablesThatFitAndDescribeExplains) {
  ASSERT_TRUE(up_.Start(UpArgs())) << up_.output();
  auto client = ClientFor(up_);
  ApplyExample(*client, "team-queues/native.yaml");
  ApplyExample(*client, "resnet50-train/pytorchjob.yaml");
  ApplyExample(*client, "llama2-7b/inferenceservice.yaml");

  CommandResult queues = Cli({"get", "queues"});
  ASSERT_EQ(queues.exit_code, 0) << queues.err;
  EXPECT_THAT(queues.out, HasSubstr("GPU USED/NOMINAL   BORROWED"));
  EXPECT_THAT(queues.out, HasSubstr("/32"));
  CommandResult jobs = Cli({"get", "jobs", "-n", "team-a"});
  ASSERT_EQ(jobs.exit_code, 0) << jobs.err;
  EXPECT_THAT(jobs.out, HasSubstr("READY   RESTARTS"));
  EXPECT_THAT(jobs.out, HasSubstr("/4"));
  for (const char* kind : {"nodes", "queues", "jobs", "pods", "services", "events"}) {
    CommandResult listed = Cli({"get", kind, "-n", "team-a"});
    ASSERT_EQ(listed.exit_code, 0) << kind << ": " << listed.err;
    for (size_t start = 0, end; (end = listed.out.find('\n', start)) != std::string::npos;
         start = end + 1) {
      EXPECT_LE(end - start, 80u) << kind << ":\n" << listed.out;
    }
    CommandResult as_yaml = Cli({"get", kind, "-A", "-o", "yaml"});
    EXPECT_EQ(as_yaml.exit_code, 0) << kind << ": " << as_yaml.err;
  }

  CommandResult queue = Cli({"describe", "queue", "team-a-cq"});
  ASSERT_EQ(queue.exit_code, 0) << queue.err;
  EXPECT_THAT(queue.out, HasSubstr("Usage:"));
  EXPECT_THAT(queue.out, HasSubstr("BORROWED"));
  CommandResult job = Cli({"describe", "job", "resnet50-train", "-n", "team-a"});
  ASSERT_EQ(job.exit_code, 0) << job.err;
  EXPECT_THAT(job.out, HasSubstr(" of at most 3"));
  EXPECT_THAT(job.out, HasSubstr("Last checkpoint:  <none>"));

  // A watch prints the current objects as rows, then changes; `timeout` ends it.
  CommandResult watched =
      RunProgram({"timeout", "3", StrataBinary(), "get", "queues", "-w", "--server", up_.url()});
  EXPECT_EQ(watched.exit_code, 124) << watched.err;
  EXPECT_THAT(watched.out, HasSubstr("team-a-cq"));
  EXPECT_THAT(watched.out, HasSubstr("team-b-cq"));

  CommandResult missing = Cli({"describe", "job", "nothing", "-n", "team-a"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_THAT(missing.err, HasSubstr("not found"));
  CommandResult gone = Cli({"delete", "queue", "nothing"});
  EXPECT_EQ(gone.exit_code, 1);
  EXPECT_THAT(gone.err, HasSubstr("not found"));
  CommandResult unknown = Cli({"describe", "widget", "w"});
  EXPECT_EQ(unknown.exit_code, 2);
  CommandResult no_logs = Cli({"logs", "pod", "nothing"});
  EXPECT_EQ(no_logs.exit_code, 1);
  EXPECT_THAT(no_logs.err, HasSubstr("not found"));
}

TEST_F(PlatformTest, MetricsShowQueuesAndPendingWorkloads) {
  ASSERT_TRUE(up_.Start(UpArgs())) << up_.output();
  auto client = ClientFor(up_);
  ApplyExample(*client, "team-queues/native.yaml");
  auto scraped = client->GetText("/metrics");
  ASSERT_TRUE(scraped) << scraped.error().ToString();
  EXPECT_THAT(*scraped,
              HasSubstr("strata_queue_nominal_quota{queue=\"team-a-cq\",resource=\"gpu\"} 32"));
  EXPECT_THAT(*scraped, HasSubstr("strata_queue_usage{queue=\"team-b-cq\",resource=\"gpu\"}"));
  EXPECT_THAT(*scraped, HasSubstr("strata_apiserver_pods{phase=\"Running\"}"));
}

TEST_F(PlatformTest, BadInputThroughTheApiChangesNothing) {
  ASSERT_TRUE(up_.Start(UpArgs())) << up_.output();
  auto client = ClientFor(up_);
  struct Case {
    std::string body;
    std::string message;
  };
  for (const Case& bad :
       {Case{"apiVersion: strata.dev/v1alpha1\nkind: Widget\nmetadata: {name: w}\n", "Widget"},
        Case{"kind: Queue\nmetadata: {name: q\n", "line"},
        Case{"apiVersion: strata.dev/v1alpha1\nkind: Queue\nmetadata: {name: q}\n"
             "spec: {flavors: [{name: h100, resources: [{name: gpu, nominal: lots}]}]}\n",
             "nominal"}}) {
    auto applied =
        client->Call("POST", "/apis/strata.dev/v1alpha1/apply", bad.body, "application/yaml");
    ASSERT_FALSE(applied) << bad.body;
    EXPECT_EQ(applied.error().code(), StatusCode::kInvalidArgument) << bad.body;
    EXPECT_THAT(applied.error().message(), HasSubstr(bad.message)) << bad.body;
  }
  std::string huge = "apiVersion: strata.dev/v1alpha1\nkind: Queue\nmetadata: {name: big}\n# " +
                     std::string(5 << 20, 'x') + "\n";
  auto oversized =
      client->Call("POST", "/apis/strata.dev/v1alpha1/apply", huge, "application/yaml");
  // Refused with 413 (the server may close before the client has sent it all).
  ASSERT_FALSE(oversized);
  auto queues = client->Get("/apis/strata.dev/v1alpha1/queues");
  ASSERT_TRUE(queues);
  EXPECT_TRUE((*queues)["items"].empty());

  std::string file = data_.File("bad.yaml");
  std::ofstream(file) << "apiVersion: strata.dev/v1alpha1\nkind: Job\nmetadata: {name: j}\n"
                         "spec: {replicaz: 2}\n";
  CommandResult applied = Cli({"apply", "-f", file});
  EXPECT_NE(applied.exit_code, 0);
  EXPECT_THAT(applied.err, HasSubstr("replicaz"));
  auto jobs = client->Get("/apis/strata.dev/v1alpha1/jobs");
  ASSERT_TRUE(jobs);
  EXPECT_TRUE((*jobs)["items"].empty());
}

TEST_F(PlatformTest, AJoinTokenFileThatDoesNotExistIsMadeReadableByItsOwnerOnly) {
  std::string file = data_.File("join-token.txt");
  std::vector<std::string> args = UpArgs();
  args.insert(args.end(), {"--join-token-file", file});
  ASSERT_TRUE(up_.Start(args)) << up_.output();
  EXPECT_THAT(up_.output(), HasSubstr("wrote a new join token to " + file));
  struct stat info {};
  ASSERT_EQ(::stat(file.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600);
  std::string token = node::testing::ReadFileOrEmpty(file);
  ASSERT_EQ(token.size(), 65u) << token;
  token.pop_back();
  auto joined =
      ClientFor(up_, token)
          ->Call(
              "POST", "/apis/strata.dev/v1alpha1/join",
              R"({"apiVersion": "strata.dev/v1alpha1", "kind": "Node", "metadata": {"name": "agent-9"},
          "status": {"gpus": [{"index": 0, "model": "H100-80GB", "memory": "80Gi"}]}})",
              "application/json");
  EXPECT_TRUE(joined) << joined.error().ToString();
}

TEST_F(PlatformTest, AgentsJoinWithTheJoinTokenAndKeepTheirCredentialAcrossRestarts) {
  std::string join_tokens = data_.File("join-tokens");
  std::ofstream(join_tokens) << "j0in\n";
  std::vector<std::string> args = UpArgs();
  args.insert(args.end(), {"--join-token-file", join_tokens});
  ASSERT_TRUE(up_.Start(args)) << up_.output();
  std::string node = R"({"apiVersion": "strata.dev/v1alpha1", "kind": "Node",
      "metadata": {"name": "agent-1"},
      "status": {"gpus": [{"index": 0, "model": "H100-80GB", "memory": "80Gi"}]}})";
  auto refused = ClientFor(up_, "guess")
                     ->Call("POST", "/apis/strata.dev/v1alpha1/join", node, "application/json");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), StatusCode::kUnauthenticated);
  auto joined = ClientFor(up_, "j0in")
                    ->Call("POST", "/apis/strata.dev/v1alpha1/join", node, "application/json");
  ASSERT_TRUE(joined) << joined.error().ToString();
  std::string credential = (*joined)["token"];

  auto agent = ClientFor(up_, credential);
  EXPECT_TRUE(agent->Get("/api/v1/nodes/agent-1").has_value());
  auto others = agent->Get("/api/v1/nodes/sim-node-0");
  ASSERT_FALSE(others);
  EXPECT_EQ(others.error().code(), StatusCode::kPermissionDenied);
  CommandResult nodes = Cli({"get", "nodes"});
  EXPECT_THAT(nodes.out, HasSubstr("agent-1"));

  up_.Kill();
  UpProcess restarted;
  ASSERT_TRUE(restarted.Start(args)) << restarted.output();
  EXPECT_TRUE(ClientFor(restarted, credential)->Get("/api/v1/nodes/agent-1").has_value());
  auto denied = ClientFor(restarted, credential)->Get("/apis/strata.dev/v1alpha1/queues");
  ASSERT_FALSE(denied);
  EXPECT_EQ(denied.error().code(), StatusCode::kPermissionDenied);
}

// Waits (up to 90 s; bookmarks keep the stream alive) for the pod to reach `phase` on `node` (any
// node when empty), through a watch; returns the pod as last seen.
Json WaitForPod(client::ApiClient& client, const std::string& name, const std::string& phase,
                const std::string& node = "") {
  Json last;
  Status watched = client.Watch(
      "/api/v1/namespaces/default/pods?watch=1&allowWatchBookmarks=true&timeoutSeconds=90&"
      "fieldSelector=metadata.name%3D" +
          name,
      [&](const Json& event) {
        last = event["object"];
        std::string at = last.value(Json::json_pointer("/spec/nodeName"), std::string());
        return !(last.value(Json::json_pointer("/status/phase"), std::string()) == phase &&
                 (node.empty() || at == node));
      });
  EXPECT_TRUE(watched.ok()) << watched.ToString();
  return last;
}

TEST_F(PlatformTest, AnAgentJoinsRunsItsPodsAndLosingItRestartsTheJobElsewhere) {
  std::string join_tokens = data_.File("join-tokens");
  std::ofstream(join_tokens) << "j0in\n";
  std::string wrong_tokens = data_.File("wrong-tokens");
  std::ofstream(wrong_tokens) << "guess\n";
  ASSERT_TRUE(up_.Start({"--data-dir", data_.File("up"), "--listen", "127.0.0.1:0", kNoNvml,
                         "--simulate", "1x8:H100-80GB", "--join-token-file", join_tokens}))
      << up_.output();
  auto agent_args = [&](const std::string& tokens) -> std::vector<std::string> {
    return {"--server",  up_.url(),    "--join-token",         tokens,       "--name",
            "agent-1",   "--simulate", "1x8:H100-80GB",        "--data-dir", data_.File("agent"),
            "--address", "127.0.0.1",  "--heartbeat-interval", "1"};
  };
  std::vector<std::string> refused_command = {"agent"};
  for (const std::string& arg : agent_args(wrong_tokens)) refused_command.push_back(arg);
  CommandResult refused = RunStrata(refused_command);
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_THAT(refused.err, HasSubstr("join token"));

  UpProcess agent;
  ASSERT_TRUE(agent.StartAgent(agent_args(join_tokens))) << agent.output();
  auto client = ClientFor(up_);
  // A pod bound to the agent's node runs there, and its log stays on the agent's machine.
  auto pod = client->Call(
      "POST", "/api/v1/namespaces/default/pods",
      R"({"apiVersion": "strata.dev/v1alpha1", "kind": "Pod", "metadata": {"name": "hello"},
          "spec": {"nodeName": "agent-1", "assignedGpus": [{"index": 0}],
                   "template": {"command": ["sh", "-c", "echo hello from agent-1"]}}})",
      "application/json");
  ASSERT_TRUE(pod) << pod.error().ToString();
  Json done = WaitForPod(*client, "hello", "Succeeded");
  EXPECT_EQ(done.value(Json::json_pointer("/status/phase"), std::string()), "Succeeded")
      << done.dump();
  CommandResult logs = Cli({"logs", "pod", "hello"});
  EXPECT_EQ(logs.exit_code, 1);
  EXPECT_THAT(logs.err, HasSubstr("runs on node \"agent-1\""));
  std::string log_file =
      data_.File("agent/pods/" + done["metadata"].value("uid", std::string()) + "/logs/main.log");
  EXPECT_EQ(node::testing::ReadFileOrEmpty(log_file), "hello from agent-1\n");

  // The local node is full, so a job lands on the agent; when the agent's heartbeats stop, the
  // node is lost, the pod fails and the group restarts on the node freed meanwhile. The lost
  // node's worker is stopped by its supervisor (fencing) before its replacement starts.
  ASSERT_TRUE(client->Call(
      "POST", "/api/v1/namespaces/default/pods",
      R"({"apiVersion": "strata.dev/v1alpha1", "kind": "Pod", "metadata": {"name": "blocker"},
          "spec": {"nodeName": "sim-node-0", "resources": {"gpu": 8},
                   "assignedGpus": [{"index": 0}, {"index": 1}, {"index": 2}, {"index": 3},
                                    {"index": 4}, {"index": 5}, {"index": 6}, {"index": 7}],
                   "template": {"command": ["sleep", "600"]}}})",
      "application/json"));
  ASSERT_TRUE(client->Call("POST", "/apis/strata.dev/v1alpha1/namespaces/default/jobs",
                           R"({"apiVersion": "strata.dev/v1alpha1", "kind": "Job",
          "metadata": {"name": "train"},
          "spec": {"replicas": 1, "maxRestarts": 2, "resources": {"gpu": 8},
                   "template": {"command": ["sleep", "600"]}}})",
                           "application/json"));
  Json on_agent = WaitForPod(*client, "train-worker-0", "Running", "agent-1");
  ASSERT_EQ(on_agent.value(Json::json_pointer("/spec/nodeName"), std::string()), "agent-1")
      << on_agent.dump();
  // Its heartbeats renew its node's Lease, which the node controller reads.
  Result<Json> lease = client->Get(api::NodeLeasePath("agent-1"));
  ASSERT_TRUE(lease) << lease.error().ToString();
  EXPECT_EQ(lease->value(Json::json_pointer("/spec/holderIdentity"), std::string()), "agent-1");
  Json state = Json::parse(
      node::testing::ReadFileOrEmpty(data_.File(
          "agent/pods/" + on_agent["metadata"].value("uid", std::string()) + "/state.json")),
      nullptr, false);
  ASSERT_TRUE(state.is_object()) << "the agent's record of the pod";
  const int worker = state["processes"][0].value("pid", 0);
  ASSERT_TRUE(node::testing::ProcessExists(worker));
  agent.Kill();
  ASSERT_TRUE(client->Call("DELETE", "/api/v1/namespaces/default/pods/blocker"));
  Json moved = WaitForPod(*client, "train-worker-0", "Running", "sim-node-0");
  EXPECT_EQ(moved.value(Json::json_pointer("/spec/nodeName"), std::string()), "sim-node-0")
      << moved.dump();
  EXPECT_FALSE(node::testing::ProcessExists(worker))
      << "the lost node's worker runs beside its replacement";
  CommandResult described = Cli({"describe", "job", "train"});
  EXPECT_THAT(described.out, HasSubstr("Restarts:         1 of at most 2"));

  // Whoever holds the join token cannot take the node over: it has joined already.
  std::vector<std::string> usurper = {"agent"};
  for (const std::string& arg : agent_args(join_tokens)) usurper.push_back(arg);
  usurper[std::find(usurper.begin(), usurper.end(), "--data-dir") - usurper.begin() + 1] =
      data_.File("usurper");
  CommandResult taken = RunStrata(usurper);
  EXPECT_EQ(taken.exit_code, 1);
  EXPECT_THAT(taken.err, HasSubstr("node \"agent-1\" has joined already"));
  // The lost agent itself comes back with the credential it kept (its own to read only).
  struct stat kept {};
  ASSERT_EQ(stat(data_.File("agent/node-credential").c_str(), &kept), 0);
  EXPECT_EQ(kept.st_mode & 0777, 0600);
  UpProcess back;
  EXPECT_TRUE(back.StartAgent(agent_args(join_tokens))) << back.output();
}

}  // namespace
}  // namespace strata::platform_test
