#include "sim/openb_trace.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace strata::sim {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// A file under the test's temporary directory, removed at the end of the test.
class TempFile {
 public:
  TempFile(std::string_view name, std::string_view contents)
      : path_(std::filesystem::temp_directory_path() /
              (std::to_string(::getpid()) + "_" + std::string(name))) {
    std::ofstream(path_, std::ios::binary) << contents;
  }
  ~TempFile() { std::filesystem::remove(path_); }
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

constexpr std::string_view kPodHeader =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
    "deletion_time,scheduled_time\n";

TEST(OpenbTraceTest, ReadsNodeListFromFile) {
  const TempFile file("nodes.csv",
                      "sn,cpu_milli,memory_mib,gpu,model\r\n"
                      "openb-node-0000,64000,262144,2,P100\r\n"
                      "openb-node-0001,96000,786432,8,V100M32\r\n");
  const auto nodes = ReadOpenbNodes(file.path());
  ASSERT_TRUE(nodes.has_value()) << nodes.error().ToString();
  ASSERT_EQ(nodes->size(), 2u);
  EXPECT_EQ((*nodes)[0].name, "openb-node-0000");
  EXPECT_EQ((*nodes)[0].cpu_milli, 64000);
  EXPECT_EQ((*nodes)[0].memory_mib, 262144);
  EXPECT_EQ((*nodes)[0].gpu_count, 2);
  EXPECT_EQ((*nodes)[1].gpu_model, "V100M32");
}

TEST(OpenbTraceTest, ReadsPodListWithSpecsFractionsAndCpuOnlyPods) {
  const TempFile file("pods.csv", std::string(kPodHeader) +
                                      "p0,12000,16384,1,1000,,LS,Running,0,10,0\n"
                                      "p1,6000,12288,1,460,V100M16||V100M32,LS,Running,0,10,0\n"
                                      "p2,4000,8192,0,0,,BE,Failed,0,10,0\n"
                                      "p3,4000,8192,1,1500,,BE,Failed,0,10,0\n"
                                      "\n");
  const auto pods = ReadOpenbPods(file.path());
  ASSERT_TRUE(pods.has_value()) << pods.error().ToString();
  ASSERT_EQ(pods->size(), 4u);
  EXPECT_EQ((*pods)[0].gpu_milli_each, 1000);
  EXPECT_THAT((*pods)[0].allowed_gpu_models, IsEmpty());
  EXPECT_EQ((*pods)[1].gpu_milli_each, 460);
  EXPECT_THAT((*pods)[1].allowed_gpu_models, ElementsAre("V100M16", "V100M32"));
  EXPECT_EQ((*pods)[2].gpu_count, 0);
  EXPECT_EQ((*pods)[3].gpu_milli_each, 1000) << "gpu_milli is clipped to one GPU";
}

TEST(OpenbTraceTest, ColumnsAreFoundByName) {
  const auto nodes = ParseOpenbNodes(
      "model,gpu,sn,memory_mib,cpu_milli,rack\nT4,2,n0,1024,8000,r1\n", "reordered.csv");
  ASSERT_TRUE(nodes.has_value()) << nodes.error().ToString();
  EXPECT_EQ((*nodes)[0].name, "n0");
  EXPECT_EQ((*nodes)[0].gpu_model, "T4");
  EXPECT_EQ((*nodes)[0].cpu_milli, 8000);
}

TEST(OpenbTraceTest, GpuSpecColumnIsOptional) {
  const auto pods =
      ParseOpenbPods("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1000,1024,1,500\n", "m.csv");
  ASSERT_TRUE(pods.has_value()) << pods.error().ToString();
  EXPECT_EQ((*pods)[0].gpu_milli_each, 500);
  EXPECT_THAT((*pods)[0].allowed_gpu_models, IsEmpty());
}

TEST(OpenbTraceTest, BadValueNamesFileLineAndColumn) {
  const TempFile file("bad_value.csv",
                      "sn,cpu_milli,memory_mib,gpu,model\n"
                      "n0,64000,262144,2,P100\n"
                      "n1,64000,lots,2,P100\n");
  const auto nodes = ReadOpenbNodes(file.path());
  ASSERT_FALSE(nodes.has_value());
  EXPECT_EQ(nodes.error().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(nodes.error().message(), HasSubstr(file.path() + ":3:"));
  EXPECT_THAT(nodes.error().message(), HasSubstr("column 'memory_mib' (field 3): 'lots'"));
}

TEST(OpenbTraceTest, NegativeAndTrailingGarbageAreRejected) {
  const auto negative = ParseOpenbPods(std::string(kPodHeader) + "p0,-5,1,0,0,,LS,R,0,0,0\n", "p");
  ASSERT_FALSE(negative.has_value());
  EXPECT_THAT(negative.error().message(), HasSubstr("p:2: column 'cpu_milli'"));
  const auto garbage = ParseOpenbPods(std::string(kPodHeader) + "p0,5,1,1,50x,,LS,R,0,0,0\n", "p");
  ASSERT_FALSE(garbage.has_value());
  EXPECT_THAT(garbage.error().message(), HasSubstr("column 'gpu_milli' (field 5): '50x'"));
}

TEST(OpenbTraceTest, MissingColumnWrongFieldCountAndQuotesAreErrors) {
  const auto missing = ParseOpenbNodes("sn,cpu_milli,memory_mib,model\nn0,1,1,T4\n", "m.csv");
  ASSERT_FALSE(missing.has_value());
  EXPECT_THAT(missing.error().message(), HasSubstr("m.csv:1: missing column 'gpu'"));

  const auto short_row = ParseOpenbNodes("sn,cpu_milli,memory_mib,gpu,model\nn0,1,1,1\n", "s.csv");
  ASSERT_FALSE(short_row.has_value());
  EXPECT_THAT(short_row.error().message(), HasSubstr("s.csv:2: 4 fields, the header has 5"));

  const auto quoted =
      ParseOpenbNodes("sn,cpu_milli,memory_mib,gpu,model\n\"n0\",1,1,1,T4\n", "q.csv");
  ASSERT_FALSE(quoted.has_value());
  EXPECT_THAT(quoted.error().message(), HasSubstr("q.csv:2: field 1: quoted"));

  const auto empty = ParseOpenbPods("", "e.csv");
  ASSERT_FALSE(empty.has_value());
  EXPECT_THAT(empty.error().message(), HasSubstr("e.csv: empty file"));
}

TEST(OpenbTraceTest, UnreadableFileIsNotFound) {
  const auto nodes = ReadOpenbNodes("/nonexistent/strata/nodes.csv");
  ASSERT_FALSE(nodes.has_value());
  EXPECT_EQ(nodes.error().code(), StatusCode::kNotFound);
  EXPECT_THAT(nodes.error().message(), HasSubstr("/nonexistent/strata/nodes.csv"));
}

}  // namespace
}  // namespace strata::sim
