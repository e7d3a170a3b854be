// Compatible kinds served at their own paths from the native Jobs they decode to
// (api/source_form.h): Kubernetes' batch/v1 Jobs at /apis/batch/v1, JobSets at
// /apis/jobset.x-k8s.io/v1alpha2.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "api/source_form.h"
#include "server/rest_api_test_fixture.h"

namespace strata::server {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;

constexpr char kJobs[] = "/apis/batch/v1/namespaces/team-a/jobs";
constexpr char kIndexed[] = "/apis/batch/v1/namespaces/team-a/jobs/indexed";

constexpr char kBatchJob[] = R"yaml(apiVersion: batch/v1
kind: Job
metadata:
  name: indexed
  labels: {team: research}
spec:
  completions: 2
  parallelism: 2
  completionMode: Indexed
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: python:3.12
        command: [python3, -c, "print(1)"]
        env: [{name: EPOCHS, value: "3"}]
)yaml";

class SourceKindsTest : public RestApiTest {
 protected:
  // Sets the stored (native) Job's status as the job controller would.
  void SetNativeStatus(const Json& status) {
    Result<store::Object> job = store_->Get({"Job", "team-a", "indexed"});
    ASSERT_TRUE(job) << job.error().ToString();
    job->body["status"] = status;
    ASSERT_TRUE(store_->Update(std::move(*job)));
  }

  Json Condition(const Json& served, std::string_view type) {
    for (const Json& condition : served["status"].value("conditions", Json::array())) {
      if (condition["type"] == type) return condition;
    }
    return Json();
  }
};

TEST_F(SourceKindsTest, DiscoveryListsTheBatchGroupFirstAndItsJobs) {
  Start();
  auto [code, groups] = Send("GET", "/apis");
  ASSERT_EQ(code, 200);
  EXPECT_EQ(groups["groups"][0]["name"], "batch");
  EXPECT_EQ(groups["groups"][0]["preferredVersion"]["groupVersion"], "batch/v1");
  auto [list_code, resources] = Send("GET", "/apis/batch/v1");
  ASSERT_EQ(list_code, 200);
  ASSERT_EQ(resources["resources"].size(), 2u);
  EXPECT_EQ(resources["resources"][1]["name"], "jobs/status");
  EXPECT_EQ(resources["resources"][1]["verbs"], Json({"get"}));
  const Json& jobs = resources["resources"][0];
  EXPECT_EQ(jobs["name"], "jobs");
  EXPECT_EQ(jobs["kind"], "Job");
  EXPECT_EQ(jobs["namespaced"], true);
  EXPECT_EQ(jobs["verbs"], Json({"create", "delete", "get", "list", "patch", "update", "watch"}));
  auto [group_code, group] = Send("GET", "/apis/batch");
  EXPECT_EQ(group_code, 200);
  EXPECT_EQ(group["name"], "batch");
  // strata's Jobs keep their group, with a short name apart from batch/v1's.
  auto [strata_code, strata] = Send("GET", "/apis/strata.dev/v1alpha1");
  ASSERT_EQ(strata_code, 200);
  EXPECT_THAT(strata["resources"].dump(), HasSubstr(R"("shortNames":["sjob"])"));
  // kubectl validates a batch/v1 Job against the group's OpenAPI document.
  auto [index_code, index] = Send("GET", "/openapi/v3");
  ASSERT_EQ(index_code, 200);
  EXPECT_TRUE(index["paths"].contains("apis/batch/v1"));
  auto [doc_code, document] = Send("GET", "/openapi/v3/apis/batch/v1");
  ASSERT_EQ(doc_code, 200);
  EXPECT_TRUE(document["paths"].contains("/apis/batch/v1/namespaces/{namespace}/jobs/{name}"));
  EXPECT_EQ(document["components"]["schemas"]["batch.v1.Job"]["x-kubernetes-group-version-kind"][0]
                    ["group"],
            "batch");
}

