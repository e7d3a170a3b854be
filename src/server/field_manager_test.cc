// Field management and server-side apply over objects in their served form (no server).
#include "server/field_manager.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace strata::server {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;

FieldWrite By(std::string manager, std::string kind = "Job") {
  FieldWrite write;
  write.kind = std::move(kind);
  write.api_version = write.kind == "Pod" ? "v1" : "strata.dev/v1alpha1";
  write.manager = std::move(manager);
  write.time = "2026-01-01T00:00:00Z";
  return write;
}

Json JobWith(const Json& spec, const Json& labels = Json::object()) {
  Json job = {{"apiVersion", "strata.dev/v1alpha1"},
              {"kind", "Job"},
              {"metadata", {{"name", "train"}, {"namespace", "team-a"}}},
              {"spec", spec}};
  if (!labels.empty()) job["metadata"]["labels"] = labels;
  return job;
}

// The managers of `object` and the fields each one owns, as fieldsV1.
std::map<std::string, Json> Owners(const Json& object) {
  std::map<std::string, Json> owners;
  for (const Json& entry : object["metadata"].value("managedFields", Json::array())) {
    owners[entry["manager"].get<std::string>() + "/" + entry["operation"].get<std::string>()] =
        entry["fieldsV1"];
  }
  return owners;
}

Json Apply(const FieldWrite& who, const Json& live, const Json& applied, bool force = false) {
  Result<Json> merged = ServerSideApply(who, force, &live, applied);
  EXPECT_TRUE(merged) << merged.error().ToString();
  return merged ? *merged : Json();
}

TEST(FieldManagerTest, AnApplyCreatesTheObjectOwnedByItsManager) {
  Result<Json> created =
      ServerSideApply(By("ci"), false, nullptr, JobWith({{"replicas", 2}}, {{"team", "a"}}));
  ASSERT_TRUE(created) << created.error().ToString();
  EXPECT_EQ((*created)["spec"]["replicas"], 2);
  const Json& entry = (*created)["metadata"]["managedFields"][0];
  EXPECT_EQ(entry["manager"], "ci");
  EXPECT_EQ(entry["operation"], "Apply");
  EXPECT_EQ(entry["apiVersion"], "strata.dev/v1alpha1");
  EXPECT_EQ(entry["fieldsType"], "FieldsV1");
  EXPECT_EQ(entry["fieldsV1"], Json::parse(R"({"f:metadata": {"f:labels": {"f:team": {}}},
                            "f:spec": {"f:replicas": {}}})"));
}

TEST(FieldManagerTest, ADifferentValueForAnotherManagersFieldConflictsUnlessForced) {
  const Json live = Apply(By("alice"), JobWith({}), JobWith({{"replicas", 2}, {"priority", 1}}));
  Result<Json> refused =
      ServerSideApply(By("bob"), false, &live, JobWith({{"replicas", 3}, {"priority", 1}}));
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), StatusCode::kConflict);
  EXPECT_EQ(refused.error().message(),
            "Apply failed with 1 conflict: conflict with \"alice\" using strata.dev/v1alpha1: "
            ".spec.replicas");

  const Json forced = Apply(By("bob"), live, JobWith({{"replicas", 3}, {"priority", 1}}), true);
  EXPECT_EQ(forced["spec"]["replicas"], 3);
  std::map<std::string, Json> owners = Owners(forced);
  // The same value is owned by both; the forced field changed hands.
  EXPECT_EQ(owners["alice/Apply"], Json::parse(R"({"f:spec": {"f:priority": {}}})"));
  EXPECT_EQ(owners["bob/Apply"],
            Json::parse(R"({"f:spec": {"f:priority": {}, "f:replicas": {}}})"));
}

TEST(FieldManagerTest, FieldsAManagerStopsApplyingGoUnlessAnotherManagerOwnsThem) {
  Json live = Apply(By("alice"), JobWith({}),
                    JobWith({{"replicas", 2}}, {{"team", "a"}, {"tier", "gold"}, {"x", "1"}}));
  live = Apply(By("bob"), live, JobWith({}, {{"x", "1"}}));
  live = Apply(By("alice"), live, JobWith({{"replicas", 2}}, {{"team", "a"}}));
  // tier was alice's alone; x is bob's too.
  EXPECT_EQ(live["metadata"]["labels"], Json({{"team", "a"}, {"x", "1"}}));
  EXPECT_EQ(Owners(live)["alice/Apply"], Json::parse(R"({"f:metadata": {"f:labels": {"f:team": {}}},
                            "f:spec": {"f:replicas": {}}})"));
}

TEST(FieldManagerTest, KeyedListsMergeByKeyAndAtomicListsAreReplacedWhole) {
  auto pod = [](const Json& containers) {
    return Json{{"apiVersion", "v1"},
                {"kind", "Pod"},
                {"metadata", {{"name", "p"}}},
                {"spec", {{"containers", containers}}}};
  };
  Json live = Apply(By("alice", "Pod"), pod(Json::array()),
                    pod(Json::parse(R"([{"name": "main", "image": "a", "args": ["1", "2"]}])")));
  live = Apply(By("bob", "Pod"), live, pod(Json::parse(R"([{"name": "side", "image": "b"}])")));
  ASSERT_EQ(live["spec"]["containers"].size(), 2u);
  EXPECT_EQ(Owners(live)["bob/Apply"],
            Json::parse(R"({"f:spec": {"f:containers": {"k:{\"name\":\"side\"}": {
                               ".": {}, "f:image": {}, "f:name": {}}}}})"));
  // alice's args are one field: replaced whole, not merged item by item.
  live = Apply(By("alice", "Pod"), live,
               pod(Json::parse(R"([{"name": "main", "image": "a", "args": ["3"]}])")));
  EXPECT_EQ(live["spec"]["containers"][0]["args"], Json({"3"}));
  // alice stops applying her container: it goes, bob's stays.
  live = Apply(By("alice", "Pod"), live, pod(Json::array()));
  EXPECT_EQ(live["spec"]["containers"], Json::parse(R"([{"name": "side", "image": "b"}])"));
}

