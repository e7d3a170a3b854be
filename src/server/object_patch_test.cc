#include "server/object_patch.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace strata::server {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

const json kJob = json::parse(R"({"apiVersion": "strata.dev/v1alpha1", "kind": "Job",
  "metadata": {"name": "train", "labels": {"team": "a"}},
  "spec": {"replicas": 2, "template": {"command": ["python"]}}})");

TEST(ObjectPatchTest, ContentTypesNameThePatchTypes) {
  EXPECT_EQ(PatchTypeFor("application/merge-patch+json", "Job"), PatchType::kMerge);
  EXPECT_EQ(PatchTypeFor("application/json-patch+json; charset=utf-8", "Job"), PatchType::kJson);
  EXPECT_EQ(PatchTypeFor("application/strategic-merge-patch+json", "Pod"),
            PatchType::kStrategicMerge);

  Result<PatchType> strategic_job = PatchTypeFor("application/strategic-merge-patch+json", "Job");
  ASSERT_FALSE(strategic_job);
  EXPECT_EQ(strategic_job.error().code(), StatusCode::kUnimplemented);
  EXPECT_THAT(strategic_job.error().message(),
              HasSubstr("strategic merge patch is not supported for Job"));
  EXPECT_THAT(strategic_job.error().message(), HasSubstr("--type merge"));

  EXPECT_EQ(PatchTypeFor("application/apply-patch+yaml", "Job"), PatchType::kApply);
  Result<PatchType> none = PatchTypeFor("", "Pod");
  ASSERT_FALSE(none);
  EXPECT_THAT(none.error().message(),
              HasSubstr("accepted media types: application/json-patch+json, "
                        "application/merge-patch+json, application/apply-patch+yaml, "
                        "application/strategic-merge-patch+json"));
}

TEST(ObjectPatchTest, AMergePatchMergesAsRfc7386Says) {
  Result<json> patched = ApplyPatch(PatchType::kMerge, "Job", kJob,
                                    R"({"metadata": {"labels": {"team": null, "x": "y"}},
                                        "spec": {"replicas": 4}})");
  ASSERT_TRUE(patched) << patched.error().ToString();
  EXPECT_EQ((*patched)["metadata"]["labels"], json::parse(R"({"x": "y"})"));
  EXPECT_EQ((*patched)["spec"]["replicas"], 4);
  EXPECT_EQ((*patched)["spec"]["template"], kJob["spec"]["template"]);

  Result<json> not_an_object = ApplyPatch(PatchType::kMerge, "Job", kJob, "[1]");
  ASSERT_FALSE(not_an_object);
  EXPECT_THAT(not_an_object.error().message(), HasSubstr("a merge patch is a JSON object"));
  Result<json> not_json = ApplyPatch(PatchType::kMerge, "Job", kJob, "{");
  ASSERT_FALSE(not_json);
  EXPECT_EQ(not_json.error().code(), StatusCode::kInvalidArgument);
}

TEST(ObjectPatchTest, AJsonPatchAppliesEachOperationAndNamesTheOneThatFails) {
  Result<json> patched = ApplyPatch(PatchType::kJson, "Job", kJob, R"([
      {"op": "test", "path": "/spec/replicas", "value": 2},
      {"op": "replace", "path": "/spec/replicas", "value": 3},
      {"op": "add", "path": "/spec/template/command/-", "value": "train.py"}])");
  ASSERT_TRUE(patched) << patched.error().ToString();
  EXPECT_EQ((*patched)["spec"]["replicas"], 3);
  EXPECT_EQ((*patched)["spec"]["template"]["command"], json::parse(R"(["python", "train.py"])"));

  Result<json> failed_test = ApplyPatch(PatchType::kJson, "Job", kJob, R"([
      {"op": "replace", "path": "/spec/replicas", "value": 3},
      {"op": "test", "path": "/spec/replicas", "value": 2}])");
  ASSERT_FALSE(failed_test);
  EXPECT_THAT(failed_test.error().message(), HasSubstr("operation 1 (test \"/spec/replicas\")"));

  Result<json> missing =
      ApplyPatch(PatchType::kJson, "Job", kJob, R"([{"op": "remove", "path": "/spec/queue"}])");
  ASSERT_FALSE(missing);
  EXPECT_THAT(missing.error().message(), HasSubstr("operation 0 (remove \"/spec/queue\")"));
  EXPECT_THAT(missing.error().message(), ::testing::Not(HasSubstr("[json.exception")));

  Result<json> object = ApplyPatch(PatchType::kJson, "Job", kJob, R"({"op": "remove"})");
  ASSERT_FALSE(object);
  EXPECT_THAT(object.error().message(), HasSubstr("a JSON patch is a list of operations"));
}

TEST(ObjectPatchTest, HostilePatchesAreRefusedNamingWhere) {
  // Nested past the reader's bound: refused before any patch recurses over it.
  std::string deep;
  for (int i = 0; i < 100000; ++i) deep += R"({"a":)";
  Result<json> nested = ApplyPatch(PatchType::kMerge, "Job", kJob, deep);
  ASSERT_FALSE(nested);
  EXPECT_THAT(nested.error().message(), HasSubstr("nesting too deep"));
  Result<json> strategic = ApplyPatch(PatchType::kStrategicMerge, "Pod", kJob, deep);
  ASSERT_FALSE(strategic);
  EXPECT_THAT(strategic.error().message(), HasSubstr("nesting too deep"));

  Result<json> broken = ApplyPatch(PatchType::kMerge, "Job", kJob, R"({"spec": {"replicas": 3,}})");
  ASSERT_FALSE(broken);
  EXPECT_THAT(broken.error().message(), HasSubstr("(byte 24)"));

  // A large non-object is named by its type, not echoed back.
  std::string big = "[1";
  for (int i = 0; i < 500000; ++i) big += ",1";
  big += "]";
  Result<json> list = ApplyPatch(PatchType::kMerge, "Job", kJob, big);
  ASSERT_FALSE(list);
  EXPECT_THAT(list.error().message(),
              HasSubstr("a merge patch is a JSON object, got a JSON array"));
  EXPECT_LT(list.error().message().size(), 200u);
}

}  // namespace
}  // namespace strata::server
