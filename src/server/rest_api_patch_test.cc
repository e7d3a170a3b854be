// PATCH through the REST API (merge, JSON and strategic merge patches), the core kinds' served
// form, and pods' evictions.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/annotations.h"
#include "server/test_api_server.h"

namespace strata::server {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;

constexpr char kMerge[] = "application/merge-patch+json";
constexpr char kJsonPatch[] = "application/json-patch+json";
constexpr char kStrategic[] = "application/strategic-merge-patch+json";
constexpr char kApply[] = "application/apply-patch+yaml";

constexpr char kJobPath[] = "/apis/strata.dev/v1alpha1/namespaces/team-a/jobs/train";
constexpr char kNodePath[] = "/api/v1/nodes/gpu-1";
constexpr char kPodPath[] = "/api/v1/namespaces/team-a/pods/probe";

class RestApiPatchTest : public ::testing::Test {
 protected:
  RestApiPatchTest() : client_(server_.Client()) {
    Create("/apis/strata.dev/v1alpha1/namespaces/team-a/jobs", R"({
        "apiVersion": "strata.dev/v1alpha1", "kind": "Job",
        "metadata": {"name": "train", "labels": {"team": "a"}},
        "spec": {"replicas": 2, "resources": {"gpu": "8"}, "template": {"command": ["python"]}}})");
    Create("/api/v1/nodes", R"({
        "apiVersion": "strata.dev/v1alpha1", "kind": "Node", "metadata": {"name": "gpu-1"},
        "status": {"conditions": [{"type": "Ready", "status": "True"},
                                  {"type": "DiskPressure", "status": "False"}]}})");
    Create("/api/v1/namespaces/team-a/pods", R"({
        "apiVersion": "strata.dev/v1alpha1", "kind": "Pod", "metadata": {"name": "probe"},
        "spec": {"nodeName": "gpu-1",
                 "template": {"command": ["python"], "env": [{"name": "A", "value": "1"}]}}})");
  }

  void Create(const std::string& path, const std::string& object) {
    auto created = client_->Call("POST", path, object, "application/json");
    ASSERT_TRUE(created) << created.error().ToString();
  }

  Result<Json> Patch(const std::string& path, const std::string& type, const std::string& patch) {
    return client_->Call("PATCH", path, patch, type);
  }

  testing::TestApiServer server_;
  std::unique_ptr<client::ApiClient> client_;
};

TEST_F(RestApiPatchTest, AMergePatchChangesTheSpecAndLabelsAndNeverTheStatus) {
  auto patched = Patch(kJobPath, kMerge,
                       R"({"metadata": {"labels": {"team": null, "tier": "gold"}},
                           "spec": {"priority": 7}, "status": {"phase": "Succeeded"}})");
  ASSERT_TRUE(patched) << patched.error().ToString();
  EXPECT_EQ((*patched)["metadata"]["labels"], Json({{"tier", "gold"}}));
  EXPECT_EQ((*patched)["spec"]["priority"], 7);
  EXPECT_EQ((*patched)["spec"]["replicas"], 2);
  EXPECT_FALSE(patched->contains("status"));
  auto stored = client_->Get(kJobPath);
  ASSERT_TRUE(stored);
  EXPECT_EQ(*stored, *patched);
}

TEST_F(RestApiPatchTest, PatchesCannotGrowAnObjectPastTheLargestRequest) {
  // Each patch is small (the test server takes 64 KiB bodies); together they would pass 3 MiB.
  const std::string value(60 * 1024, 'x');
  ASSERT_TRUE(Patch(kJobPath, kJsonPatch, R"([{"op": "add", "path": "/spec/template/env",
                                              "value": [{"name": "FIRST", "value": "1"}]}])"));
  Status refused;
  int applied = 1;
  for (int i = 0; i < 60 && refused.ok(); ++i) {
    auto patched = Patch(kJobPath, kJsonPatch,
                         R"([{"op": "add", "path": "/spec/template/env/-", "value": {"name": "V)" +
                             std::to_string(i) + R"(", "value": ")" + value + R"("}}])");
    if (patched) {
      ++applied;
    } else {
      refused = patched.error();
    }
  }
  EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.message(), HasSubstr("over the limit of 3145728"));
  EXPECT_GT(applied, 40);
  auto stored = client_->Get(kJobPath);
  ASSERT_TRUE(stored);
  EXPECT_EQ((*stored)["spec"]["template"]["env"].size(), static_cast<size_t>(applied));
}

