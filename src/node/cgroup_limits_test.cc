#include "node/cgroup_limits.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "node/process_runtime.h"
#include "node/test_support.h"

namespace strata::node {
namespace {

using ::strata::node::testing::ReadFileOrEmpty;
using ::strata::node::testing::TempDir;
using ::testing::HasSubstr;
using namespace std::chrono_literals;

TEST(CgroupLimitsTest, APodIsLimitedToItsLimitsElseToWhatIsReservedForIt) {
  api::ResourceRequest reserved;
  reserved.cpu = *Quantity::Parse("250m");
  reserved.memory = *Quantity::Parse("64Mi");
  EXPECT_EQ(PodLimits(reserved), (ResourceLimits{250, 64 << 20}));
  api::ResourceRequest burstable = reserved;
  burstable.cpu_limit = *Quantity::Parse("2");
  burstable.memory_limit = *Quantity::Parse("256Mi");
  EXPECT_EQ(PodLimits(burstable), (ResourceLimits{2000, 256 << 20}));
  EXPECT_EQ(PodLimits(api::ResourceRequest{}), (ResourceLimits{0, 0}));  // unlimited
}

TEST(CgroupLimitsTest, ANonCgroupRootDisablesLimitsAndSaysWhy) {
  TempDir not_cgroups;
  std::shared_ptr<const CgroupLimits> limits = CgroupLimits::Probe(not_cgroups.path());
  EXPECT_FALSE(limits->enabled());
  EXPECT_THAT(limits->reason(), HasSubstr("per-pod CPU and memory limits are not enforced: " +
                                          not_cgroups.path() + " is not a cgroup v2 mount"));
}

TEST(CgroupLimitsTest, RuntimeReportsTheSameNotice) {
  TempDir data;
  TempDir not_cgroups;
  ProcessRuntime::Options options;
  options.data_dir = data.path();
  options.cgroup_root = not_cgroups.path();
  Result<std::unique_ptr<ProcessRuntime>> runtime = ProcessRuntime::Create(options);
  ASSERT_TRUE(runtime) << runtime.error().ToString();
  EXPECT_THAT((*runtime)->limits_notice(), HasSubstr("is not a cgroup v2 mount"));
}

TEST(CgroupLimitsTest, CpuUsageIsTheCgroupsUsageInCpuStat) {
  TempDir cgroup;
  std::ofstream(cgroup.File("cpu.stat")) << "usage_usec 1500000\nuser_usec 1000000\n"
                                            "system_usec 500000\n";
  std::shared_ptr<const CgroupLimits> limits = CgroupLimits::Probe(cgroup.path());
  Result<Duration> usage = limits->CpuUsage(cgroup.path());
  ASSERT_TRUE(usage) << usage.error().ToString();
  EXPECT_EQ(*usage, 1500ms);
  TempDir empty;
  EXPECT_EQ(limits->CpuUsage(empty.path()).error().code(), StatusCode::kInternal);
}

// Runs only where this process may manage a cgroup v2 subtree (e.g. a delegated systemd unit).
TEST(CgroupLimitsTest, PodsGetTheirLimitsWhereCgroupV2IsWritable) {
  TempDir data;
  ProcessRuntime::Options options;
  options.data_dir = data.path();
  Result<std::unique_ptr<ProcessRuntime>> runtime = ProcessRuntime::Create(options);
  ASSERT_TRUE(runtime) << runtime.error().ToString();
  if (!(*runtime)->limits_notice().empty()) GTEST_SKIP() << (*runtime)->limits_notice();

  PodSpec spec;
  spec.uid = "limited";
  spec.limits = {.cpu_millis = 500, .memory_bytes = int64_t{64} << 20};
  spec.processes.push_back({"main", {"/bin/sh", "-c", "cat /proc/self/cgroup"}, {}, ""});
  ASSERT_TRUE((*runtime)->Start(spec).ok());
  Result<PodStatus> status = (*runtime)->WaitForExit("limited", 60s);
  ASSERT_TRUE(status);
  std::string cgroup_line = ReadFileOrEmpty(status->processes[0].log_path);
  EXPECT_THAT(cgroup_line, HasSubstr("/strata-pods/limited"));
  // The limits were written before the process joined; read them back from the cgroup.
  std::string relative = cgroup_line.substr(cgroup_line.find("::") + 2);
  relative.erase(relative.find_last_not_of('\n') + 1);
  std::string dir = "/sys/fs/cgroup" + relative;
  EXPECT_EQ(ReadFileOrEmpty(dir + "/memory.max"), std::to_string(int64_t{64} << 20) + "\n");
  EXPECT_EQ(ReadFileOrEmpty(dir + "/cpu.max"), "50000 100000\n");
  ASSERT_TRUE((*runtime)->Stop("limited", 1s).ok());
}

}  // namespace
}  // namespace strata::node
