// The node agent as a virtual kubelet of pods strata did not make (api::kForeignPodAnnotation,
// as kubestore's foreign pod mapping reads them), against real processes: each runs as one
// process named after its container, at an IP of its own from the pod CIDR (two pods listen on
// one port), probed there; its restartPolicy restarts it in place after the kubelet's back-off;
// one that cannot run fails saying why; one deleted is stopped, then deleted for good; its
// nvidia.com/gpu is given at admission as a device plugin gives it, or it is rejected.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

#include "api/encode.h"
#include "api/event.h"
#include "api/manifest.h"
#include "api/pod_contract.h"
#include "cluster/indexes.h"
#include "node/agent_test_options.h"
#include "node/foreign_pod.h"
#include "node/node_agent.h"
#include "node/process_runtime.h"
#include "node/test_support.h"

namespace strata::node {
namespace {

using ::testing::HasSubstr;
using testing::TempDir;

// An HTTP server at $POD_IP on the port of its first argument, answering GET with 200.
constexpr const char* kServer = R"(import http.server, os, sys
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.end_headers()
        self.wfile.write(os.environ["POD_IP"].encode())
    def log_message(self, *args):
        pass
print("serving at", os.environ["POD_IP"], flush=True)
http.server.HTTPServer((os.environ["POD_IP"], int(sys.argv[1])), Handler).serve_forever()
)";

class NodeAgentForeignTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = store::NewMemoryStore(store::StoreOptions{.clock = &clock_});
    NewAgent();
    std::ofstream(data_.File("server.py")) << kServer;
  }

  // A new runtime and agent over the same data dir, as after a restart of the agent's process.
  void NewAgent() {
    agent_.reset();
    runtime_.reset();
    ProcessRuntime::Options options;
    options.data_dir = data_.path();
    Result<std::unique_ptr<ProcessRuntime>> runtime = ProcessRuntime::Create(options);
    ASSERT_TRUE(runtime.has_value()) << runtime.error().ToString();
    runtime_ = std::move(*runtime);
    NodeAgentOptions agent_options = testing::TestAgentOptions(data_.path());
    agent_options.pod_cidr = "127.0.101.0/24";
    cache_ = std::make_unique<cluster::Cache>(*store_, cluster::NodeAgentCacheOptions());
    agent_ = std::make_unique<NodeAgent>(*store_, *cache_, *runtime_, clock_, agent_options);
  }

  void TearDown() override {
    if (agent_ != nullptr) agent_->StopEverything();
  }

  // A pod of another controller's, bound to node-a, as the virtual kubelet's store reads it:
  // container "engine" running `command`, POD_IP from status.podIP.
  api::Pod Foreign(const std::string& name, std::vector<std::string> command,
                   const std::string& restart_policy = "Always") {
    api::Pod pod;
    pod.metadata.name = name;
    pod.metadata.namespace_name = "default";
    pod.metadata.annotations[api::kForeignPodAnnotation] = "engine";
    pod.spec.node_name = "node-a";
    pod.spec.restart_policy = restart_policy;
    pod.spec.template_.command = std::move(command);
    api::EnvVarSource pod_ip;
    pod_ip.kind = api::EnvSourceKind::kField;
    pod_ip.path = "status.podIP";
    pod.spec.template_.env.push_back({"POD_IP", "", pod_ip});
    pod.spec.template_.security_context.run_as_user = geteuid();
    return pod;
  }

  void Create(const api::Pod& pod) {
    store::Object object;
    object.key = {"Pod", "default", pod.metadata.name};
    object.body = api::EncodeObject(api::Object(pod));
    Result<store::Object> created = store_->Create(object);
    ASSERT_TRUE(created.has_value()) << created.error().ToString();
  }

  std::optional<api::Pod> Get(const std::string& name) {
    Result<store::Object> raw = store_->Get({"Pod", "default", name});
    if (!raw) return std::nullopt;
    Result<api::Object> decoded = api::DecodeObject(raw->body);
    if (!decoded) return std::nullopt;
    api::Pod pod = *decoded->As<api::Pod>();
    pod.metadata.uid = raw->uid;
    return pod;
  }

  // Runs passes a second of the agent's clock apart until `done` holds of the pod (nullopt:
  // deleted), for at most 30 s of real time.
  std::optional<api::Pod> RunUntil(const std::string& name,
                                   const std::function<bool(const std::optional<api::Pod>&)>& done,
                                   Duration step = std::chrono::seconds(1)) {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < give_up) {
      Status pass = agent_->RunOnce();
      EXPECT_TRUE(pass.ok()) << pass.ToString();
      std::optional<api::Pod> pod = Get(name);
      if (done(pod)) return pod;
      clock_.Advance(step);
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ADD_FAILURE() << "pod " << name << " never got there";
    return Get(name);
  }

  bool HasEvent(const std::string& reason, const std::string& part) {
    Result<store::ListResult> listed = store_->List(store::Selection{"Event", std::nullopt, {}});
    if (!listed) return false;
    for (const store::Object& raw : listed->items) {
      Result<api::Object> decoded = api::DecodeObject(raw.body);
      const api::Event* event = decoded ? decoded->As<api::Event>() : nullptr;
      if (event != nullptr && event->reason == reason &&
          event->message.find(part) != std::string::npos) {
        return true;
      }
    }
    return false;
  }

  // Node node-a with 4 GPUs "GPU-0".."GPU-3" in two NVLink islands ({0,1} and {2,3}).
  void CreateNode() {
    api::Node node;
    node.metadata.name = "node-a";
    for (int64_t i = 0; i < 4; ++i) {
      api::NodeGpu gpu;
      gpu.index = i;
      gpu.uuid = "GPU-" + std::to_string(i);
      gpu.model = "H100-80GB";
      gpu.nvlink_island = i / 2;
      node.status.gpus.push_back(gpu);
    }
    store::Object object;
    object.key = {"Node", "", "node-a"};
    object.body = api::EncodeObject(api::Object(node));
    ASSERT_TRUE(store_->Create(object).has_value());
  }

  // A foreign pod asking for `gpus` nvidia.com/gpu whose process writes the GPUs it sees
  // (CUDA_VISIBLE_DEVICES NVIDIA_VISIBLE_DEVICES) to the file `name` in the data dir.
  api::Pod GpuPod(const std::string& name, int64_t gpus) {
    api::Pod pod = Foreign(name, {"sh", "-c",
                                  "echo \"$CUDA_VISIBLE_DEVICES $NVIDIA_VISIBLE_DEVICES\" > " +
                                      data_.File(name) + ".tmp && mv " + data_.File(name) +
                                      ".tmp " + data_.File(name) + " && exec sleep 600"});
    pod.spec.resources.gpu = Quantity::FromUnits(gpus);
    return pod;
  }

  // What the process of GpuPod `name` wrote, once it has.
  std::string SeenGpus(const std::string& name) {
    std::string text;
    for (int i = 0; i < 100 && text.empty(); ++i) {
      std::ifstream file(data_.File(name));
      std::getline(file, text);
      if (text.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return text;
  }

  static bool Running(const std::optional<api::Pod>& pod) {
    return pod && pod->status.phase == api::PodPhase::kRunning;
  }
  static bool Failed(const std::optional<api::Pod>& pod) {
    return pod && pod->status.phase == api::PodPhase::kFailed;
  }

  static bool Ready(const std::optional<api::Pod>& pod) {
    return pod && pod->status.phase == api::PodPhase::kRunning &&
           api::PodAnnotation(*pod, api::kReadyAtAnnotation) != nullptr;
  }

  FakeClock clock_;
  TempDir data_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<ProcessRuntime> runtime_;
  std::unique_ptr<cluster::Cache> cache_;
  std::unique_ptr<NodeAgent> agent_;
};

TEST(ForeignPodTest, TheKubeletsBackOffDoublesFromTenSecondsToFiveMinutes) {
  EXPECT_EQ(RestartBackoff(0), std::chrono::seconds(10));
  EXPECT_EQ(RestartBackoff(1), std::chrono::seconds(20));
  EXPECT_EQ(RestartBackoff(4), std::chrono::seconds(160));
  EXPECT_EQ(RestartBackoff(5), std::chrono::seconds(300));
  EXPECT_EQ(RestartBackoff(1000), std::chrono::seconds(300));
}

TEST(ForeignPodTest, OnlyAForeignPodRestartsInPlaceAndOnlyAsItsPolicySays) {
  api::Pod ours;
  EXPECT_FALSE(RestartsInPlace(ours, false)) << "strata's workloads replace their pods";
  EXPECT_EQ(ContainerNameOf(ours), "main");
  api::Pod theirs;
  theirs.metadata.annotations[api::kForeignPodAnnotation] = "web";
  EXPECT_EQ(ContainerNameOf(theirs), "web");
  EXPECT_TRUE(RestartsInPlace(theirs, true)) << "Always, the default";
  theirs.spec.restart_policy = "OnFailure";
  EXPECT_TRUE(RestartsInPlace(theirs, false));
  EXPECT_FALSE(RestartsInPlace(theirs, true));
  theirs.spec.restart_policy = "Never";
  EXPECT_FALSE(RestartsInPlace(theirs, false));
  theirs.spec.restart_policy = "Always";
  theirs.metadata.annotations[api::kStopRequestedAnnotation] = "Deleted";
  EXPECT_FALSE(RestartsInPlace(theirs, false)) << "a pod asked to stop stays stopped";
  EXPECT_FALSE(ReservedEnvNames(theirs)("RANK"));
  EXPECT_TRUE(ReservedEnvNames(ours)("RANK"));
}

TEST_F(NodeAgentForeignTest, EachPodRunsItsContainerAtAnIpOfItsOwn) {
  if (system("python3 -c 'import http.server' 2>/dev/null") != 0) {
    GTEST_SKIP() << "python3 is not installed";
  }
  // Two replicas of one Deployment: the same command, the same port.
  for (const char* name : {"web-1", "web-2"}) {
    api::Pod pod = Foreign(name, {"python3", data_.File("server.py"), "8000"});
    api::Probe probe;
    probe.port = 8000;
    probe.period_seconds = 1;
    pod.spec.template_.readiness_probe = probe;
    Create(pod);
  }
  std::optional<api::Pod> first = RunUntil("web-1", Ready);
  std::optional<api::Pod> second = RunUntil("web-2", Ready);
  ASSERT_TRUE(first && second);
  EXPECT_THAT(first->status.pod_ip, ::testing::StartsWith("127.0.101."));
  EXPECT_THAT(second->status.pod_ip, ::testing::StartsWith("127.0.101."));
  EXPECT_NE(first->status.pod_ip, second->status.pod_ip)
      << "two pods listening on one port need addresses of their own";
  EXPECT_NE(api::PodAnnotation(*first, api::kStartedAtAnnotation), nullptr);
  // The process, and its log, are the container's: `kubectl logs` names it.
  const std::filesystem::path log =
      std::filesystem::path(data_.path()) / "pods" / first->metadata.uid / "logs" / "engine.log";
  std::string text;
  for (int i = 0; i < 50 && text.find("serving at") == std::string::npos; ++i) {
    std::ifstream file(log);
    text.assign(std::istreambuf_iterator<char>(file), {});
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_THAT(text, HasSubstr("serving at " + first->status.pod_ip));
}

TEST_F(NodeAgentForeignTest, APodThatCannotRunFailsSayingWhy) {
  api::Pod pod = Foreign("no-command", {"false"});  // as the mapping leaves it
  const std::string why = "container \"engine\" has no command: ...";
  pod.metadata.annotations[api::kCannotRunAnnotation] = why;
  Create(pod);
  std::optional<api::Pod> failed = RunUntil(
      "no-command", [](const auto& p) { return p && p->status.phase == api::PodPhase::kFailed; });
  ASSERT_TRUE(failed);
  EXPECT_EQ(failed->status.reason, api::kCannotRunReason);
  EXPECT_EQ(failed->status.message, why);
  EXPECT_TRUE(HasEvent("Failed", "container \"engine\" has no command"));
}

TEST_F(NodeAgentForeignTest, RestartPolicyAlwaysRestartsTheContainerInPlaceAfterABackOff) {
  Create(Foreign("crashing", {"sh", "-c", "exit 3"}));
  std::optional<api::Pod> backing_off = RunUntil(
      "crashing", [](const auto& p) { return p && p->status.reason == "CrashLoopBackOff"; });
  ASSERT_TRUE(backing_off);
  EXPECT_EQ(backing_off->status.phase, api::PodPhase::kRunning) << "the pod stays Running";
  EXPECT_THAT(backing_off->status.message, HasSubstr("back-off 10s restarting container engine"));
  EXPECT_THAT(backing_off->status.message, HasSubstr("exited with code 3"));
  EXPECT_EQ(backing_off->status.restart_count, 0);
  EXPECT_TRUE(HasEvent("BackOff", "restarting container engine"));
  // Within the back-off nothing starts; after it, the container starts again.
  std::optional<api::Pod> restarted =
      RunUntil("crashing", [](const auto& p) { return p && p->status.restart_count >= 1; });
  ASSERT_TRUE(restarted);
  EXPECT_EQ(restarted->status.phase, api::PodPhase::kRunning);
  // The second back-off is twice the first.
  std::optional<api::Pod> again = RunUntil("crashing", [](const auto& p) {
    return p && p->status.restart_count == 1 && p->status.reason == "CrashLoopBackOff";
  });
  ASSERT_TRUE(again);
  EXPECT_THAT(again->status.message, HasSubstr("back-off 20s"));
}

TEST_F(NodeAgentForeignTest, RestartPolicyOnFailureLetsASuccessEndThePod) {
  Create(Foreign("batch", {"sh", "-c", "exit 0"}, "OnFailure"));
  std::optional<api::Pod> done = RunUntil(
      "batch", [](const auto& p) { return p && p->status.phase == api::PodPhase::kSucceeded; });
  ASSERT_TRUE(done);
  EXPECT_EQ(done->status.restart_count, 0);
  Create(Foreign("once", {"sh", "-c", "exit 2"}, "Never"));
  std::optional<api::Pod> failed = RunUntil(
      "once", [](const auto& p) { return p && p->status.phase == api::PodPhase::kFailed; });
  ASSERT_TRUE(failed);
  EXPECT_EQ(failed->status.exit_code, 2);
}

TEST_F(NodeAgentForeignTest, ItsEnvironmentIsItsOwnEvenWhereStrataReservesANameForItsPods) {
  // An operator's training pod sets torchrun's variables itself.
  api::Pod pod = Foreign("worker", {"sh", "-c", "test \"$RANK\" = 3"}, "Never");
  pod.spec.template_.env.push_back({"RANK", "3", std::nullopt});
  Create(pod);
  std::optional<api::Pod> done =
      RunUntil("worker", [](const auto& p) { return p && api::PodTerminal(*p); });
  ASSERT_TRUE(done);
  EXPECT_EQ(done->status.phase, api::PodPhase::kSucceeded) << done->status.message;
}

TEST_F(NodeAgentForeignTest, ADeletedPodIsStoppedThenDeletedForGood) {
  Create(Foreign("leaving", {"sleep", "600"}));
  std::optional<api::Pod> running = RunUntil(
      "leaving", [](const auto& p) { return p && p->status.phase == api::PodPhase::kRunning; });
  ASSERT_TRUE(running);
  // What the store reads once the pod's owner deleted it with a grace period.
  Result<store::Object> raw = store_->Get({"Pod", "default", "leaving"});
  ASSERT_TRUE(raw.has_value());
  api::Pod deleting = *running;
  deleting.metadata.annotations[api::kForeignDeletingAnnotation] = "2";
  deleting.metadata.annotations[api::kStopRequestedAnnotation] = "Deleted";
  raw->body = api::EncodeObject(api::Object(deleting));
  ASSERT_TRUE(store_->Update(*raw).has_value());
  std::optional<api::Pod> gone = RunUntil("leaving", [](const auto& p) { return !p; });
  EXPECT_FALSE(gone);
  Result<PodStatus> status = runtime_->GetStatus(running->metadata.uid);
  EXPECT_FALSE(status.has_value()) << "its processes are stopped and forgotten";
}

TEST_F(NodeAgentForeignTest, PodsGetDisjointGpusAndOneThatFindsNoneFreeIsRejectedAsTheKubeletDoes) {
  CreateNode();
  Create(GpuPod("gpu-1", 2));
  Create(GpuPod("gpu-2", 2));
  ASSERT_TRUE(RunUntil("gpu-1", Running));
  std::optional<api::Pod> second = RunUntil("gpu-2", Running);
  ASSERT_TRUE(second);
  // Each in an NVLink island of its own, as the device plugin's processes see them.
  EXPECT_EQ(SeenGpus("gpu-1"), "0,1 GPU-0,GPU-1");
  EXPECT_EQ(SeenGpus("gpu-2"), "2,3 GPU-2,GPU-3");
  const std::string* reported = api::PodAnnotation(*second, api::kAllocatedGpusAnnotation);
  ASSERT_NE(reported, nullptr);
  EXPECT_EQ(
      *reported,
      R"([{"health":"Healthy","resourceID":"GPU-2"},{"health":"Healthy","resourceID":"GPU-3"}])");

  Create(GpuPod("gpu-3", 2));
  std::optional<api::Pod> rejected = RunUntil("gpu-3", Failed);
  ASSERT_TRUE(rejected);
  EXPECT_EQ(rejected->status.reason, "UnexpectedAdmissionError");
  EXPECT_EQ(rejected->status.message,
            "Pod was rejected: Allocate failed due to requested number of devices unavailable "
            "for nvidia.com/gpu. Requested: 2, Available: 0, which is unexpected");
  EXPECT_TRUE(HasEvent("UnexpectedAdmissionError", "Requested: 2, Available: 0"));
  EXPECT_FALSE(runtime_->GetStatus(rejected->metadata.uid).has_value()) << "nothing of it ran";

  // A pod that leaves frees its GPUs for the next.
  ASSERT_TRUE(store_->Delete({"Pod", "default", "gpu-1"}).has_value());
  Create(GpuPod("gpu-4", 2));
  ASSERT_TRUE(RunUntil("gpu-4", Running));
  EXPECT_EQ(SeenGpus("gpu-4"), "0,1 GPU-0,GPU-1");
}

TEST_F(NodeAgentForeignTest, APodThatEndsFreesItsGpus) {
  CreateNode();
  api::Pod batch = GpuPod("batch", 4);
  batch.spec.template_.command = {"sh", "-c", "test \"$CUDA_VISIBLE_DEVICES\" = 0,1,2,3"};
  batch.spec.restart_policy = "Never";
  Create(batch);
  std::optional<api::Pod> done =
      RunUntil("batch", [](const auto& p) { return p && api::PodTerminal(*p); });
  ASSERT_TRUE(done);
  EXPECT_EQ(done->status.phase, api::PodPhase::kSucceeded) << done->status.message;
  Create(GpuPod("next", 4));
  ASSERT_TRUE(RunUntil("next", Running));
  EXPECT_EQ(SeenGpus("next"), "0,1,2,3 GPU-0,GPU-1,GPU-2,GPU-3");
}

TEST_F(NodeAgentForeignTest, TheAgentsGpusOverrideThoseAPodNamesItself) {
  CreateNode();
  api::Pod own = GpuPod("own", 1);
  own.spec.template_.env.push_back({"CUDA_VISIBLE_DEVICES", "3", std::nullopt});
  own.spec.template_.env.push_back({"NVIDIA_VISIBLE_DEVICES", "all", std::nullopt});
  Create(own);
  ASSERT_TRUE(RunUntil("own", Running));
  EXPECT_EQ(SeenGpus("own"), "0 GPU-0");
  EXPECT_TRUE(HasEvent("GpuEnvOverridden", "CUDA_VISIBLE_DEVICES=\"3\""));
  // A pod asking for none sees none, whatever it names.
  api::Pod none = GpuPod("none", 0);
  none.spec.template_.env.push_back({"CUDA_VISIBLE_DEVICES", "0", std::nullopt});
  Create(none);
  std::optional<api::Pod> running = RunUntil("none", Running);
  ASSERT_TRUE(running);
  EXPECT_EQ(SeenGpus("none"), " void");
  EXPECT_EQ(api::PodAnnotation(*running, api::kAllocatedGpusAnnotation), nullptr);
}

TEST_F(NodeAgentForeignTest, NeitherStrataPodsGpusNorAShareOfAGpuAreForeignPodsToTake) {
  CreateNode();
  // strata's own pod, given GPU 0 by its control plane.
  api::Pod ours = Foreign("ours", {"sleep", "600"});
  ours.metadata.annotations.erase(api::kForeignPodAnnotation);
  ours.spec.template_.env.clear();
  ours.spec.assigned_gpus.push_back(api::AssignedGpu{.index = 0, .uuid = "GPU-0"});
  Create(ours);
  Create(GpuPod("four", 4));
  std::optional<api::Pod> rejected = RunUntil("four", Failed);
  ASSERT_TRUE(rejected);
  EXPECT_THAT(rejected->status.message, HasSubstr("Requested: 4, Available: 3"));
  api::Pod shared = GpuPod("shared", 1);
  shared.metadata.annotations[api::kGpuShareRequestAnnotation] = "nvidia.com/gpumem=4000";
  Create(shared);
  std::optional<api::Pod> refused = RunUntil("shared", Failed);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status.reason, "GpuShareUnsupported");
  EXPECT_THAT(refused->status.message, HasSubstr("nvidia.com/gpumem=4000"));
}

TEST_F(NodeAgentForeignTest, ARestartedAgentGivesARunningPodsGpusToNoOtherPod) {
  CreateNode();
  Create(GpuPod("first", 2));
  std::optional<api::Pod> first = RunUntil("first", Running);
  ASSERT_TRUE(first);
  EXPECT_EQ(SeenGpus("first"), "0,1 GPU-0,GPU-1");
  // The agent died before its report reached the pod: only the processes' state file knows.
  Result<store::Object> raw = store_->Get({"Pod", "default", "first"});
  ASSERT_TRUE(raw.has_value());
  api::Pod unreported = *first;
  unreported.metadata.annotations.erase(api::kAllocatedGpusAnnotation);
  raw->body = api::EncodeObject(api::Object(unreported));
  ASSERT_TRUE(store_->Update(*raw).has_value());

  NewAgent();
  Create(GpuPod("second", 2));
  ASSERT_TRUE(RunUntil("second", Running));
  EXPECT_EQ(SeenGpus("second"), "2,3 GPU-2,GPU-3");
  std::optional<api::Pod> adopted = Get("first");
  ASSERT_TRUE(adopted);
  EXPECT_EQ(adopted->status.phase, api::PodPhase::kRunning);
  const std::string* reported = api::PodAnnotation(*adopted, api::kAllocatedGpusAnnotation);
  ASSERT_NE(reported, nullptr) << "reported again by the new agent";
  EXPECT_THAT(*reported, HasSubstr("GPU-1"));
}

}  // namespace
}  // namespace strata::node