TEST_F(SourceKindsTest, ACreatedJobIsServedAsWrittenAndStoredAsANativeJob) {
  Start();
  auto [code, created] = Send("POST", kJobs, kBatchJob);
  ASSERT_EQ(code, 201) << created.dump();
  EXPECT_EQ(created["apiVersion"], "batch/v1");
  EXPECT_EQ(created["kind"], "Job");
  EXPECT_EQ(created["spec"]["completionMode"], "Indexed");
  EXPECT_EQ(created["spec"]["template"]["spec"]["containers"][0]["image"], "python:3.12");
  // Kubernetes' defaults where the document has none.
  EXPECT_EQ(created["spec"]["backoffLimit"], 6);
  EXPECT_EQ(created["spec"]["suspend"], false);
  EXPECT_FALSE(created["metadata"]["uid"].get<std::string>().empty());
  EXPECT_EQ(created["metadata"]["labels"]["team"], "research");
  EXPECT_FALSE(created["metadata"].contains("annotations"));  // the kept source is not shown
  ASSERT_TRUE(created["metadata"]["managedFields"].is_array());
  EXPECT_EQ(created["metadata"]["managedFields"][0]["apiVersion"], "batch/v1");
  EXPECT_THAT(created["metadata"]["managedFields"][0]["fieldsV1"].dump(),
              HasSubstr("f:completionMode"));

  // The same object, as strata's own Job: what the scheduler and the job controller run.
  auto native = client_->Get("/apis/strata.dev/v1alpha1/namespaces/team-a/jobs/indexed");
  ASSERT_TRUE(native) << native.error().ToString();
  EXPECT_EQ((*native)["apiVersion"], "strata.dev/v1alpha1");
  EXPECT_EQ((*native)["spec"]["replicas"], 2);
  EXPECT_EQ((*native)["metadata"]["uid"], created["metadata"]["uid"]);
  EXPECT_TRUE(api::SourceTypeOf(*native) == &api::BatchJobType());

  auto [get_code, got] = Send("GET", kIndexed);
  ASSERT_EQ(get_code, 200);
  EXPECT_EQ(got["spec"], created["spec"]);
  EXPECT_EQ(got["metadata"]["resourceVersion"], created["metadata"]["resourceVersion"]);
}

TEST_F(SourceKindsTest, OnlyJobsWrittenAsBatchV1AreServedThere) {
  Start();
  ASSERT_EQ(Send("POST", kJobs, kBatchJob).first, 201);
  ASSERT_TRUE(Post("/apis/strata.dev/v1alpha1/namespaces/team-a/jobs", kJob));
  auto [code, list] = Send("GET", kJobs);
  ASSERT_EQ(code, 200);
  EXPECT_EQ(list["kind"], "JobList");
  EXPECT_EQ(list["apiVersion"], "batch/v1");
  ASSERT_EQ(list["items"].size(), 1u);
  EXPECT_EQ(list["items"][0]["metadata"]["name"], "indexed");
  EXPECT_EQ(list["items"][0]["apiVersion"], "batch/v1");
  auto [all_code, all] = Send("GET", "/apis/batch/v1/jobs");
  ASSERT_EQ(all_code, 200);
  EXPECT_EQ(all["items"].size(), 1u);
  // strata's own Job: not found there, nor deleted through it.
  auto [get_code, missing] = Send("GET", std::string(kJobs) + "/train");
  EXPECT_EQ(get_code, 404);
  EXPECT_THAT(missing["message"].dump(), HasSubstr("jobs.batch \\\"train\\\" not found"));
  EXPECT_EQ(Send("DELETE", std::string(kJobs) + "/train").first, 404);
  EXPECT_TRUE(store_->Get({"Job", "team-a", "train"}));
  // Nor created through it.
  auto [post_code, refused] = Send("POST", kJobs, kJob);
  EXPECT_EQ(post_code, 400) << refused.dump();
  EXPECT_THAT(refused["message"].get<std::string>(), HasSubstr("apiVersion:"));
  // Both are strata's Jobs.
  auto native = client_->Get("/apis/strata.dev/v1alpha1/namespaces/team-a/jobs");
  ASSERT_TRUE(native);
  EXPECT_EQ((*native)["items"].size(), 2u);
}

TEST_F(SourceKindsTest, ABadDocumentIsInvalidNamingTheField) {
  Start();
  std::string bad = kBatchJob;
  bad.replace(bad.find("completions: 2"), 14, "completions: 3");
  auto [code, status] = Send("POST", kJobs, bad);
  // 400 BadRequest, as every kind's invalid document is in strata (api/api_status.cc).
  EXPECT_EQ(code, 400) << status.dump();
  EXPECT_EQ(status["reason"], "BadRequest");
  EXPECT_THAT(status["message"].get<std::string>(), HasSubstr("spec.completions"));
  EXPECT_FALSE(store_->Get({"Job", "team-a", "indexed"}));
}

