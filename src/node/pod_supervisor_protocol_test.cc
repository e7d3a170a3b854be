#include "node/pod_supervisor_protocol.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "node/pod_exit_record.h"
#include "node/test_support.h"

namespace strata::node {
namespace {

using ::strata::node::testing::TempDir;
using ::testing::HasSubstr;

TEST(PodSupervisorProtocolTest, TheSpecAndTheReportSurviveTheirEncoding) {
  SupervisorSpec spec;
  spec.processes.push_back(
      {"rank-0", {"python3", "train.py"}, {"A=1", "B=two\nlines"}, "/work", "/logs/rank-0.log"});
  spec.path = "/usr/bin:/bin";
  spec.uid = 65534;
  spec.gid = 65534;
  spec.lease_file = "/data/pods/lease";
  std::string line = EncodeSupervisorSpec(spec);
  EXPECT_EQ(line.find('\n'), line.size() - 1) << "one line, whatever the values hold";
  Result<SupervisorSpec> decoded = DecodeSupervisorSpec(line);
  ASSERT_TRUE(decoded) << decoded.error().ToString();
  EXPECT_EQ(decoded->processes[0].env, spec.processes[0].env);
  EXPECT_EQ(decoded->processes[0].argv, spec.processes[0].argv);
  EXPECT_EQ(decoded->uid, 65534u);
  EXPECT_EQ(decoded->lease_file, spec.lease_file);

  SupervisorReport report{.error = "", .processes = {{41, 7}, {42, 8}}};
  Result<SupervisorReport> read = DecodeSupervisorReport(EncodeSupervisorReport(report));
  ASSERT_TRUE(read) << read.error().ToString();
  ASSERT_EQ(read->processes.size(), 2u);
  EXPECT_EQ(read->processes[1].pid, 42);
  EXPECT_EQ(read->processes[1].start_time, 8u);
}

TEST(PodSupervisorProtocolTest, AMalformedMessageNamesTheField) {
  EXPECT_THAT(DecodeSupervisorSpec("{\"path\": \"/bin\", \"processes\": [{\"name\": 1}]}")
                  .error()
                  .message(),
              HasSubstr("processes[0].name"));
  EXPECT_THAT(DecodeSupervisorSpec("not json").error().message(), HasSubstr("(document)"));
  EXPECT_THAT(DecodeSupervisorReport("{\"processes\": [{\"pid\": \"x\"}]}").error().message(),
              HasSubstr("processes[0]"));
}

TEST(PodExitRecordTest, ARecordSurvivesAndAMalformedOneIsNamed) {
  TempDir dir;
  ASSERT_TRUE(
      WriteExitRecord(dir.path(), "rank-1",
                      {.exit_code = std::nullopt, .signal = 15, .end_time_ns = 123, .fenced = true})
          .ok());
  Result<ExitRecord> record = ReadExitRecord(dir.path(), "rank-1");
  ASSERT_TRUE(record) << record.error().ToString();
  EXPECT_EQ(record->signal, 15);
  EXPECT_FALSE(record->exit_code);
  EXPECT_EQ(record->end_time_ns, 123);
  EXPECT_TRUE(record->fenced);

  EXPECT_EQ(ReadExitRecord(dir.path(), "rank-2").error().code(), StatusCode::kNotFound);
  std::ofstream(dir.File("both")) << R"({"end_time_ns": 1, "exit_code": 0, "signal": 9})";
  EXPECT_THAT(ReadExitRecord(dir.path(), "both").error().message(),
              HasSubstr("exactly one is set"));
}

TEST(PodSupervisorProtocolTest, TheLeaseFileHoldsTheLastRenewal) {
  TempDir dir;
  EXPECT_FALSE(ReadLeaseFile(dir.File("lease")));
  ASSERT_TRUE(WriteLeaseFile(dir.File("lease"), 1700000000123456789).ok());
  ASSERT_TRUE(WriteLeaseFile(dir.File("lease"), 1700000000999999999).ok());
  EXPECT_EQ(ReadLeaseFile(dir.File("lease")), 1700000000999999999);
}

}  // namespace
}  // namespace strata::node
