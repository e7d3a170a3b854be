// Kueue's WorkloadPriorityClasses stored as strata's and served at
// /apis/kueue.x-k8s.io/v1beta2 (and v1beta1): a workload written later with the
// kueue.x-k8s.io/priority-class label gets the class's value once, at creation
// (server/workload_priority.h).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "server/rest_api_test_fixture.h"

namespace strata::server {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;

constexpr char kClasses[] = "/apis/kueue.x-k8s.io/v1beta2/workloadpriorityclasses";
constexpr char kClass[] = "/apis/kueue.x-k8s.io/v1beta2/workloadpriorityclasses/urgent";
constexpr char kBatchJobs[] = "/apis/batch/v1/namespaces/default/jobs";
constexpr char kBatchJob[] = "/apis/batch/v1/namespaces/default/jobs/sample";
constexpr char kTable[] = "application/json;as=Table;v=v1;g=meta.k8s.io";

constexpr char kClassDocument[] = R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: urgent}
value: 10000
description: ahead of the rest
)";

// A batch/v1 Job naming the class urgent, whose pods ask for a priority of their own.
constexpr char kLabelledJob[] = R"(apiVersion: batch/v1
kind: Job
metadata:
  name: sample
  labels: {kueue.x-k8s.io/priority-class: urgent}
spec:
  template:
    spec:
      priorityClassName: sheddable
      restartPolicy: Never
      containers: [{name: main, image: busybox, command: [sh, -c, "exit 0"]}]
)";

class KueuePriorityTest : public RestApiTest {
 protected:
  // The stored (native) Job's spec.priority; 0 when it has none.
  int64_t StoredPriority(const std::string& name = "sample") {
    Result<store::Object> job = store_->Get({"Job", "default", name});
    EXPECT_TRUE(job) << job.error().ToString();
    return job ? job->body["spec"].value("priority", int64_t{0}) : -1;
  }
};

TEST_F(KueuePriorityTest, AClassIsStoredAndServedInKueuesShape) {
  Start();
  auto [code, created] = Send("POST", kClasses, kClassDocument);
  ASSERT_EQ(code, 201) << created.dump();
  auto [get_code, got] = Send("GET", kClass);
  ASSERT_EQ(get_code, 200) << got.dump();
  EXPECT_EQ(got["apiVersion"], "kueue.x-k8s.io/v1beta2");
  EXPECT_EQ(got["kind"], "WorkloadPriorityClass");
  EXPECT_EQ(got["value"], 10000);
  EXPECT_EQ(got["description"], "ahead of the rest");
  EXPECT_FALSE(got.contains("spec"));  // Kueue's fields are at the top
  EXPECT_FALSE(got.contains("status"));
  EXPECT_FALSE(got["metadata"].contains("annotations"));  // the kept source is not shown
  // Stored as strata's own kind.
  Result<store::Object> native = store_->Get({"WorkloadPriorityClass", "", "urgent"});
  ASSERT_TRUE(native);
  EXPECT_EQ(native->body["spec"]["value"], 10000);
  // kubectl get wpc: NAME VALUE AGE, as Kueue's CRD prints it.
  auto [table_code, table] = Send("GET", kClasses, "", "", kTable);
  ASSERT_EQ(table_code, 200) << table.dump();
  ASSERT_EQ(table["columnDefinitions"].size(), 3u) << table.dump();
  EXPECT_EQ(table["columnDefinitions"][1]["name"], "Value");
  EXPECT_EQ(table["rows"][0]["cells"][1], "10000");
  // v1beta1 serves the same object.
  auto [old_code, old] = Send("GET", "/apis/kueue.x-k8s.io/v1beta1/workloadpriorityclasses/urgent");
  ASSERT_EQ(old_code, 200) << old.dump();
  EXPECT_EQ(old["apiVersion"], "kueue.x-k8s.io/v1beta1");
  EXPECT_EQ(old["value"], 10000);
  // A value outside Kubernetes' user priorities is refused, naming the field.
  auto [bad_code, bad] = Send("POST", kClasses,
                              "apiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\n"
                              "metadata: {name: x}\nvalue: 2000000000\n");
  EXPECT_EQ(bad_code, 400);
  EXPECT_THAT(bad.dump(), HasSubstr("value: must be between"));
  EXPECT_EQ(Send("DELETE", kClass).first, 200);
  EXPECT_EQ(Send("GET", kClass).first, 404);
}

