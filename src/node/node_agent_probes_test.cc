// The node agent running pods' probes against real processes: a replica whose HTTP server
// starts answering 500 is killed by its liveness probe and reported Failed (Unhealthy), which
// its Service replaces; a replica is Ready only while its readiness probe passes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <thread>

#include "api/encode.h"
#include "api/event.h"
#include "api/manifest.h"
#include "api/pod_contract.h"
#include "cluster/indexes.h"
#include "node/agent_test_options.h"
#include "node/node_agent.h"
#include "node/process_runtime.h"
#include "node/test_support.h"

namespace strata::node {
namespace {

using ::testing::HasSubstr;
using testing::TempDir;

// An HTTP server on $PORT (its last argument) that answers GET with 200, or with 500 once the
// file named by its first argument exists.
constexpr const char* kServer = R"(import http.server, os, sys
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(500 if os.path.exists(sys.argv[1]) else 200)
        self.end_headers()
        self.wfile.write(b"ok")
    def log_message(self, *args):
        pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[2])), Handler).serve_forever()
)";

class NodeAgentProbesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (system("python3 -c 'import http.server' 2>/dev/null") != 0) {
      GTEST_SKIP() << "python3 is not installed";
    }
    store_ = store::NewMemoryStore(store::StoreOptions{.clock = &clock_});
    ProcessRuntime::Options options;
    options.data_dir = data_.path();
    Result<std::unique_ptr<ProcessRuntime>> runtime = ProcessRuntime::Create(options);
    ASSERT_TRUE(runtime.has_value()) << runtime.error().ToString();
    runtime_ = std::move(*runtime);
    NodeAgentOptions agent_options = testing::TestAgentOptions(data_.path());
    cache_ = std::make_unique<cluster::Cache>(*store_, cluster::NodeAgentCacheOptions());
    agent_ = std::make_unique<NodeAgent>(*store_, *cache_, *runtime_, clock_, agent_options);
    std::ofstream(data_.File("server.py")) << kServer;
  }

  // A pod's supervisor outlives its agent by design: stop what the test left running.
  void TearDown() override {
    if (agent_ != nullptr) agent_->StopEverything();
  }

  // Replica 0 of Service "chat" running the test's server, failing once `flag` exists.
  void CreateReplica(const std::string& name, const std::string& flag,
                     const api::ProcessTemplate& probes) {
    api::Pod pod;
    pod.metadata.name = name;
    pod.metadata.namespace_name = "default";
    pod.spec.node_name = "node-a";
    pod.spec.owner = api::PodOwner{"Service", "chat", 0, 0};
    pod.metadata.annotations[api::kServedModelAnnotation] = "chat";
    pod.metadata.annotations[api::kGroupSizeAnnotation] = "1";
    pod.spec.template_ = probes;
    pod.spec.template_.command = {"python3", data_.File("server.py"), flag, "$(PORT)"};
    pod.spec.template_.security_context.run_as_user = geteuid();
    store::Object object;
    object.key = {"Pod", "default", name};
    object.body = api::EncodeObject(api::Object(pod));
    ASSERT_TRUE(store_->Create(object).has_value());
  }

  api::Pod Get(const std::string& name) {
    Result<store::Object> raw = store_->Get({"Pod", "default", name});
    if (!raw) return {};
    Result<api::Object> decoded = api::DecodeObject(raw->body);
    return decoded ? *decoded->As<api::Pod>() : api::Pod{};
  }

  // Runs passes a second of the agent's clock apart until `done` holds of the pod, for at most
  // 30 s of real time (attempts run on threads of their own, so a pass may not see one end).
  api::Pod RunUntil(const std::string& name, const std::function<bool(const api::Pod&)>& done) {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < give_up) {
      Status pass = agent_->RunOnce();
      EXPECT_TRUE(pass.ok()) << pass.ToString();
      api::Pod pod = Get(name);
      if (done(pod)) return pod;
      clock_.Advance(std::chrono::seconds(1));
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ADD_FAILURE() << "pod " << name << " never got there";
    return Get(name);
  }

  std::vector<api::Event> Events() {
    std::vector<api::Event> out;
    Result<store::ListResult> listed = store_->List(store::Selection{"Event", std::nullopt, {}});
    if (!listed) return out;
    for (const store::Object& raw : listed->items) {
      Result<api::Object> decoded = api::DecodeObject(raw.body);
      if (decoded && decoded->As<api::Event>() != nullptr)
        out.push_back(*decoded->As<api::Event>());
    }
    return out;
  }

  bool HasEvent(const std::string& reason, const std::string& message) {
    for (const api::Event& event : Events()) {
      if (event.reason == reason && event.message == message) return true;
    }
    return false;
  }

  static bool Ready(const api::Pod& pod) {
    return api::PodAnnotation(pod, api::kReadyAtAnnotation) != nullptr;
  }

  FakeClock clock_;
  TempDir data_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<ProcessRuntime> runtime_;
  std::unique_ptr<cluster::Cache> cache_;
  std::unique_ptr<NodeAgent> agent_;
};