TEST_F(RestApiPatchTest, AJsonPatchAppliesInOrderOrNotAtAll) {
  auto patched = Patch(kJobPath, kJsonPatch,
                       R"([{"op": "test", "path": "/spec/replicas", "value": 2},
                           {"op": "replace", "path": "/spec/replicas", "value": 4}])");
  ASSERT_TRUE(patched) << patched.error().ToString();
  EXPECT_EQ((*patched)["spec"]["replicas"], 4);

  auto failed = Patch(kJobPath, kJsonPatch,
                      R"([{"op": "add", "path": "/spec/priority", "value": 1},
                          {"op": "test", "path": "/spec/replicas", "value": 2}])");
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(failed.error().message(), HasSubstr("operation 1 (test \"/spec/replicas\")"));
  auto stored = client_->Get(kJobPath);
  ASSERT_TRUE(stored);
  EXPECT_FALSE((*stored)["spec"].contains("priority"));
}

TEST_F(RestApiPatchTest, APatchedObjectIsValidatedAsAPutIsNamingTheField) {
  auto invalid = Patch(kJobPath, kMerge, R"({"spec": {"replicas": "three"}})");
  ASSERT_FALSE(invalid);
  EXPECT_EQ(invalid.error().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(invalid.error().message(), HasSubstr("spec.replicas"));
  auto unknown = Patch(kJobPath, kMerge, R"({"spec": {"replicaz": 3}})");
  ASSERT_FALSE(unknown);
  EXPECT_THAT(unknown.error().message(), HasSubstr("spec.replicaz"));
  auto renamed = Patch(kJobPath, kMerge, R"({"metadata": {"name": "other"}})");
  ASSERT_FALSE(renamed);
  EXPECT_THAT(renamed.error().message(), HasSubstr("metadata.name"));
}

TEST_F(RestApiPatchTest, AResourceVersionInThePatchIsAPrecondition) {
  auto current = client_->Get(kJobPath);
  ASSERT_TRUE(current);
  const std::string version = (*current)["metadata"]["resourceVersion"];
  auto first =
      Patch(kJobPath, kMerge,
            R"({"metadata": {"resourceVersion": ")" + version + R"("}, "spec": {"priority": 1}})");
  ASSERT_TRUE(first) << first.error().ToString();
  auto stale =
      Patch(kJobPath, kMerge,
            R"({"metadata": {"resourceVersion": ")" + version + R"("}, "spec": {"priority": 2}})");
  ASSERT_FALSE(stale);
  EXPECT_EQ(stale.error().code(), StatusCode::kConflict);
  auto stored = client_->Get(kJobPath);
  ASSERT_TRUE(stored);
  EXPECT_EQ((*stored)["spec"]["priority"], 1);
}

TEST_F(RestApiPatchTest, StrategicMergePatchesAreForTheCoreKinds) {
  auto cordoned = Patch(kNodePath, kStrategic, R"({"spec": {"unschedulable": true}})");
  ASSERT_TRUE(cordoned) << cordoned.error().ToString();
  EXPECT_EQ((*cordoned)["apiVersion"], "v1");
  EXPECT_EQ((*cordoned)["spec"]["unschedulable"], true);

  auto env = Patch(kPodPath, kStrategic,
                   R"({"spec": {"template": {"env": [{"name": "B", "value": "2"}]}}})");
  ASSERT_TRUE(env) << env.error().ToString();
  EXPECT_EQ((*env)["spec"]["template"]["env"],
            Json::parse(R"([{"name": "A", "value": "1"}, {"name": "B", "value": "2"}])"));

  auto job = Patch(kJobPath, kStrategic, R"({"spec": {"priority": 1}})");
  ASSERT_FALSE(job);
  EXPECT_EQ(job.error().code(), StatusCode::kUnimplemented);
  EXPECT_THAT(job.error().message(), HasSubstr("strategic merge patch is not supported for Job"));
}

TEST_F(RestApiPatchTest, TheStatusSubresourceTakesOnlyTheStatus) {
  auto status = Patch(std::string(kNodePath) + "/status", kStrategic,
                      R"({"metadata": {"labels": {"x": "y"}},
                          "status": {"conditions": [{"type": "Ready", "status": "False"}]}})");
  ASSERT_TRUE(status) << status.error().ToString();
  EXPECT_EQ((*status)["status"]["conditions"], Json::parse(R"([{"type": "Ready", "status": "False"},
                            {"type": "DiskPressure", "status": "False"}])"));
  EXPECT_FALSE((*status)["metadata"].contains("labels"));

  auto pod =
      Patch(std::string(kPodPath) + "/status", kMerge, R"({"status": {"phase": "Running"}})");
  ASSERT_TRUE(pod) << pod.error().ToString();
  EXPECT_EQ((*pod)["status"]["phase"], "Running");
}

