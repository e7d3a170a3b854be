#include "api/torchrun_env.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace strata::api {
namespace {

using ::testing::HasSubstr;

TrainingPod SecondOfTwoPods() {
  TrainingPod pod;
  pod.job_name = "llama";
  pod.run_id = "llama-7f3a";
  pod.master_addr = "10.0.0.1";
  pod.master_port = 29500;
  pod.num_nodes = 2;
  pod.node_rank = 1;
  pod.proc_per_node = 4;
  pod.restart_count = 1;
  pod.max_restarts = 3;
  pod.gpu_indices = {4, 5, 6, 7};
  pod.checkpoint_dir = "/data/ckpt/llama";
  pod.user_env = {{"NCCL_DEBUG", "INFO"}, {"LR", "3e-4"}};
  return pod;
}

TEST(BuildWorkerEnvironmentsTest, FollowsTorchrunsContractForEveryWorker) {
  Result<std::vector<Environment>> workers = BuildWorkerEnvironments(SecondOfTwoPods());
  ASSERT_TRUE(workers) << workers.error().ToString();
  ASSERT_EQ(workers->size(), 4u);
  const Environment expected_third = {
      {"CUDA_VISIBLE_DEVICES", "4,5,6,7"},
      {"GROUP_RANK", "1"},
      {"JOB_COMPLETION_INDEX", "1"},
      {"LOCAL_RANK", "2"},
      {"LOCAL_WORLD_SIZE", "4"},
      {"LR", "3e-4"},
      {"MASTER_ADDR", "10.0.0.1"},
      {"MASTER_PORT", "29500"},
      {"NCCL_DEBUG", "INFO"},
      {"PET_MASTER_ADDR", "10.0.0.1"},
      {"PET_MASTER_PORT", "29500"},
      {"PET_NNODES", "2"},
      {"PET_NODE_RANK", "1"},
      {"PET_NPROC_PER_NODE", "4"},
      {"RANK", "6"},
      {"ROLE_NAME", "default"},
      {"ROLE_RANK", "6"},
      {"ROLE_WORLD_SIZE", "8"},
      {"STRATA_CHECKPOINT_DIR", "/data/ckpt/llama"},
      {"STRATA_JOB_NAME", "llama"},
      {"TORCHELASTIC_MAX_RESTARTS", "3"},
      {"TORCHELASTIC_RESTART_COUNT", "1"},
      {"TORCHELASTIC_RUN_ID", "llama-7f3a"},
      {"VC_TASK_INDEX", "1"},
      {"VK_TASK_INDEX", "1"},
      {"WORLD_SIZE", "8"},
  };
  EXPECT_EQ((*workers)[2], expected_third);
  for (int local_rank = 0; local_rank < 4; ++local_rank) {
    EXPECT_EQ((*workers)[local_rank].at("RANK"), std::to_string(4 + local_rank));
    EXPECT_EQ((*workers)[local_rank].at("CUDA_VISIBLE_DEVICES"), "4,5,6,7");
  }
}

TEST(BuildWorkerEnvironmentsTest, OneGpuPerWorkerWhenAsked) {
  TrainingPod pod = SecondOfTwoPods();
  pod.gpu_assignment = GpuAssignment::kOnePerWorker;
  Result<std::vector<Environment>> workers = BuildWorkerEnvironments(pod);
  ASSERT_TRUE(workers) << workers.error().ToString();
  EXPECT_EQ((*workers)[0].at("CUDA_VISIBLE_DEVICES"), "4");
  EXPECT_EQ((*workers)[3].at("CUDA_VISIBLE_DEVICES"), "7");
  EXPECT_EQ((*workers)[3].at("LOCAL_RANK"), "3");
}

TEST(BuildWorkerEnvironmentsTest, PodWithoutGpusHidesThemAndOmitsAnUnsetCheckpointDir) {
  TrainingPod pod = SecondOfTwoPods();
  pod.gpu_indices.clear();
  pod.checkpoint_dir.clear();
  Result<std::vector<Environment>> workers = BuildWorkerEnvironments(pod);
  ASSERT_TRUE(workers) << workers.error().ToString();
  EXPECT_EQ((*workers)[0].at("CUDA_VISIBLE_DEVICES"), "");
  EXPECT_FALSE((*workers)[0].contains("STRATA_CHECKPOINT_DIR"));
}

TEST(IsTorchrunLauncherTest, RecognisesTorchrunAndItsModuleOnly) {
  EXPECT_TRUE(IsTorchrunLauncher({"torchrun", "--nproc-per-node", "2", "train.py"}));
  EXPECT_TRUE(IsTorchrunLauncher({"/opt/venv/bin/torchrun", "train.py"}));
  EXPECT_TRUE(IsTorchrunLauncher({"python3", "-m", "torch.distributed.run", "train.py"}));
  EXPECT_TRUE(IsTorchrunLauncher({"/usr/bin/python", "-m", "torch.distributed.run"}));
  EXPECT_FALSE(IsTorchrunLauncher({}));
  EXPECT_FALSE(IsTorchrunLauncher({"python3", "train.py", "torchrun"}));
  EXPECT_FALSE(IsTorchrunLauncher({"python3", "-m", "torch.distributed.launch", "train.py"}));
  EXPECT_FALSE(IsTorchrunLauncher({"sh", "-c", "torchrun train.py"}));
  EXPECT_FALSE(IsTorchrunLauncher({"torchrun-wrapper", "train.py"}));
}

TEST(BuildLauncherEnvironmentTest, IsEveryWorkersEnvironmentWithoutTheWorkerRanks) {
  Result<Environment> launcher = BuildLauncherEnvironment(SecondOfTwoPods());
  ASSERT_TRUE(launcher) << launcher.error().ToString();
  Result<std::vector<Environment>> workers = BuildWorkerEnvironments(SecondOfTwoPods());
  ASSERT_TRUE(workers) << workers.error().ToString();
  Environment expected = (*workers)[0];
  for (const char* name : {"RANK", "ROLE_RANK", "LOCAL_RANK"}) expected.erase(name);
  EXPECT_EQ(*launcher, expected);
  // What torchrun reads for its flags' defaults and what a --rdzv-endpoint refers to.
  EXPECT_EQ(launcher->at("PET_NPROC_PER_NODE"), "4");
  EXPECT_EQ(launcher->at("PET_NODE_RANK"), "1");
  EXPECT_EQ(launcher->at("MASTER_ADDR"), "10.0.0.1");
  EXPECT_EQ(launcher->at("CUDA_VISIBLE_DEVICES"), "4,5,6,7");
}

TEST(BuildLauncherEnvironmentTest, RejectsABadPodAndOneGpuPerWorker) {
  TrainingPod pod = SecondOfTwoPods();
  pod.node_rank = 2;
  Result<Environment> bad = BuildLauncherEnvironment(pod);
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message(), HasSubstr("node_rank 2"));
  pod = SecondOfTwoPods();
  pod.gpu_assignment = GpuAssignment::kOnePerWorker;
  bad = BuildLauncherEnvironment(pod);
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message(), HasSubstr("one GPU per worker"));
}

