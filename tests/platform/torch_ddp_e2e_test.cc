// A real PyTorch DDP job end to end: examples/torch-ddp/train.py (torch from PyPI, the gloo
// backend on CPU) run by `strata up` in both forms of examples/torch-ddp, and compared with the
// same script run by torchrun itself. Skips when torch is not installed (make torch-deps).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <optional>
#include <regex>
#include <set>

#include "training_fixture.h"

namespace strata::platform_test {
namespace {

using ::testing::HasSubstr;

// Where `make torch-deps` installs torch: $STRATA_TORCH_DIR, else ~/.cache/strata-torch.
std::string TorchBin() {
  if (const char* dir = std::getenv("STRATA_TORCH_DIR")) return std::string(dir) + "/bin";
  const char* home = std::getenv("HOME");
  return std::string(home != nullptr ? home : "") + "/.cache/strata-torch/bin";
}

std::string ExampleDir() { return SourceDir() + "/examples/torch-ddp"; }

// The lines rank 0 of train.py prints for its losses: "step N loss L" and "final step N loss L".
std::set<std::string> LossLines(const std::string& log) {
  static const std::regex kLine("(final )?step [0-9]+ loss [0-9.e+-]+");
  std::set<std::string> lines;
  for (auto it = std::sregex_iterator(log.begin(), log.end(), kLine); it != std::sregex_iterator();
       ++it) {
    lines.insert(it->str());
  }
  return lines;
}

std::string FinalLine(const std::set<std::string>& lines) {
  for (const std::string& line : lines) {
    if (line.starts_with("final ")) return line;
  }
  return "";
}

// The line of `lines` for step `step` ("step N loss L"), or empty.
std::string LineOfStep(const std::set<std::string>& lines, int step) {
  const std::string prefix = "step " + std::to_string(step) + " loss ";
  for (const std::string& line : lines) {
    if (line.starts_with(prefix)) return line;
  }
  return "";
}

// Four torch processes start slowly on a small, busy machine; twice for a restarted job.
constexpr Duration kTorchJobTimeout = std::chrono::seconds(240);

class TorchDdpE2eTest : public TrainingJobTest {
 protected:
  static void SetUpTestSuite() {
    CommandResult probe =
        RunProgram({TorchBin() + "/python3", "-c",
                    "import torch.distributed as d; assert d.is_gloo_available()"});
    torch_error_ = probe.exit_code == 0
                       ? ""
                       : "exit " + std::to_string(probe.exit_code) + " " + probe.err.substr(0, 400);
  }

  void SetUp() override {
    if (!torch_error_.empty()) {
      GTEST_SKIP() << "torch is not importable from " << TorchBin()
                   << " (make torch-deps installs it): " << torch_error_;
    }
    // The pods find python3 and torchrun on strata up's PATH, as a user's would after
    // activating the environment that has torch.
    std::string path = std::getenv("PATH") != nullptr ? std::getenv("PATH") : "/usr/bin:/bin";
    if (!path.starts_with(TorchBin() + ":")) setenv("PATH", (TorchBin() + ":" + path).c_str(), 1);
  }

  // strata up as the examples need it. As root, strata runs pods as nobody, who cannot read
  // torch's environment under root's home: the pods run as root instead (ExampleManifest).
  void StartTorchUp() {
    StartUp("2x8:H100-80GB", geteuid() == 0 ? std::vector<std::string>{"--allow-root-pods"}
                                            : std::vector<std::string>{});
  }

  // The example's manifest `file` with its directory filled in, as the example says to apply it,
  // and, as root, the pods' user set to root.
  static std::string ExampleManifest(const std::string& file) {
    std::string manifest = node::testing::ReadFileOrEmpty(ExampleDir() + "/" + file);
    EXPECT_FALSE(manifest.empty()) << file;
    const std::string placeholder = "@EXAMPLE_DIR@";
    for (size_t at = manifest.find(placeholder); at != std::string::npos;
         at = manifest.find(placeholder)) {
      manifest.replace(at, placeholder.size(), ExampleDir());
    }
    const std::string template_key = "\n  template:\n";
    if (geteuid() == 0 && manifest.find(template_key) != std::string::npos) {
      manifest.insert(manifest.find(template_key) + template_key.size(),
                      "    securityContext: {runAsUser: 0}\n");
    }
    return manifest;
  }

  // The losses of train.py run by torchrun itself on this machine, 1 node x 4 processes, with
  // the arguments of the examples: once per test program.
  static const std::set<std::string>& ReferenceLosses() {
    if (!reference_) {
      node::testing::TempDir checkpoints;
      CommandResult run =
          RunProgram({"timeout", "180", TorchBin() + "/torchrun", "--standalone",
                      "--nproc-per-node", "4", ExampleDir() + "/train.py", "--steps", "300",
                      "--checkpoint-every", "20", "--checkpoint-dir", checkpoints.path()},
                     {"OMP_NUM_THREADS=1"});
      EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
      reference_ = LossLines(run.out);
    }
    return *reference_;
  }

