#include "node/replica_launch.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace strata::node {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

ReplicaLaunchInput Input(std::vector<std::string> command, std::vector<std::string> args = {}) {
  ReplicaLaunchInput input;
  input.replica.service_name = "chat";
  input.replica.served_model = "llama-8b";
  input.command = std::move(command);
  input.args = std::move(args);
  input.port = 8123;
  input.node_address = "127.0.0.1";
  return input;
}

ReplicaLaunch Launch(const ReplicaLaunchInput& input) {
  Result<ReplicaLaunch> launch = BuildReplicaLaunch(input, {{"PATH", "/usr/bin"}});
  EXPECT_TRUE(launch.has_value()) << launch.error().ToString();
  return launch.value_or(ReplicaLaunch{});
}

std::string LaunchError(const ReplicaLaunchInput& input) {
  Result<ReplicaLaunch> launch = BuildReplicaLaunch(input, {});
  EXPECT_FALSE(launch.has_value());
  return launch ? "" : launch.error().ToString();
}

TEST(ReplicaLaunchTest, SetsThePortAndTheMemoryShareAndAppendsThePortFlag) {
  ReplicaLaunchInput input = Input({"python3", "serve.py"}, {"--model", "m"});
  input.gpu_memory_fraction = 0.5;
  input.user_env = {{"HF_HOME", "/cache"}};
  ReplicaLaunch launch = Launch(input);
  EXPECT_THAT(launch.argv, ElementsAre("python3", "serve.py", "--model", "m", "--port", "8123"));
  EXPECT_EQ(launch.env["STRATA_PORT"], "8123");
  EXPECT_EQ(launch.env["PORT"], "8123");
  EXPECT_EQ(launch.env["STRATA_GPU_MEMORY_FRACTION"], "0.5");
  EXPECT_EQ(launch.env["HF_HOME"], "/cache");
  EXPECT_EQ(launch.env["PATH"], "/usr/bin");
  EXPECT_EQ(launch.env.count("LWS_GROUP_SIZE"), 0u) << "a one-pod replica is no group";
  EXPECT_TRUE(launch.replaced_engine.empty());
}

TEST(ReplicaLaunchTest, ALeaderWorkerSetsGroupOfOneStillGetsLwsEnvironment) {
  ReplicaLaunchInput input = Input({"python3", "serve.py"}, {});
  input.replica.leader_address = "10.0.0.7";
  input.replica.leader_worker_set = true;
  ReplicaLaunch launch = Launch(input);
  EXPECT_EQ(launch.env["LWS_LEADER_ADDRESS"], "10.0.0.7");
  EXPECT_EQ(launch.env["LWS_GROUP_SIZE"], "1");
  EXPECT_EQ(launch.env["LWS_WORKER_INDEX"], "0");
}

TEST(ReplicaLaunchTest, ExpandsReferencesAndKeepsAPortTheCommandAlreadyNames) {
  ReplicaLaunchInput input = Input({"server"}, {"--listen=0.0.0.0:$(STRATA_PORT)", "$(HF_HOME)"});
  input.user_env = {{"HF_HOME", "/cache"}};
  EXPECT_THAT(Launch(input).argv, ElementsAre("server", "--listen=0.0.0.0:8123", "/cache"));
  EXPECT_THAT(Launch(Input({"server", "--port", "9000"})).argv,
              ElementsAre("server", "--port", "9000"));
  EXPECT_THAT(Launch(Input({"server", "--port=9000"})).argv, ElementsAre("server", "--port=9000"));
  EXPECT_THAT(Launch(Input({"server", "-p", "$(PORT)"})).argv, ElementsAre("server", "-p", "8123"));
  // An escaped reference is text, not a use of the port.
  EXPECT_THAT(Launch(Input({"echo", "$$(PORT)"})).argv,
              ElementsAre("echo", "$(PORT)", "--port", "8123"));
}

TEST(ReplicaLaunchTest, GivesVllmItsShareOfTheGpuMemory) {
  ReplicaLaunchInput input = Input({"vllm", "serve", "meta-llama/Llama-3.1-8B"});
  input.gpu_memory_fraction = 0.5;
  EXPECT_THAT(Launch(input).argv, ElementsAre("vllm", "serve", "meta-llama/Llama-3.1-8B", "--port",
                                              "8123", "--gpu-memory-utilization=0.45"));
  input = Input({"/usr/bin/python3", "-m", "vllm.entrypoints.openai.api_server"},
                {"--port", "$(PORT)"});
  EXPECT_THAT(Launch(input).argv,
              ElementsAre("/usr/bin/python3", "-m", "vllm.entrypoints.openai.api_server", "--port",
                          "8123", "--gpu-memory-utilization=0.9"));
  input.args.push_back("--gpu-memory-utilization=0.3");
  EXPECT_EQ(Launch(input).argv.back(), "--gpu-memory-utilization=0.3");
}

TEST(ReplicaLaunchTest, AGroupGetsLeaderWorkerSetsEnvironment) {
  ReplicaLaunchInput input = Input({"sleep", "60"});
  input.replica.group_size = 3;
  input.replica.rank = 2;
  input.replica.leader_address = "10.0.0.7";
  ReplicaLaunch launch = Launch(input);
  EXPECT_EQ(launch.env["LWS_LEADER_ADDRESS"], "10.0.0.7");
  EXPECT_EQ(launch.env["LWS_GROUP_SIZE"], "3");
  EXPECT_EQ(launch.env["LWS_WORKER_INDEX"], "2");
}