TEST_F(SourceKindsTest, StatusIsMappedFromTheNativeJobs) {
  Start();
  ASSERT_EQ(Send("POST", kJobs, kBatchJob).first, 201);
  auto [pending_code, pending] = Send("GET", kIndexed);
  ASSERT_EQ(pending_code, 200);
  EXPECT_EQ(pending["status"]["ready"], 0);
  EXPECT_FALSE(pending["status"].contains("active"));
  EXPECT_TRUE(Condition(pending, "Complete").is_null());

  SetNativeStatus({{"phase", "Running"}, {"startTime", "2026-01-01T00:00:00Z"}});
  // The status subresource reads the same; it is the job controller's to write.
  auto [running_code, running] = Send("GET", std::string(kIndexed) + "/status");
  EXPECT_EQ(running_code, 200);
  EXPECT_EQ(running["apiVersion"], "batch/v1");
  EXPECT_EQ(Send("PATCH", std::string(kIndexed) + "/status", R"({"status":{"active":9}})",
                 "application/merge-patch+json")
                .first,
            501);  // Unimplemented, as every write strata does not take (reason MethodNotAllowed)
  EXPECT_EQ(running["status"]["active"], 2);
  EXPECT_EQ(running["status"]["ready"], 2);
  EXPECT_EQ(running["status"]["startTime"], "2026-01-01T00:00:00Z");

  SetNativeStatus({{"phase", "Succeeded"},
                   {"message", "all 2 pod(s) succeeded"},
                   {"startTime", "2026-01-01T00:00:00Z"},
                   {"completionTime", "2026-01-01T00:01:30Z"}});
  auto [done_code, done] = Send("GET", kIndexed);
  EXPECT_EQ(done["status"]["succeeded"], 2);
  EXPECT_EQ(done["status"]["completedIndexes"], "0,1");
  EXPECT_EQ(done["status"]["completionTime"], "2026-01-01T00:01:30Z");
  EXPECT_FALSE(done["status"].contains("active"));
  const Json complete = Condition(done, "Complete");
  EXPECT_EQ(complete["status"], "True");
  EXPECT_EQ(complete["reason"], "CompletionsReached");
  EXPECT_EQ(complete["lastTransitionTime"], "2026-01-01T00:01:30Z");

  auto [table_code, table] =
      Send("GET", kJobs, "", "", "application/json;as=Table;v=v1;g=meta.k8s.io");
  ASSERT_EQ(table_code, 200) << table.dump();
  std::vector<std::string> columns;
  for (const Json& column : table["columnDefinitions"]) columns.push_back(column["name"]);
  EXPECT_EQ(columns,
            std::vector<std::string>({"Name", "Status", "Completions", "Duration", "Age"}));
  EXPECT_EQ(table["rows"][0]["cells"][1], "Complete");
  EXPECT_EQ(table["rows"][0]["cells"][2], "2/2");
  EXPECT_EQ(table["rows"][0]["cells"][3], "90s");
  EXPECT_FALSE(table["rows"][0]["object"]["metadata"].contains("annotations"));

  SetNativeStatus({{"phase", "Failed"},
                   {"reason", "MaxRestartsExceeded"},
                   {"restartCount", 6},
                   {"message", "a pod failed after 6 restarts"}});
  auto [failed_code, failed] = Send("GET", kIndexed);
  EXPECT_EQ(failed["status"]["failed"], 7);
  EXPECT_FALSE(failed["status"].contains("succeeded"));
  const Json failure = Condition(failed, "Failed");
  EXPECT_EQ(failure["status"], "True");
  EXPECT_EQ(failure["reason"], "BackoffLimitExceeded");
  EXPECT_TRUE(Condition(failed, "Complete").is_null());
}

TEST_F(SourceKindsTest, PatchesApplyToTheBatchFormAndAreDecodedAgain) {
  Start();
  ASSERT_EQ(Send("POST", kJobs, kBatchJob).first, 201);
  // Merge patch: a label.
  auto [merge_code, merged] = Send("PATCH", kIndexed, R"({"metadata":{"labels":{"stage":"2"}}})",
                                   "application/merge-patch+json");
  ASSERT_EQ(merge_code, 200) << merged.dump();
  EXPECT_EQ(merged["metadata"]["labels"]["stage"], "2");
  EXPECT_EQ(merged["apiVersion"], "batch/v1");
  // Strategic merge patch, as kubectl apply computes one for a built-in kind: the container is
  // merged by name, its env too.
  const std::string strategic = R"({"spec":{"template":{"spec":{
      "$setElementOrder/containers":[{"name":"main"}],
      "containers":[{"name":"main","env":[{"name":"EPOCHS","value":"5"}]}]}}}})";
  auto [smp_code, patched] =
      Send("PATCH", kIndexed, strategic, "application/strategic-merge-patch+json");
  ASSERT_EQ(smp_code, 200) << patched.dump();
  const Json& container = patched["spec"]["template"]["spec"]["containers"][0];
  EXPECT_EQ(container["image"], "python:3.12");
  EXPECT_EQ(container["env"][0]["value"], "5");
  // The native Job runs what the patch says.
  Result<store::Object> native = store_->Get({"Job", "team-a", "indexed"});
  ASSERT_TRUE(native);
  EXPECT_THAT(native->body["spec"]["template"]["env"].dump(), HasSubstr(R"("value":"5")"));
  // A patch the decoder refuses changes nothing and names the field.
  auto [bad_code, bad] =
      Send("PATCH", kIndexed, R"({"spec":{"parallelism":3}})", "application/merge-patch+json");
  EXPECT_EQ(bad_code, 400);
  EXPECT_THAT(bad["message"].get<std::string>(), HasSubstr("spec.completions"));
  // A PUT of the object as read: its status is the server's, dropped on the way in.
  auto [get_code, current] = Send("GET", kIndexed);
  current["metadata"]["annotations"]["note"] = "kept";
  auto [put_code, replaced] = Send("PUT", kIndexed, current.dump(), "application/json");
  ASSERT_EQ(put_code, 200) << replaced.dump();
  EXPECT_EQ(replaced["metadata"]["annotations"]["note"], "kept");
  EXPECT_EQ(replaced["metadata"]["annotations"].size(), 1u);
}

