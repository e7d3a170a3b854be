#include "controller/stored_objects.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/manifest.h"
#include "controller/job_status.h"

namespace strata::controller {
namespace {

using ::testing::HasSubstr;

TEST(ParseRfc3339Test, ReadsWhatFormatRfc3339Writes) {
  TimePoint t = FakeClock::kDefaultStart + std::chrono::seconds(12345);
  EXPECT_EQ(ParseRfc3339(FormatRfc3339(t)), t);
  EXPECT_EQ(ParseRfc3339("2026-01-01T00:00:00.5Z"),
            ParseRfc3339("2026-01-01T00:00:00Z").value() + std::chrono::milliseconds(500));
}

TEST(ParseRfc3339Test, RejectsAnythingElse) {
  for (const char* bad :
       {"", "2026-01-01", "2026-01-01T00:00:00", "2026-13-01T00:00:00Z",
        "2026-01-01T00:00:00+01:00", "2026-01-01T00:00:00.Z", "20x6-01-01T00:00:00Z"}) {
    EXPECT_EQ(ParseRfc3339(bad), std::nullopt) << bad;
  }
}

TEST(StoredObjectsTest, AJobKeepsItsStatusAcrossARewriteOfItsSpec) {
  Result<std::vector<api::Object>> decoded = api::DecodeManifests({{"job.yaml", R"(
apiVersion: strata.dev/v1alpha1
kind: Job
metadata: {name: train, namespace: default}
spec: {resources: {gpu: 1}, template: {command: [python]}}
)"}});
  ASSERT_TRUE(decoded.has_value()) << decoded.error().ToString();
  store::Object stored = EncodeForStore((*decoded)[0]);
  JobStatus status;
  status.phase = std::string(kJobRunning);
  status.restart_count = 2;
  status.SetCondition("Running", "True", "Running", "all 1 pod(s) running",
                      FakeClock::kDefaultStart);
  WriteJobStatus(status, stored.body);
  stored.resource_version = 7;

  Result<api::Object> read = DecodeStoredObject(stored);
  ASSERT_TRUE(read.has_value()) << read.error().ToString();
  store::Object rewritten = EncodeForStore(*read, stored);
  EXPECT_EQ(ReadJobStatus(rewritten.body), status);
  EXPECT_EQ(rewritten.resource_version, 7);
}

TEST(StoredObjectsTest, ABodyThatDoesNotDecodeNamesTheObjectAndTheField) {
  store::Object broken;
  broken.key = {"Pod", "default", "p"};
  broken.body = {{"apiVersion", "strata.dev/v1alpha1"},
                 {"kind", "Pod"},
                 {"metadata", {{"name", "p"}, {"namespace", "default"}}},
                 {"spec", {{"template", {{"command", {"x"}}}}, {"priority", "high"}}}};
  Result<api::Object> read = DecodeStoredObject(broken);
  ASSERT_FALSE(read.has_value());
  EXPECT_THAT(read.error().message(), HasSubstr("Pod \"default/p\""));
  EXPECT_THAT(read.error().message(), HasSubstr("spec.priority"));
}

TEST(JobStatusTest, ConditionTransitionTimeChangesOnlyWithItsStatus) {
  JobStatus status;
  TimePoint t0 = FakeClock::kDefaultStart;
  EXPECT_TRUE(status.SetCondition("Scheduled", "False", "WaitingForQuota", "a", t0));
  EXPECT_TRUE(status.SetCondition("Scheduled", "False", "WaitingForQuota", "b",
                                  t0 + std::chrono::seconds(5)));
  EXPECT_EQ(status.FindCondition("Scheduled")->last_transition_time, FormatRfc3339(t0));
  EXPECT_FALSE(status.SetCondition("Scheduled", "False", "WaitingForQuota", "b",
                                   t0 + std::chrono::seconds(9)));
  EXPECT_TRUE(status.SetCondition("Scheduled", "True", "Scheduled", "placed",
                                  t0 + std::chrono::seconds(10)));
  EXPECT_EQ(status.FindCondition("Scheduled")->last_transition_time,
            FormatRfc3339(t0 + std::chrono::seconds(10)));
}

}  // namespace
}  // namespace strata::controller