TEST(ReplicaLaunchTest, RefusesReservedNamesAndAnEmptyCommand) {
  for (const char* name : {"LWS_GROUP_SIZE", "PORT", "STRATA_PORT", "CUDA_VISIBLE_DEVICES"}) {
    ReplicaLaunchInput input = Input({"server"});
    input.user_env = {{"A", "1"}, {name, "2"}};
    EXPECT_THAT(LaunchError(input),
                HasSubstr(std::string("spec.template.env[1].name \"") + name + "\" is reserved"));
  }
  EXPECT_THAT(LaunchError(Input({})), HasSubstr("spec.template.command"));
}

TEST(ReplicaLaunchTest, EngineSimStandsInForARealEngine) {
  ReplicaLaunchInput input = Input({"vllm", "serve", "meta-llama/Llama-3.1-8B"});
  input.engine_sim = EngineSimSubstitution{.strata_path = "/opt/strata",
                                           .startup_delay = std::chrono::milliseconds(2500),
                                           .profile = "8b-h100",
                                           .time_scale = 2};
  ReplicaLaunch launch = Launch(input);
  EXPECT_THAT(launch.argv, ElementsAre("/opt/strata", "engine-sim", "--model", "llama-8b", "--port",
                                       "8123", "--startup-delay", "2500ms", "--profile", "8b-h100",
                                       "--time-scale", "2"));
  EXPECT_EQ(launch.replaced_engine, "vllm");
  EXPECT_EQ(launch.env["STRATA_GPU_MEMORY_FRACTION"], "1.0");

  input = Input({"python", "-m", "huggingfaceserver", "--model_name=m"});
  input.engine_sim = EngineSimSubstitution();
  input.engine_sim->strata_path = "/opt/strata";
  input.node_address = "10.0.0.5";
  launch = Launch(input);
  EXPECT_EQ(launch.replaced_engine, "huggingfaceserver");
  EXPECT_THAT(launch.argv, ElementsAre("/opt/strata", "engine-sim", "--model", "llama-8b", "--port",
                                       "8123", "--startup-delay", "0ms", "--host", "0.0.0.0"));

  input.replica.served_model.clear();
  EXPECT_THAT(LaunchError(input), HasSubstr("metadata.annotations[strata.dev/served-model]"));
}

TEST(ReplicaLaunchTest, ATemplateRunningEngineSimRunsAsWritten) {
  ReplicaLaunchInput input = Input({"strata", "engine-sim", "--model", "m", "--kv-blocks", "64"});
  input.engine_sim = EngineSimSubstitution();
  input.engine_sim->strata_path = "/opt/strata";
  ReplicaLaunch launch = Launch(input);
  EXPECT_THAT(launch.argv, ElementsAre("/opt/strata", "engine-sim", "--model", "m", "--kv-blocks",
                                       "64", "--port", "8123"));
  EXPECT_TRUE(launch.replaced_engine.empty());
}

TEST(GpuMemoryFractionTest, FractionalMemoryWholeGpusAndShares) {
  api::Node node;
  node.status.gpus.resize(2);
  node.status.gpus[1].index = 1;
  node.status.gpus[1].memory = *Quantity::Parse("80Gi");
  api::AssignedGpu gpu;
  gpu.index = 1;
  EXPECT_EQ(GpuMemoryFraction({}, &node), 1.0);
  EXPECT_EQ(GpuMemoryFraction({gpu, gpu}, &node), 1.0);
  gpu.share = Quantity::FromMilli(250);
  EXPECT_EQ(GpuMemoryFraction({gpu}, &node), 0.25);
  gpu.memory = *Quantity::Parse("20Gi");
  EXPECT_EQ(GpuMemoryFraction({gpu}, &node), 0.25);
  gpu.memory = *Quantity::Parse("40Gi");
  EXPECT_EQ(GpuMemoryFraction({gpu}, &node), 0.5);
  EXPECT_EQ(GpuMemoryFraction({gpu}, nullptr), 0.25) << "without the node: the share";
  EXPECT_EQ(FormatFraction(1.0 / 3), "0.333");
  EXPECT_EQ(FormatFraction(1.0), "1.0");
  EXPECT_EQ(FormatFraction(0.25), "0.25");
}

TEST(ReplicaPodFromPodTest, ReadsTheGroupAndNamesWhatIsMissing) {
  api::Pod pod;
  pod.spec.owner = api::PodOwner{"Service", "chat", 3, 1};
  pod.metadata.annotations[api::kGroupSizeAnnotation] = "2";
  Result<api::ReplicaPod> replica = api::ReplicaPodFromPod(pod);
  ASSERT_FALSE(replica.has_value());
  EXPECT_THAT(replica.error().message(), HasSubstr("strata.dev/leader-address"));
  pod.metadata.annotations[api::kLeaderAddressAnnotation] = "10.0.0.1";
  pod.metadata.annotations[api::kServedModelAnnotation] = "llama";
  replica = api::ReplicaPodFromPod(pod);
  ASSERT_TRUE(replica.has_value()) << replica.error().ToString();
  EXPECT_EQ(replica->replica, 3);
  EXPECT_EQ(replica->rank, 1);
  EXPECT_EQ(replica->group_size, 2);
  EXPECT_EQ(replica->served_model, "llama");
  pod.spec.owner.rank = 2;
  EXPECT_THAT(api::ReplicaPodFromPod(pod).error().message(), HasSubstr("spec.owner.rank"));
  pod.metadata.annotations[api::kGroupSizeAnnotation] = "two";
  EXPECT_THAT(api::ReplicaPodFromPod(pod).error().message(), HasSubstr("strata.dev/group-size"));
}

}  // namespace
}  // namespace strata::node