TEST(ReservedEnvNamesTest, CoversTheContractAndTheStrataPrefix) {
  for (std::string_view name : ReservedEnvNames()) EXPECT_TRUE(IsReservedEnvName(name)) << name;
  EXPECT_TRUE(IsReservedEnvName("STRATA_ANYTHING"));
  EXPECT_FALSE(IsReservedEnvName("NCCL_DEBUG"));
  EXPECT_FALSE(IsReservedEnvName("rank"));
}

struct BadPod {
  const char* label;
  void (*mutate)(TrainingPod*);
  const char* message;
};

class BadTrainingPodTest : public ::testing::TestWithParam<BadPod> {};

TEST_P(BadTrainingPodTest, IsRejectedNamingTheField) {
  TrainingPod pod = SecondOfTwoPods();
  GetParam().mutate(&pod);
  Result<std::vector<Environment>> workers = BuildWorkerEnvironments(pod);
  ASSERT_FALSE(workers) << GetParam().label;
  EXPECT_EQ(workers.error().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(workers.error().message(), HasSubstr(GetParam().message));
}

INSTANTIATE_TEST_SUITE_P(
    Errors, BadTrainingPodTest,
    ::testing::Values(
        BadPod{"reserved",
               [](TrainingPod* p) {
                 p->user_env.push_back({"RANK", "0"});
               },
               "env[2].name \"RANK\" is reserved"},
        BadPod{"strata prefix",
               [](TrainingPod* p) {
                 p->user_env.push_back({"STRATA_JOB_NAME", "x"});
               },
               "env[2].name \"STRATA_JOB_NAME\" is reserved"},
        BadPod{"twice",
               [](TrainingPod* p) {
                 p->user_env.push_back({"LR", "1"});
               },
               "env[2].name \"LR\" is set twice"},
        BadPod{"bad name",
               [](TrainingPod* p) {
                 p->user_env.push_back({"A=B", "1"});
               },
               "env[2].name \"A=B\" is not a valid variable name"},
        BadPod{"nul",
               [](TrainingPod* p) {
                 p->user_env.push_back({"X", std::string(1, '\0')});
               },
               "env[2].value of \"X\" contains a NUL byte"},
        BadPod{"node rank", [](TrainingPod* p) { p->node_rank = 2; },
               "node_rank 2 is not in [0, num_nodes 2)"},
        BadPod{"port", [](TrainingPod* p) { p->master_port = 70000; },
               "master_port 70000 is not in [1, 65535]"},
        BadPod{"procs", [](TrainingPod* p) { p->proc_per_node = 0; }, "proc_per_node 0"},
        BadPod{"restarts", [](TrainingPod* p) { p->restart_count = 4; },
               "restart_count 4 is not in [0, max_restarts 3]"},
        BadPod{"dup gpu",
               [](TrainingPod* p) {
                 p->gpu_indices = {1, 1, 2, 3};
               },
               "gpu_indices[1] 1 appears twice"},
        BadPod{"one per worker",
               [](TrainingPod* p) {
                 p->gpu_assignment = GpuAssignment::kOnePerWorker;
                 p->gpu_indices = {0, 1};
               },
               "one GPU per worker needs 4 gpu_indices"},
        BadPod{"master", [](TrainingPod* p) { p->master_addr.clear(); }, "master_addr is empty"}),
    [](const ::testing::TestParamInfo<BadPod>& info) {
      std::string name = info.param.label;
      std::replace(name.begin(), name.end(), ' ', '_');
      return name;
    });

}  // namespace
}  // namespace strata::api