  // Waits until `job` succeeded or failed; returns whether it did in time.
  bool Finished(const std::string& job) {
    return WaitFor(
        [&] {
          std::string phase = JobStatus(job).value("phase", "");
          return phase == "Succeeded" || phase == "Failed";
        },
        kTorchJobTimeout);
  }

  static std::string torch_error_;
  static std::optional<std::set<std::string>> reference_;
};

std::string TorchDdpE2eTest::torch_error_;
std::optional<std::set<std::string>> TorchDdpE2eTest::reference_;

TEST_F(TorchDdpE2eTest, StrataStartedWorkersMatchTorchrunAndResumeTheirCheckpointAfterAKill) {
  const std::set<std::string>& reference = ReferenceLosses();
  ASSERT_THAT(FinalLine(reference), HasSubstr("final step 299 loss "));

  StartTorchUp();
  // Slower steps than the example's, so that the kill lands while the job runs.
  std::string manifest = ExampleManifest("job.yaml");
  const std::string args = "--checkpoint-every, \"20\"";
  ASSERT_NE(manifest.find(args), std::string::npos) << manifest;
  manifest.replace(manifest.find(args), args.size(), args + ", --step-delay, \"0.03\"");
  Apply(manifest);
  ASSERT_TRUE(WaitFor([&] { return JobStatus("torch-ddp").contains("lastCheckpointTime"); },
                      kTorchJobTimeout))
      << JobStatus("torch-ddp").dump() << "\n"
      << WorkerLogs();
  std::vector<pid_t> rank3 = Workers("torch-ddp", 3);
  ASSERT_EQ(rank3.size(), 1u) << WorkerLogs();
  ASSERT_EQ(kill(rank3[0], SIGKILL), 0);

  ASSERT_TRUE(Finished("torch-ddp")) << JobStatus("torch-ddp").dump() << "\n" << WorkerLogs();
  ASSERT_EQ(JobStatus("torch-ddp").value("phase", ""), "Succeeded") << WorkerLogs();
  EXPECT_EQ(JobStatus("torch-ddp").value("restartCount", 0), 1);
  std::string logs = WorkerLogs();
  // The whole group started again, from a checkpoint of this run: the step counter goes on.
  std::smatch resumed;
  ASSERT_TRUE(std::regex_search(
      logs, resumed,
      std::regex(
          "world size 4, restart 1: starting at step ([0-9]+) \\(resumed from checkpoint\\)")))
      << logs;
  const int start = std::stoi(resumed[1]);
  EXPECT_GT(start, 0);
  EXPECT_EQ(start % 20, 0);
  // The second attempt logged the step it resumed at, and every loss either attempt logged is
  // torchrun's at that step: the curve joins, and the final loss is torchrun's.
  std::set<std::string> losses = LossLines(logs);
  EXPECT_FALSE(LineOfStep(losses, start).empty()) << logs;
  EXPECT_EQ(LineOfStep(losses, start), LineOfStep(reference, start));
  for (const std::string& line : losses) EXPECT_TRUE(reference.contains(line)) << line;
  EXPECT_EQ(FinalLine(losses), FinalLine(reference)) << logs;
}

TEST_F(TorchDdpE2eTest, TheLauncherFormRunsOneTorchrunPerPodAndMatchesTorchrun) {
  const std::set<std::string>& reference = ReferenceLosses();
  ASSERT_THAT(FinalLine(reference), HasSubstr("final step 299 loss "));

  StartTorchUp();
  Apply(ExampleManifest("launcher.yaml"));
  ASSERT_TRUE(Finished("torch-ddp-launcher")) << JobStatus("torch-ddp-launcher").dump() << "\n"
                                              << WorkerLogs();
  ASSERT_EQ(JobStatus("torch-ddp-launcher").value("phase", ""), "Succeeded") << WorkerLogs();
  EXPECT_EQ(JobStatus("torch-ddp-launcher").value("restartCount", 0), 0);
  std::string logs = WorkerLogs();
  EXPECT_EQ(Count(logs, "world size 4, restart 0: starting at step 0\n"), 1u) << logs;
  std::set<std::string> losses = LossLines(logs);
  for (const std::string& line : losses) EXPECT_TRUE(reference.contains(line)) << line;
  EXPECT_EQ(FinalLine(losses), FinalLine(reference)) << logs;
}

}  // namespace
}  // namespace strata::platform_test
