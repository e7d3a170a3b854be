#include "api/object_table.h"

#include <gtest/gtest.h>

namespace strata::api {
namespace {

using Json = nlohmann::json;

TEST(ObjectTableTest, AgesFollowKubectlsUnits) {
  FakeClock clock;
  std::string start = FormatRfc3339(clock.Now());
  EXPECT_EQ(ShortAge(start, clock.Now() + std::chrono::seconds(45)), "45s");
  EXPECT_EQ(ShortAge(start, clock.Now() + std::chrono::minutes(12)), "12m");
  EXPECT_EQ(ShortAge(start, clock.Now() + std::chrono::hours(50)), "2d");
  EXPECT_EQ(ShortAge("yesterday", clock.Now()), "<unknown>");
}

TEST(ObjectTableTest, TheFirstAcceptableMediaTypeDecidesBetweenTableAndObject) {
  // What kubectl get sends.
  EXPECT_EQ(TableVersionWanted("application/json;as=Table;v=v1;g=meta.k8s.io,application/"
                               "json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"),
            "v1");
  EXPECT_EQ(TableVersionWanted("application/json; as=Table; g=meta.k8s.io; v=v1beta1"), "v1beta1");
  // Unknown forms are passed over for the next; plain JSON or nothing is the object itself.
  EXPECT_EQ(TableVersionWanted("application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io,"
                               "application/json;as=Table;v=v1;g=meta.k8s.io"),
            "v1");
  EXPECT_EQ(TableVersionWanted("application/json;as=Table;v=v2;g=meta.k8s.io,application/json"),
            std::nullopt);
  EXPECT_EQ(TableVersionWanted("application/json,application/json;as=Table;v=v1;g=meta.k8s.io"),
            std::nullopt);
  EXPECT_EQ(TableVersionWanted(""), std::nullopt);
  EXPECT_EQ(TableVersionWanted("*/*"), std::nullopt);
  EXPECT_EQ(TableVersionWanted("application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io"),
            std::nullopt);
}

TEST(ObjectTableTest, IncludeObjectIsMetadataUnlessAskedOtherwise) {
  EXPECT_EQ(ParseTableObject(""), TableObject::kMetadata);
  EXPECT_EQ(ParseTableObject("Metadata"), TableObject::kMetadata);
  EXPECT_EQ(ParseTableObject("None"), TableObject::kNone);
  EXPECT_EQ(ParseTableObject("Object"), TableObject::kObject);
  EXPECT_EQ(ParseTableObject("object"), std::nullopt);
}

Json RunningPod() {
  return {{"apiVersion", "strata.dev/v1alpha1"},
          {"kind", "Pod"},
          {"metadata",
           {{"name", "trainer-0"},
            {"namespace", "team-a"},
            {"creationTimestamp", "2026-01-01T00:00:00Z"},
            {"resourceVersion", "7"}}},
          {"spec", {{"nodeName", "node-3"}, {"assignedGpus", {{{"index", 2}}, {{"index", 3}}}}}},
          {"status", {{"phase", "Running"}, {"restartCount", 2}}}};
}

TEST(ObjectTableTest, APodsTableHasKubernetesShapeAndStratasColumns) {
  const TimePoint now = *ParseRfc3339("2026-01-01T00:05:00Z");
  const Json table = MakeTable(*FindResourceType("pods"), "v1", {RunningPod()},
                               TableObject::kMetadata, {{"resourceVersion", "9"}}, now);
  EXPECT_EQ(table["kind"], "Table");
  EXPECT_EQ(table["apiVersion"], "meta.k8s.io/v1");
  EXPECT_EQ(table["metadata"]["resourceVersion"], "9");
  std::vector<std::string> names;
  for (const Json& column : table["columnDefinitions"]) names.push_back(column["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"Name", "Phase", "Restarts", "Node", "GPUs", "Age"}));
  EXPECT_EQ(table["columnDefinitions"][0]["format"], "name");
  ASSERT_EQ(table["rows"].size(), 1u);
  EXPECT_EQ(table["rows"][0]["cells"], Json({"trainer-0", "Running", "2", "node-3", "2-3", "5m"}));
  const Json& object = table["rows"][0]["object"];
  EXPECT_EQ(object["kind"], "PartialObjectMetadata");
  EXPECT_EQ(object["apiVersion"], "meta.k8s.io/v1");
  EXPECT_EQ(object["metadata"]["namespace"], "team-a");
  EXPECT_EQ(object["metadata"]["resourceVersion"], "7");
}

TEST(ObjectTableTest, ARowCarriesTheServedObjectOrNothingWhenAsked) {
  const TimePoint now = *ParseRfc3339("2026-01-01T00:05:00Z");
  const Json whole = MakeTable(*FindResourceType("pods"), "v1", {RunningPod()},
                               TableObject::kObject, Json::object(), now);
  // Served as the API serves a pod to kubectl: Kubernetes' v1 Pod.
  EXPECT_EQ(whole["rows"][0]["object"]["apiVersion"], "v1");
  EXPECT_EQ(whole["rows"][0]["object"]["status"]["containerStatuses"][0]["restartCount"], 2);
  const Json none = MakeTable(*FindResourceType("pods"), "v1beta1", {RunningPod()},
                              TableObject::kNone, Json::object(), now);
  EXPECT_EQ(none["apiVersion"], "meta.k8s.io/v1beta1");
  EXPECT_FALSE(none["rows"][0].contains("object"));
}

TEST(ObjectTableTest, AJobsReadyColumnCountsItsRunningPods) {
  const Json job = {{"apiVersion", "strata.dev/v1alpha1"},
                    {"kind", "Job"},
                    {"metadata", {{"name", "train"}, {"namespace", "team-a"}}},
                    {"spec",
                     {{"replicas", 2},
                      {"queue", "team-a"},
                      {"resources", {{"gpu", "8"}}},
                      {"template", {{"command", {"python3"}}}}}},
                    {"status", {{"phase", "Running"}}}};
  Json pod = RunningPod();
  pod["spec"]["owner"] = {{"kind", "Job"}, {"name", "train"}};
  Json other = pod;
  other["spec"]["owner"]["name"] = "another";
  const std::vector<std::string> cells =
      TableCells(*FindResourceType("jobs"), job, FakeClock().Now(), {pod, other});
  EXPECT_EQ(cells[2], "1/2");
  EXPECT_EQ(cells[4], "2x8");
  EXPECT_EQ(cells[5], "team-a");
}

TEST(ObjectTableTest, AJobOfSeveralRolesCountsThePodsAndGpusOfEach) {
  const Json job = {{"apiVersion", "strata.dev/v1alpha1"},
                    {"kind", "Job"},
                    {"metadata", {{"name", "js"}, {"namespace", "default"}}},
                    {"spec",
                     {{"roles",
                       {{{"name", "driver"}, {"template", {{"command", {"python3", "d.py"}}}}},
                        {{"name", "workers"},
                         {"replicas", 4},
                         {"resources", {{"gpu", "8"}}},
                         {"template", {{"command", {"python3", "w.py"}}}}}}}}}};
  const std::vector<std::string> cells =
      TableCells(*FindResourceType("jobs"), job, FakeClock().Now(), {});
  EXPECT_EQ(cells[2], "0/5");
  EXPECT_EQ(cells[4], "1x0+4x8");
}

}  // namespace
}  // namespace strata::api