TEST_F(RestApiPatchTest, CoreKindsAreServedAsV1AndWhatWasReadCanBePutBack) {
  auto node = client_->Get(kNodePath);
  ASSERT_TRUE(node);
  EXPECT_EQ((*node)["apiVersion"], "v1");
  auto nodes = client_->Get("/api/v1/nodes");
  ASSERT_TRUE(nodes);
  EXPECT_EQ((*nodes)["items"][0]["apiVersion"], "v1");
  auto job = client_->Get(kJobPath);
  ASSERT_TRUE(job);
  EXPECT_EQ((*job)["apiVersion"], "strata.dev/v1alpha1");

  (*node)["metadata"]["labels"]["rack"] = "r1";
  auto put = client_->Call("PUT", kNodePath, node->dump(), "application/json");
  ASSERT_TRUE(put) << put.error().ToString();
  EXPECT_EQ((*put)["metadata"]["labels"]["rack"], "r1");
  EXPECT_EQ(server_.store().Get({"Node", "", "gpu-1"})->body["apiVersion"], "strata.dev/v1alpha1");
}

TEST_F(RestApiPatchTest, ScaleIsRefusedSayingWhy) {
  auto scaled = Patch(std::string(kJobPath) + "/scale", kMerge, R"({"spec": {"replicas": 3}})");
  ASSERT_FALSE(scaled);
  EXPECT_EQ(scaled.error().code(), StatusCode::kNotFound);
  EXPECT_THAT(scaled.error().message(),
              HasSubstr("jobs have no scale subresource in strata: a Job's spec.replicas is the "
                        "size of its gang"));
}

TEST_F(RestApiPatchTest, NothingIsPatchedWithoutACredential) {
  RestApiOptions options;
  options.tokens = {{"s3cret", "admin", {}}};
  testing::TestApiServer guarded(options);
  auto anonymous = guarded.Client("");
  auto patched = anonymous->Call("PATCH", kJobPath, R"({"spec": {"priority": 1}})", kMerge);
  ASSERT_FALSE(patched);
  EXPECT_EQ(patched.error().code(), StatusCode::kUnauthenticated);
}

TEST_F(RestApiPatchTest, AnEvictionStopsAnOwnedPodAndDeletesAStandaloneOne) {
  auto v1 = client_->Get("/api/v1");
  ASSERT_TRUE(v1);
  EXPECT_THAT((*v1)["resources"].dump(),
              HasSubstr(R"({"group":"policy","kind":"Eviction","name":"pods/eviction")"));

  Create("/api/v1/namespaces/team-a/pods", R"({
      "apiVersion": "strata.dev/v1alpha1", "kind": "Pod", "metadata": {"name": "train-0"},
      "spec": {"owner": {"kind": "Job", "name": "train"}, "nodeName": "gpu-1",
               "template": {"command": ["python"]}}})");
  const Json eviction = {{"apiVersion", "policy/v1"},
                         {"kind", "Eviction"},
                         {"metadata", {{"name", "train-0"}, {"namespace", "team-a"}}}};
  auto evicted = client_->Call("POST", "/api/v1/namespaces/team-a/pods/train-0/eviction",
                               eviction.dump(), "application/json");
  ASSERT_TRUE(evicted) << evicted.error().ToString();
  EXPECT_EQ((*evicted)["status"], "Success");
  auto owned = client_->Get("/api/v1/namespaces/team-a/pods/train-0");
  ASSERT_TRUE(owned);
  EXPECT_EQ((*owned)["metadata"]["annotations"][api::kStopRequestedAnnotation], "Evicted");

  auto standalone =
      client_->Call("POST", std::string(kPodPath) + "/eviction",
                    R"({"apiVersion": "policy/v1", "kind": "Eviction"})", "application/json");
  ASSERT_TRUE(standalone) << standalone.error().ToString();
  auto gone = client_->Get(kPodPath);
  ASSERT_FALSE(gone);
  EXPECT_EQ(gone.error().code(), StatusCode::kNotFound);

  auto wrong_name =
      client_->Call("POST", "/api/v1/namespaces/team-a/pods/train-0/eviction",
                    R"({"kind": "Eviction", "metadata": {"name": "other"}})", "application/json");
  ASSERT_FALSE(wrong_name);
  EXPECT_THAT(wrong_name.error().message(), HasSubstr("metadata.name"));
}

}  // namespace
}  // namespace strata::server