api::Probe Probe(api::ProbeAction action, int64_t failures) {
  api::Probe probe;
  probe.action = action;
  probe.period_seconds = 1;
  probe.failure_threshold = failures;
  return probe;
}

// The other probes wait until the server listens on its port (the agent's clock runs faster
// than Python starts).
api::Probe ListeningOnItsPort() { return Probe(api::ProbeAction::kTcpSocket, 100000); }

TEST_F(NodeAgentProbesTest, ALivenessProbeThatFailsKillsTheReplicaAndSaysWhy) {
  api::ProcessTemplate probes;
  probes.startup_probe = ListeningOnItsPort();
  probes.liveness_probe = Probe(api::ProbeAction::kHttpGet, 2);
  probes.liveness_probe->path = "/health";
  probes.liveness_probe->termination_grace_period_seconds = 1;
  const std::string flag = data_.File("broken");
  CreateReplica("chat-0", flag, probes);
  // Serving: its liveness probe passes, and it stays up (and, without a readiness probe of its
  // own, the built-in GET /health makes it Ready).
  api::Pod pod = RunUntil("chat-0", Ready);
  EXPECT_EQ(pod.status.phase, api::PodPhase::kRunning);
  std::ofstream(flag) << "500 from now on";
  pod = RunUntil("chat-0", [](const api::Pod& p) { return api::PodTerminal(p); });
  EXPECT_EQ(pod.status.phase, api::PodPhase::kFailed);
  EXPECT_EQ(pod.status.reason, "Unhealthy");
  EXPECT_THAT(pod.status.message,
              HasSubstr("Liveness probe failed: HTTP probe failed with statuscode: 500; main was "
                        "killed by signal 15 (SIGTERM)"));
  EXPECT_TRUE(
      HasEvent("Unhealthy", "Liveness probe failed: HTTP probe failed with statuscode: 500"));
  EXPECT_TRUE(HasEvent("Killing", "Container main failed liveness probe, will be restarted"));
  Result<PodStatus> status = runtime_->GetStatus(pod.metadata.uid);
  EXPECT_TRUE(!status || !status->Running()) << "its processes are gone";
}

TEST_F(NodeAgentProbesTest, AReplicaIsReadyOnlyWhileItsReadinessProbePasses) {
  api::ProcessTemplate probes;
  const std::string warm = data_.File("warm");
  probes.startup_probe = ListeningOnItsPort();
  probes.readiness_probe = Probe(api::ProbeAction::kExec, 1);
  probes.readiness_probe->command = {"test", "-e", warm};
  // The engine's own port, open all along: the TCP liveness probe passes.
  probes.liveness_probe = Probe(api::ProbeAction::kTcpSocket, 1);
  CreateReplica("chat-0", data_.File("never"), probes);
  // Serving on its port, but not warm: its readiness probe fails (and so would the built-in
  // /health check pass, which the probe replaces).
  const std::string not_warm =
      "Readiness probe failed: command \"test -e " + warm + "\" exited with code 1";
  api::Pod pod =
      RunUntil("chat-0", [&](const api::Pod&) { return HasEvent("Unhealthy", not_warm); });
  EXPECT_EQ(pod.status.phase, api::PodPhase::kRunning);
  EXPECT_FALSE(Ready(pod));
  std::ofstream(warm) << "";
  pod = RunUntil("chat-0", Ready);
  ASSERT_TRUE(Ready(pod));
  ASSERT_EQ(unlink(warm.c_str()), 0);
  pod = RunUntil("chat-0", [](const api::Pod& p) { return !Ready(p); });
  EXPECT_EQ(pod.status.phase, api::PodPhase::kRunning) << "a failing readiness probe kills nothing";
  for (const api::Event& event : Events()) {
    EXPECT_THAT(event.message, ::testing::Not(HasSubstr("Liveness"))) << event.message;
  }
}

}  // namespace
}  // namespace strata::node