TEST(FieldManagerTest, UpdatesTakeTheFieldsTheyChange) {
  const Json created = JobWith({{"replicas", 2}, {"priority", 1}});
  Result<Json> managed =
      ManagedFieldsAfterUpdate(By("kubectl-client-side-apply"), nullptr, created);
  ASSERT_TRUE(managed) << managed.error().ToString();
  Json live = created;
  live["metadata"]["managedFields"] = *managed;
  live = Apply(By("ci"), live, JobWith({{"priority", 1}}));

  Json edited = live;
  edited["spec"]["priority"] = 5;
  edited["spec"].erase("replicas");
  managed = ManagedFieldsAfterUpdate(By("kubectl-edit"), &live, edited);
  ASSERT_TRUE(managed) << managed.error().ToString();
  edited["metadata"]["managedFields"] = *managed;
  std::map<std::string, Json> owners = Owners(edited);
  EXPECT_EQ(owners["kubectl-edit/Update"], Json::parse(R"({"f:spec": {"f:priority": {}}})"));
  // replicas is gone and priority changed hands: nothing is left to the first two.
  EXPECT_EQ(owners.count("kubectl-client-side-apply/Update"), 0u);
  EXPECT_EQ(owners.count("ci/Apply"), 0u);
  EXPECT_EQ((*managed)[0]["operation"], "Update");
}

TEST(FieldManagerTest, KubectlServerSideApplyTakesOverWhatClientSideApplyLastApplied) {
  // kubectl apply (client-side) created it; someone scaled it since; the same file is applied
  // server-side: what the file says wins, as client-side apply would have made it.
  Json created = JobWith({{"replicas", 2}});
  created["metadata"]["annotations"][std::string(kLastAppliedAnnotation)] =
      JobWith({{"replicas", 2}}).dump();
  Result<Json> managed =
      ManagedFieldsAfterUpdate(By("kubectl-client-side-apply"), nullptr, created);
  ASSERT_TRUE(managed);
  created["metadata"]["managedFields"] = *managed;
  Json scaled = created;
  scaled["spec"]["replicas"] = 5;
  managed = ManagedFieldsAfterUpdate(By("kubectl-client-side-apply"), &created, scaled);
  ASSERT_TRUE(managed);
  scaled["metadata"]["managedFields"] = *managed;

  const Json applied = Apply(By("kubectl"), scaled, JobWith({{"replicas", 2}}));
  EXPECT_EQ(applied["spec"]["replicas"], 2);
  // The annotation follows, so that a later client-side apply reads what was applied.
  EXPECT_EQ(Json::parse(applied["metadata"]["annotations"][std::string(kLastAppliedAnnotation)]
                            .get<std::string>())["spec"],
            Json({{"replicas", 2}}));
  // Another value than the last applied one is a real conflict.
  Result<Json> refused = ServerSideApply(By("kubectl"), false, &scaled, JobWith({{"replicas", 7}}));
  ASSERT_FALSE(refused);
  EXPECT_THAT(refused.error().message(), HasSubstr("\"kubectl-client-side-apply\""));
}

TEST(FieldManagerTest, MalformedManagedFieldsAndManagersAreNamed) {
  Json live = JobWith({{"replicas", 2}});
  live["metadata"]["managedFields"] = Json::parse(
      R"([{"manager": "x", "operation": "Apply", "fieldsV1": {"f:spec": {"q:odd": {}}}}])");
  Result<Json> refused = ServerSideApply(By("y"), false, &live, JobWith({{"replicas", 2}}));
  ASSERT_FALSE(refused);
  EXPECT_THAT(refused.error().message(),
              HasSubstr("metadata.managedFields[0]: fieldsV1: f:spec/q:odd"));

  Json with_fields = JobWith({});
  with_fields["metadata"]["managedFields"] = Json::array({Json::object()});
  refused = ServerSideApply(By("y"), false, nullptr, with_fields);
  ASSERT_FALSE(refused);
  EXPECT_THAT(refused.error().message(), HasSubstr("metadata.managedFields: must be absent"));

  Result<std::string> missing = FieldManagerOf({}, "kubectl/v1.37.2 (linux/amd64)", true);
  ASSERT_FALSE(missing);
  EXPECT_THAT(missing.error().message(), HasSubstr("fieldManager: required"));
  EXPECT_EQ(FieldManagerOf({}, "kubectl/v1.37.2 (linux/amd64)", false), "kubectl");
  EXPECT_EQ(FieldManagerOf({{"fieldManager", "ci"}}, "", true), "ci");
  EXPECT_FALSE(FieldManagerOf({{"fieldManager", std::string(129, 'm')}}, "", true));
}

}  // namespace
}  // namespace strata::server