TEST_F(KueuePriorityTest, AJobWrittenAfterItsClassGetsTheClassValueOverItsPodsOwn) {
  Start();
  ASSERT_EQ(Send("POST", kClasses, kClassDocument).first, 201);
  auto [code, job] = Send("POST", kBatchJobs, kLabelledJob);
  ASSERT_EQ(code, 201) << job.dump();
  EXPECT_EQ(StoredPriority(), 10000);  // Kueue's rule: the class wins over sheddable
  // The label stays, as on Kueue's Job.
  EXPECT_EQ(job["metadata"]["labels"]["kueue.x-k8s.io/priority-class"], "urgent");
}

TEST_F(KueuePriorityTest, AJobNamingAClassThatDoesNotExistIsRefusedNamingIt) {
  Start();
  auto [code, status] = Send("POST", kBatchJobs, kLabelledJob);
  EXPECT_EQ(code, 400);
  EXPECT_THAT(status["message"].get<std::string>(),
              HasSubstr("metadata.labels[kueue.x-k8s.io/priority-class]: WorkloadPriorityClass "
                        "\"urgent\" does not exist"));
  EXPECT_FALSE(store_->Get({"Job", "default", "sample"}));
  // strata apply -f of the Job alone: the same.
  EXPECT_FALSE(Post(api::kApplyPath, kLabelledJob));
}

TEST_F(KueuePriorityTest, APriorityIsGivenOnceAndOutlivesItsClass) {
  Start();
  ASSERT_EQ(Send("POST", kClasses, kClassDocument).first, 201);
  ASSERT_EQ(Send("POST", kBatchJobs, kLabelledJob).first, 201);
  // A new value for the class leaves the Job's alone (Kueue: workloads already created keep
  // theirs).
  auto [changed_code, changed] =
      Send("PATCH", kClass, R"({"value": 5})", "application/merge-patch+json");
  ASSERT_EQ(changed_code, 200) << changed.dump();
  EXPECT_EQ(changed["value"], 5);
  auto [labelled_code, labelled] = Send("PATCH", kBatchJob, R"({"metadata":{"labels":{"a":"b"}}})",
                                        "application/merge-patch+json");
  ASSERT_EQ(labelled_code, 200) << labelled.dump();
  EXPECT_EQ(StoredPriority(), 10000);
  // Deleted, the class leaves the Job its priority, through later writes too.
  ASSERT_EQ(Send("DELETE", kClass).first, 200);
  auto [later_code, later] = Send("PATCH", kBatchJob, R"({"metadata":{"labels":{"c":"d"}}})",
                                  "application/merge-patch+json");
  ASSERT_EQ(later_code, 200) << later.dump();
  EXPECT_EQ(StoredPriority(), 10000);
}

TEST_F(KueuePriorityTest, StrataApplyGivesTheClassOfTheSameBodyOrOfTheStore) {
  Start();
  // The class after its Job in one body.
  Result<Json> together =
      Post(api::kApplyPath, std::string(kLabelledJob) + "---\n" + kClassDocument);
  ASSERT_TRUE(together) << together.error().ToString();
  EXPECT_EQ(StoredPriority(), 10000);
  // A later Job alone finds the stored class.
  std::string other = kLabelledJob;
  other.replace(other.find("name: sample"), 12, "name: second");
  Result<Json> alone = Post(api::kApplyPath, other);
  ASSERT_TRUE(alone) << alone.error().ToString();
  EXPECT_EQ(StoredPriority("second"), 10000);
}

}  // namespace
}  // namespace strata::server
