#include "api/field_set.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace strata::api {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;

const Json kPod = Json::parse(R"({
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "p", "namespace": "a", "uid": "u", "resourceVersion": "3",
                 "labels": {"app": "x"}},
    "spec": {"restartPolicy": "Never", "tolerations": [{"key": "k"}],
             "containers": [{"name": "main", "image": "i", "args": ["1"],
                             "env": [{"name": "A", "value": "1"}]}]},
    "status": {"phase": "Running"}})");

TEST(FieldSetTest, AnObjectsFieldsAreItsLeavesAndKeyedItemsWithoutBookkeeping) {
  const FieldSet fields = FieldsOf("Pod", kPod, FieldScope::kObject);
  const std::string main = R"(k:{"name":"main"})";
  const std::string a = R"(k:{"name":"A"})";
  const FieldSet expected = {
      {"f:metadata", "f:labels", "f:app"},
      {"f:spec", "f:restartPolicy"},
      {"f:spec", "f:tolerations"},  // atomic: one field
      {"f:spec", "f:containers", main, "."},
      {"f:spec", "f:containers", main, "f:name"},
      {"f:spec", "f:containers", main, "f:image"},
      {"f:spec", "f:containers", main, "f:args"},
      {"f:spec", "f:containers", main, "f:env", a, "."},
      {"f:spec", "f:containers", main, "f:env", a, "f:name"},
      {"f:spec", "f:containers", main, "f:env", a, "f:value"},
  };
  EXPECT_EQ(fields, expected);
  EXPECT_EQ(FieldsOf("Pod", kPod, FieldScope::kStatus), FieldSet({{"f:status", "f:phase"}}));
}

TEST(FieldSetTest, FieldsV1RoundTripsAndNamesABadStep) {
  const FieldSet fields = FieldsOf("Pod", kPod, FieldScope::kObject);
  const Json v1 = FieldsToV1(fields);
  EXPECT_EQ(v1["f:spec"]["f:containers"][R"(k:{"name":"main"})"]["."], Json::object());
  EXPECT_EQ(FieldsFromV1(v1), fields);
  Result<FieldSet> bad = FieldsFromV1(Json::parse(R"({"f:spec": {"x": {}}})"));
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message(), HasSubstr("fieldsV1: f:spec/x: a step is"));
}

TEST(FieldSetTest, PathsAreNamedReadAndRemovedAsKubernetesNamesThem) {
  const FieldPath image = {"f:spec", "f:containers", R"(k:{"name":"main"})", "f:image"};
  EXPECT_EQ(DescribeFieldPath(image), R"(.spec.containers[name="main"].image)");
  ASSERT_NE(ValueAt(kPod, image), nullptr);
  EXPECT_EQ(*ValueAt(kPod, image), "i");
  EXPECT_EQ(ValueAt(kPod, {"f:spec", "f:containers", R"(k:{"name":"other"})", "f:image"}), nullptr);
  Json pod = kPod;
  RemoveField(pod, image);
  EXPECT_FALSE(pod["spec"]["containers"][0].contains("image"));
  RemoveField(pod, {"f:spec", "f:containers", R"(k:{"name":"main"})", "."});
  EXPECT_EQ(pod["spec"]["containers"], Json::array());
}

TEST(FieldSetTest, ChangedFieldsAreThoseWithANewValue) {
  Json after = kPod;
  after["metadata"]["labels"]["app"] = "y";
  after["metadata"]["resourceVersion"] = "4";
  EXPECT_EQ(ChangedFields("Pod", kPod, after, FieldScope::kObject),
            FieldSet({{"f:metadata", "f:labels", "f:app"}}));
}

TEST(FieldSetTest, AnApplyMergesKeyedListsByKeyAndReplacesOthers) {
  const Json applied = Json::parse(R"({"spec": {"tolerations": [{"key": "z"}],
      "containers": [{"name": "side", "image": "s"}, {"name": "main", "image": "j"}]}})");
  const Json merged = MergeApplied("Pod", kPod, applied);
  EXPECT_EQ(merged["spec"]["tolerations"], Json::parse(R"([{"key": "z"}])"));
  ASSERT_EQ(merged["spec"]["containers"].size(), 2u);
  EXPECT_EQ(merged["spec"]["containers"][0]["image"], "j");
  EXPECT_EQ(merged["spec"]["containers"][0]["args"], Json({"1"}));
  EXPECT_EQ(merged["spec"]["containers"][1]["name"], "side");
}

}  // namespace
}  // namespace strata::api