TEST_F(SourceKindsTest, ServerSideApplyOwnsBatchFieldsAndDeleteRemovesTheJob) {
  Start();
  const std::string applied = std::string(kBatchJob).insert(
      std::string(kBatchJob).find("  name: indexed"), "  namespace: team-a\n");
  auto [code, created] = Send("PATCH", std::string(kIndexed) + "?fieldManager=kubectl", applied,
                              "application/apply-patch+yaml");
  ASSERT_EQ(code, 201) << created.dump();
  EXPECT_EQ(created["apiVersion"], "batch/v1");
  ASSERT_EQ(created["metadata"]["managedFields"].size(), 1u);
  EXPECT_EQ(created["metadata"]["managedFields"][0]["manager"], "kubectl");
  EXPECT_EQ(created["metadata"]["managedFields"][0]["operation"], "Apply");
  EXPECT_THAT(created["metadata"]["managedFields"][0]["fieldsV1"].dump(),
              HasSubstr("f:parallelism"));
  // Applied again with a change: configured in place.
  std::string changed = applied;
  changed.replace(changed.find("team: research"), 14, "team: serving");
  auto [again_code, again] = Send("PATCH", std::string(kIndexed) + "?fieldManager=kubectl", changed,
                                  "application/apply-patch+yaml");
  ASSERT_EQ(again_code, 200) << again.dump();
  EXPECT_EQ(again["metadata"]["labels"]["team"], "serving");

  auto [delete_code, deleted] = Send("DELETE", kIndexed);
  EXPECT_EQ(delete_code, 200);
  EXPECT_EQ(deleted["apiVersion"], "batch/v1");
  EXPECT_FALSE(store_->Get({"Job", "team-a", "indexed"}));
  EXPECT_EQ(Send("GET", kIndexed).first, 404);
}

TEST_F(SourceKindsTest, AWatchSendsBatchV1JobsOnlyInTheirForm) {
  Start();
  // strata's own Job first: a watch that sent it would send it before the batch/v1 one.
  ASSERT_TRUE(Post("/apis/strata.dev/v1alpha1/namespaces/team-a/jobs", kJob));
  ASSERT_EQ(Send("POST", kJobs, kBatchJob).first, 201);
  std::vector<Json> events;
  Status watched = client_->Watch(std::string(kJobs) + "?watch=1", [&](const Json& event) {
    events.push_back(event);
    return false;
  });
  ASSERT_TRUE(watched.ok()) << watched.ToString();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["type"], "ADDED");
  EXPECT_EQ(events[0]["object"]["metadata"]["name"], "indexed");
  EXPECT_EQ(events[0]["object"]["apiVersion"], "batch/v1");
  EXPECT_EQ(events[0]["object"]["spec"]["completionMode"], "Indexed");
}

TEST_F(SourceKindsTest, ATokenScopedToANamespaceReachesItsBatchJobsOnly) {
  RestApiOptions options;
  options.tokens = {{kAdmin, "admin", {}}, {"b-secret", "team-b", {"team-b"}}};
  Start(std::move(options));
  auto team_b = Client("b-secret");
  auto refused = team_b->Call("POST", kJobs, kBatchJob, "application/yaml");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), StatusCode::kPermissionDenied);
  EXPECT_THAT(refused.error().message(), HasSubstr("jobs in namespace team-a is outside it"));
  EXPECT_FALSE(team_b->Get("/apis/batch/v1/jobs"));
  auto created =
      team_b->Call("POST", "/apis/batch/v1/namespaces/team-b/jobs", kBatchJob, "application/yaml");
  ASSERT_TRUE(created) << created.error().ToString();
  EXPECT_EQ((*created)["metadata"]["namespace"], "team-b");
}

