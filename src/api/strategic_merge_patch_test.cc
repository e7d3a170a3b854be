#include "api/strategic_merge_patch.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace strata::api {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

const json kPod = json::parse(R"({
  "apiVersion": "v1", "kind": "Pod",
  "metadata": {"name": "p", "labels": {"a": "1", "b": "2"}},
  "spec": {
    "tolerations": [{"key": "x", "operator": "Exists"}],
    "template": {"command": ["python"], "env": [{"name": "A", "value": "1"},
                                                 {"name": "B", "value": "2"}]}}})");

const json kNode = json::parse(R"({
  "apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"},
  "spec": {"taints": [{"key": "t", "effect": "NoSchedule"}]},
  "status": {"conditions": [{"type": "Ready", "status": "True"},
                            {"type": "DiskPressure", "status": "False"}]}})");

json Patched(std::string_view kind, const json& original, const char* patch) {
  Result<json> patched = ApplyStrategicMergePatch(kind, original, json::parse(patch));
  EXPECT_TRUE(patched) << patched.error().ToString();
  return patched ? *patched : json();
}

Status PatchError(std::string_view kind, const json& original, const char* patch) {
  Result<json> patched = ApplyStrategicMergePatch(kind, original, json::parse(patch));
  EXPECT_FALSE(patched) << patched->dump();
  return patched ? Status::Ok() : patched.error();
}

TEST(StrategicMergePatchTest, MapsMergeAndNullDeletes) {
  json pod = Patched("Pod", kPod, R"({"metadata": {"labels": {"a": null, "c": "3"}}})");
  EXPECT_EQ(pod["metadata"]["labels"], json::parse(R"({"b": "2", "c": "3"})"));
  EXPECT_EQ(pod["spec"], kPod["spec"]);
}

TEST(StrategicMergePatchTest, EnvMergesByNameAsAContainersEnvDoes) {
  json pod = Patched("Pod", kPod,
                     R"({"spec": {"template": {"env": [{"name": "B", "value": "changed"},
                                                       {"name": "C", "value": "3"}]}}})");
  EXPECT_EQ(pod["spec"]["template"]["env"], json::parse(R"([{"name": "A", "value": "1"},
      {"name": "B", "value": "changed"}, {"name": "C", "value": "3"}])"));
  // The rest of the template is kept.
  EXPECT_EQ(pod["spec"]["template"]["command"], json::parse(R"(["python"])"));

  pod = Patched("Pod", kPod,
                R"({"spec": {"template": {"env": [{"name": "A", "$patch": "delete"}]}}})");
  EXPECT_EQ(pod["spec"]["template"]["env"], json::parse(R"([{"name": "B", "value": "2"}])"));

  pod = Patched("Pod", kPod,
                R"({"spec": {"template": {"env": [{"$patch": "replace"}, {"name": "Z"}]}}})");
  EXPECT_EQ(pod["spec"]["template"]["env"], json::parse(R"([{"name": "Z"}])"));
}

TEST(StrategicMergePatchTest, ListsWithoutAMergeKeyAreReplacedWhole) {
  json pod = Patched("Pod", kPod, R"({"spec": {"tolerations": [{"key": "y", "operator": "Exists"}],
                                               "template": {"command": ["sh"]}}})");
  EXPECT_EQ(pod["spec"]["tolerations"], json::parse(R"([{"key": "y", "operator": "Exists"}])"));
  EXPECT_EQ(pod["spec"]["template"]["command"], json::parse(R"(["sh"])"));

  json node =
      Patched("Node", kNode, R"({"spec": {"taints": [{"key": "u", "effect": "NoExecute"}]}})");
  EXPECT_EQ(node["spec"]["taints"], json::parse(R"([{"key": "u", "effect": "NoExecute"}])"));
}

TEST(StrategicMergePatchTest, NodeConditionsMergeByTypeInTheOrderGiven) {
  json node = Patched("Node", kNode, R"({"status": {
      "$setElementOrder/conditions": [{"type": "DiskPressure"}, {"type": "Ready"}],
      "conditions": [{"type": "Ready", "status": "False", "reason": "Down"}]}})");
  EXPECT_EQ(node["status"]["conditions"],
            json::parse(R"([{"type": "DiskPressure", "status": "False"},
      {"type": "Ready", "status": "False", "reason": "Down"}])"));
}

TEST(StrategicMergePatchTest, MapDirectivesReplaceAndDelete) {
  json pod = Patched("Pod", kPod, R"({"metadata": {"labels": {"$patch": "replace", "z": "9"}}})");
  EXPECT_EQ(pod["metadata"]["labels"], json::parse(R"({"z": "9"})"));
  pod = Patched("Pod", kPod, R"({"metadata": {"labels": {"$patch": "delete"}}})");
  EXPECT_EQ(pod["metadata"]["labels"], json::object());
}

TEST(StrategicMergePatchTest, WhatItCannotApplyIsRefusedNamingTheField) {
  EXPECT_THAT(
      PatchError("Pod", kPod, R"({"spec": {"template": {"env": [{"value": "1"}]}}})").message(),
      HasSubstr("spec.template.env[0]: each item of this list is merged by its name"));
  EXPECT_THAT(
      PatchError("Pod", kPod, R"({"spec": {"template": {"env": {"name": "A"}}}})").message(),
      HasSubstr("spec.template.env: expected a list"));
  EXPECT_THAT(PatchError("Pod", kPod, R"({"spec": {"$retainKeys": ["template"]}})").message(),
              HasSubstr("spec.$retainKeys: the directive \"$retainKeys\" is not supported"));
  EXPECT_THAT(PatchError("Pod", kPod, R"({"metadata": {"$patch": "explode"}})").message(),
              HasSubstr("metadata.$patch: expected \"replace\", \"merge\" or \"delete\""));
  EXPECT_THAT(
      PatchError("Pod", kPod, R"({"spec": {"$setElementOrder/tolerations": [{"key": "x"}]}})")
          .message(),
      HasSubstr("\"spec.tolerations\" is not merged by key"));
  EXPECT_EQ(PatchError("Pod", kPod, R"([])").code(), StatusCode::kInvalidArgument);
}

TEST(StrategicMergePatchTest, OnlyTheCoreKindsTakeIt) {
  EXPECT_TRUE(AcceptsStrategicMergePatch("Pod"));
  EXPECT_TRUE(AcceptsStrategicMergePatch("Node"));
  EXPECT_TRUE(AcceptsStrategicMergePatch("Event"));
  EXPECT_FALSE(AcceptsStrategicMergePatch("Job"));
  EXPECT_FALSE(AcceptsStrategicMergePatch("Queue"));
}

}  // namespace
}  // namespace strata::api