namespace strata::server {
namespace {

TEST_F(RestApiPatchTest, ServerSideApplyCreatesMergesAndNamesConflicts) {
  const std::string fresh = "/apis/strata.dev/v1alpha1/namespaces/team-a/jobs/fresh";
  auto nameless = Patch(fresh, kApply, "apiVersion: strata.dev/v1alpha1\nkind: Job\n");
  ASSERT_FALSE(nameless);
  EXPECT_THAT(nameless.error().message(), HasSubstr("fieldManager: required"));

  // Created when absent, as YAML.
  auto created = Patch(fresh + "?fieldManager=ci", kApply, R"(apiVersion: strata.dev/v1alpha1
kind: Job
metadata: {name: fresh}
spec: {replicas: 1, template: {command: [python]}}
)");
  ASSERT_TRUE(created) << created.error().ToString();
  EXPECT_EQ((*created)["metadata"]["managedFields"][0]["manager"], "ci");
  EXPECT_EQ((*created)["metadata"]["managedFields"][0]["operation"], "Apply");

  // The Job created by POST is the strata client's Update; ci applies a priority of its own.
  auto applied = Patch(std::string(kJobPath) + "?fieldManager=ci", kApply,
                       R"({"apiVersion": "strata.dev/v1alpha1", "kind": "Job",
                           "metadata": {"name": "train"}, "spec": {"priority": 4}})");
  ASSERT_TRUE(applied) << applied.error().ToString();
  EXPECT_EQ((*applied)["spec"]["priority"], 4);
  EXPECT_EQ((*applied)["spec"]["replicas"], 2);
  std::vector<std::string> managers;
  for (const Json& entry : (*applied)["metadata"]["managedFields"]) {
    managers.push_back(entry["manager"].get<std::string>() + "/" +
                       entry["operation"].get<std::string>());
  }
  EXPECT_EQ(managers, (std::vector<std::string>{"strata/Update", "ci/Apply"}));

  auto conflict = Patch(std::string(kJobPath) + "?fieldManager=other", kApply,
                        R"({"apiVersion": "strata.dev/v1alpha1", "kind": "Job",
                            "metadata": {"name": "train"}, "spec": {"priority": 6}})");
  ASSERT_FALSE(conflict);
  EXPECT_EQ(conflict.error().code(), StatusCode::kConflict);
  EXPECT_THAT(conflict.error().message(),
              HasSubstr("conflict with \"ci\" using strata.dev/v1alpha1: .spec.priority"));

  // A dry run says what would be written and writes nothing.
  auto dry = Patch(std::string(kJobPath) + "?fieldManager=other&force=true&dryRun=All", kApply,
                   R"({"apiVersion": "strata.dev/v1alpha1", "kind": "Job",
                       "metadata": {"name": "train"}, "spec": {"priority": 6}})");
  ASSERT_TRUE(dry) << dry.error().ToString();
  EXPECT_EQ((*dry)["spec"]["priority"], 6);
  EXPECT_EQ((*client_->Get(kJobPath))["spec"]["priority"], 4);

  auto forced = Patch(std::string(kJobPath) + "?fieldManager=other&force=true", kApply,
                      R"({"apiVersion": "strata.dev/v1alpha1", "kind": "Job",
                          "metadata": {"name": "train"}, "spec": {"priority": 6}})");
  ASSERT_TRUE(forced) << forced.error().ToString();
  EXPECT_EQ((*forced)["spec"]["priority"], 6);
  // ci no longer owns the priority; it stops applying it and the value stays other's.
  auto released = Patch(std::string(kJobPath) + "?fieldManager=ci", kApply,
                        R"({"apiVersion": "strata.dev/v1alpha1", "kind": "Job",
                            "metadata": {"name": "train"}})");
  ASSERT_TRUE(released) << released.error().ToString();
  EXPECT_EQ((*released)["spec"]["priority"], 6);

  auto wrong_kind = Patch(std::string(kJobPath) + "?fieldManager=ci", kApply,
                          R"({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "train"}})");
  ASSERT_FALSE(wrong_kind);
  EXPECT_THAT(wrong_kind.error().message(), HasSubstr("apiVersion strata.dev/v1alpha1, kind Job"));
}

TEST_F(RestApiPatchTest, ServerSideApplyOfAPodChangesItsLabelsInKubernetesShape) {
  auto applied = Patch(std::string(kPodPath) + "?fieldManager=ops", kApply,
                       R"({"apiVersion": "v1", "kind": "Pod",
                           "metadata": {"name": "probe", "labels": {"owner": "ops"}}})");
  ASSERT_TRUE(applied) << applied.error().ToString();
  EXPECT_EQ((*applied)["metadata"]["labels"]["owner"], "ops");
  auto stored = client_->Get(kPodPath);
  ASSERT_TRUE(stored);
  bool ops = false;
  for (const Json& entry : (*stored)["metadata"]["managedFields"]) ops |= entry["manager"] == "ops";
  EXPECT_TRUE(ops) << (*stored)["metadata"].dump();
}

}  // namespace
}  // namespace strata::server