constexpr char kJobSets[] = "/apis/jobset.x-k8s.io/v1alpha2/namespaces/team-a/jobsets";

constexpr char kJobSet[] = R"yaml(apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: indexed
spec:
  replicatedJobs:
  - name: workers
    replicas: 2
    template:
      spec:
        parallelism: 1
        completions: 1
        template:
          spec:
            restartPolicy: Never
            containers:
            - name: main
              image: python:3.12
              command: [python3, -c, "print(1)"]
)yaml";

// The second source-served kind: a JobSet, stored as strata's Job, served as a JobSet.
TEST_F(SourceKindsTest, AJobSetIsServedAsWrittenWithItsStatusApartFromBatchJobs) {
  Start();
  auto [discovery_code, resources] = Send("GET", "/apis/jobset.x-k8s.io/v1alpha2");
  ASSERT_EQ(discovery_code, 200);
  EXPECT_EQ(resources["resources"][0]["name"], "jobsets");
  EXPECT_EQ(resources["resources"][0]["kind"], "JobSet");
  auto [code, created] = Send("POST", kJobSets, kJobSet);
  ASSERT_EQ(code, 201) << created.dump();
  EXPECT_EQ(created["apiVersion"], "jobset.x-k8s.io/v1alpha2");
  EXPECT_EQ(created["kind"], "JobSet");
  EXPECT_EQ(created["spec"]["replicatedJobs"][0]["name"], "workers");
  Result<store::Object> native = store_->Get({"Job", "team-a", "indexed"});
  ASSERT_TRUE(native);
  EXPECT_EQ(api::SourceTypeOf(native->body), &api::JobSetType());
  // A JobSet is no batch/v1 Job.
  EXPECT_EQ(Send("GET", kIndexed).first, 404);
  auto [list_code, batch_jobs] = Send("GET", kJobs);
  EXPECT_EQ(batch_jobs["items"].size(), 0u);
  auto [sets_code, sets] = Send("GET", kJobSets);
  EXPECT_EQ(sets["kind"], "JobSetList");
  ASSERT_EQ(sets["items"].size(), 1u);

  SetNativeStatus({{"phase", "Succeeded"},
                   {"restartCount", 1},
                   {"message", "all 2 pod(s) succeeded"},
                   {"completionTime", "2026-01-01T00:01:30Z"}});
  const std::string jobset = std::string(kJobSets) + "/indexed";
  auto [get_code, done] = Send("GET", jobset);
  ASSERT_EQ(get_code, 200);
  EXPECT_EQ(done["status"]["terminalState"], "Completed");
  EXPECT_EQ(done["status"]["restarts"], 1);
  EXPECT_EQ(done["status"]["replicatedJobsStatus"][0]["name"], "workers");
  EXPECT_EQ(done["status"]["replicatedJobsStatus"][0]["succeeded"], 2);
  EXPECT_EQ(Condition(done, "Completed")["reason"], "AllJobsCompleted");
  auto [table_code, table] =
      Send("GET", kJobSets, "", "", "application/json;as=Table;v=v1;g=meta.k8s.io");
  ASSERT_EQ(table_code, 200);
  EXPECT_EQ(table["columnDefinitions"][1]["name"], "TerminalState");
  EXPECT_EQ(table["rows"][0]["cells"][1], "Completed");
  EXPECT_EQ(table["rows"][0]["cells"][3], "True");

  // A JobSet takes merge patches, as a custom resource does on Kubernetes; not strategic ones.
  auto [merge_code, merged] = Send("PATCH", jobset, R"({"metadata":{"labels":{"stage":"2"}}})",
                                   "application/merge-patch+json");
  EXPECT_EQ(merge_code, 200) << merged.dump();
  EXPECT_EQ(merged["metadata"]["labels"]["stage"], "2");
  EXPECT_NE(Send("PATCH", jobset, R"({"metadata":{"labels":{"stage":"3"}}})",
                 "application/strategic-merge-patch+json")
                .first,
            200);
  auto [delete_code, deleted] = Send("DELETE", jobset);
  EXPECT_EQ(delete_code, 200);
  EXPECT_EQ(deleted["kind"], "JobSet");
  EXPECT_FALSE(store_->Get({"Job", "team-a", "indexed"}));
}

}  // namespace
}  // namespace strata::server
