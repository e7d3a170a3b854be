// Kueue's kinds served at /apis/kueue.x-k8s.io/v1beta2 (and v1beta1): ClusterQueues and
// ResourceFlavors from the native Queues and ResourceFlavors they decode to (api/source_form.h),
// LocalQueues from the Queues that keep them (api/local_queue_form.h), watched from the changes
// of Queues and Jobs (server/local_queue_watcher.h); and discovery's categories.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "api/local_queue_form.h"
#include "api/source_form.h"
#include "server/rest_api_test_fixture.h"

namespace strata::server {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;

constexpr char kGroup[] = "/apis/kueue.x-k8s.io/v1beta2";
constexpr char kClusterQueues[] = "/apis/kueue.x-k8s.io/v1beta2/clusterqueues";
constexpr char kClusterQueue[] = "/apis/kueue.x-k8s.io/v1beta2/clusterqueues/cluster-queue";
constexpr char kFlavors[] = "/apis/kueue.x-k8s.io/v1beta2/resourceflavors";
constexpr char kLocalQueues[] = "/apis/kueue.x-k8s.io/v1beta2/namespaces/team-a/localqueues";
constexpr char kLocalQueue[] =
    "/apis/kueue.x-k8s.io/v1beta2/namespaces/team-a/localqueues/user-queue";
constexpr char kTable[] = "application/json;as=Table;v=v1;g=meta.k8s.io";

constexpr char kFlavor[] = R"yaml(apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default-flavor}
spec:
  nodeLabels: {topology.strata.dev/rack: rack-0}
)yaml";

constexpr char kClusterQueueDocument[] = R"yaml(apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cluster-queue}
spec:
  cohortName: research
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, nvidia.com/gpu]
    flavors:
    - name: default-flavor
      resources:
      - {name: cpu, nominalQuota: 32}
      - {name: nvidia.com/gpu, nominalQuota: 8}
)yaml";

constexpr char kLocalQueueDocument[] = R"yaml(apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata:
  name: user-queue
  labels: {team: research}
spec:
  clusterQueue: cluster-queue
)yaml";

// A ClusterQueue as Kueue's v1beta1 users write it (`cohort`, not v1beta2's `cohortName`).
constexpr char kV1beta1ClusterQueue[] = R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cluster-queue}
spec:
  cohort: research
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: default-flavor
      resources: [{name: nvidia.com/gpu, nominalQuota: 8}]
)";

class KueueKindsTest : public RestApiTest {
 protected:
  // The resource `name` of the APIResourceList at `group_version`, null when none.
  Json Resource(const std::string& group_version, std::string_view name) {
    auto [code, list] = Send("GET", group_version);
    EXPECT_EQ(code, 200) << group_version;
    for (const Json& resource : list["resources"]) {
      if (resource["name"] == name) return resource;
    }
    return Json();
  }

  // The Queue the ClusterQueue is stored as.
  Json StoredQueue() {
    Result<store::Object> queue = store_->Get({"Queue", "", "cluster-queue"});
    EXPECT_TRUE(queue) << queue.error().ToString();
    return queue ? queue->body : Json();
  }

  // Applies `yaml` as strata apply -f does.
  void Apply(const std::string& yaml) {
    Result<Json> applied = Post(api::kApplyPath, yaml);
    ASSERT_TRUE(applied) << applied.error().ToString();
  }

  void CreateSetup() {
    ASSERT_EQ(Send("POST", kFlavors, kFlavor).first, 201);
    auto [code, created] = Send("POST", kClusterQueues, kClusterQueueDocument);
    ASSERT_EQ(code, 201) << created.dump();
  }
};

// A batch/v1 Job that names the LocalQueue user-queue.
constexpr char kBatchJob[] = R"(
apiVersion: batch/v1
kind: Job
metadata:
  name: sample
  labels: {kueue.x-k8s.io/queue-name: user-queue}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: busybox, command: [sh, -c, "exit 0"]}]
)";

TEST_F(KueueKindsTest, DiscoveryListsKueueKindsWithTheirShortNamesBeforeStrataDev) {
  Start();
  auto [code, groups] = Send("GET", "/apis");
  ASSERT_EQ(code, 200);
  EXPECT_EQ(groups["groups"][0]["name"], "batch");
  EXPECT_EQ(groups["groups"][1]["name"], "kueue.x-k8s.io");
  EXPECT_EQ(groups["groups"][1]["preferredVersion"]["groupVersion"], "kueue.x-k8s.io/v1beta2");
  EXPECT_EQ(groups["groups"][2]["name"], "strata.dev");
  EXPECT_EQ(Send("GET", "/apis/kueue.x-k8s.io").first, 200);

  const Json cluster_queues = Resource(kGroup, "clusterqueues");
  EXPECT_EQ(cluster_queues["kind"], "ClusterQueue");
  EXPECT_EQ(cluster_queues["namespaced"], false);
  EXPECT_EQ(cluster_queues["shortNames"], Json({"cq"}));
  EXPECT_FALSE(cluster_queues.contains("categories"));  // Kueue's CRDs name none
  const Json local_queues = Resource(kGroup, "localqueues");
  EXPECT_EQ(local_queues["namespaced"], true);
  EXPECT_EQ(local_queues["shortNames"], Json({"lq"}));
  EXPECT_THAT(local_queues["verbs"].dump(), HasSubstr("watch"));
  EXPECT_EQ(Resource(kGroup, "resourceflavors")["shortNames"], Json({"flavor", "flavors", "rf"}));
  // Kueue's flavors have the short names kubectl resolves; strata's keep them for strata get.
  EXPECT_FALSE(Resource("/apis/strata.dev/v1alpha1", "resourceflavors").contains("shortNames"));

  // kubectl get all: Pods and batch/v1 Jobs as on Kubernetes, and strata's Services; strata's
  // Jobs (a batch/v1 Job is one too) and its other kinds in `strata` only.
  EXPECT_EQ(Resource("/api/v1", "pods")["categories"], Json({"all"}));
  EXPECT_EQ(Resource("/apis/batch/v1", "jobs")["categories"], Json({"all"}));
  EXPECT_EQ(Resource("/apis/strata.dev/v1alpha1", "jobs")["categories"], Json({"strata"}));
  EXPECT_EQ(Resource("/apis/strata.dev/v1alpha1", "services")["categories"],
            Json({"all", "strata"}));
  EXPECT_FALSE(Resource("/apis/jobset.x-k8s.io/v1alpha2", "jobsets").contains("categories"));

  // kubectl validates Kueue's documents against the group's OpenAPI document.
  auto [doc_code, document] = Send("GET", "/openapi/v3/apis/kueue.x-k8s.io/v1beta2");
  ASSERT_EQ(doc_code, 200);
  EXPECT_TRUE(document["paths"].contains(
      "/apis/kueue.x-k8s.io/v1beta2/namespaces/{namespace}/localqueues/{name}"));
  EXPECT_TRUE(document["paths"].contains("/apis/kueue.x-k8s.io/v1beta2/clusterqueues/{name}"));
  EXPECT_TRUE(document["components"]["schemas"].contains("kueue.x-k8s.io.v1beta2.ClusterQueue"));
}

TEST_F(KueueKindsTest, AClusterQueueIsServedAsWrittenWithItsStatusMappedFromItsQueue) {
  Start();
  CreateSetup();
  auto [code, got] = Send("GET", kClusterQueue);
  ASSERT_EQ(code, 200) << got.dump();
  EXPECT_EQ(got["apiVersion"], "kueue.x-k8s.io/v1beta2");
  EXPECT_EQ(got["kind"], "ClusterQueue");
  EXPECT_FALSE(got["metadata"].contains("namespace"));
  EXPECT_EQ(got["spec"]["cohortName"], "research");
  EXPECT_EQ(got["spec"]["resourceGroups"][0]["flavors"][0]["resources"][1]["nominalQuota"], 8);
  EXPECT_EQ(got["spec"]["queueingStrategy"], "BestEffortFIFO");  // Kueue's defaults
  EXPECT_EQ(got["spec"]["preemption"]["withinClusterQueue"], "Never");
  EXPECT_FALSE(got["metadata"].contains("annotations"));  // the kept source is not shown

  // The same object, as strata's own Queue: what the scheduler admits by.
  const Json queue = StoredQueue();
  EXPECT_EQ(queue["spec"]["cohort"], "research");
  EXPECT_EQ(queue["spec"]["flavors"][0]["resources"][0]["name"], "cpu");
  EXPECT_EQ(api::SourceTypeOf(queue), &api::ClusterQueueType());

  // The scheduler's figures, in Kueue's words.
  Result<store::Object> stored = store_->Get({"Queue", "", "cluster-queue"});
  ASSERT_TRUE(stored);
  stored->body["status"] = {
      {"flavorsUsage",
       {{{"name", "default-flavor"},
         {"resources", {{{"name", "gpu"}, {"nominal", "8"}, {"used", "2"}, {"borrowed", "0"}}}}}}},
      {"admittedWorkloads", 1},
      {"pendingWorkloads", 3}};
  ASSERT_TRUE(store_->Update(std::move(*stored)));
  auto [status_code, served] = Send("GET", kClusterQueue);
  ASSERT_EQ(status_code, 200);
  const Json& status = served["status"];
  EXPECT_EQ(status["pendingWorkloads"], 3);
  EXPECT_EQ(status["admittedWorkloads"], 1);
  EXPECT_EQ(status["reservingWorkloads"], 1);
  EXPECT_EQ(status["flavorsUsage"][0]["name"], "default-flavor");
  EXPECT_EQ(status["flavorsUsage"][0]["resources"],
            Json::parse(R"([{"name":"cpu","total":"0","borrowed":"0"},
                            {"name":"nvidia.com/gpu","total":"2","borrowed":"0"}])"));
  EXPECT_EQ(status["conditions"][0]["type"], "Active");
  EXPECT_EQ(status["conditions"][0]["status"], "True");

  // kubectl get clusterqueues: Kueue's columns, two of them with -o wide only.
  auto [table_code, table] = Send("GET", kClusterQueues, "", "", kTable);
  ASSERT_EQ(table_code, 200) << table.dump();
  std::vector<std::string> names;
  std::vector<int> priorities;
  for (const Json& column : table["columnDefinitions"]) {
    names.push_back(column["name"]);
    priorities.push_back(column["priority"]);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"Name", "Cohort", "Strategy", "Pending Workloads",
                                             "Admitted Workloads", "Age"}));
  EXPECT_EQ(priorities, (std::vector<int>{0, 0, 1, 0, 1, 0}));
  EXPECT_EQ(table["rows"][0]["cells"][1], "research");
  EXPECT_EQ(table["rows"][0]["cells"][3], "3");
  EXPECT_EQ(table["rows"][0]["cells"][4], "1");
}

TEST_F(KueueKindsTest, AResourceFlavorIsServedWithoutStatusAndStrataFlavorsAreNot) {
  Start();
  ASSERT_EQ(Send("POST", kFlavors, kFlavor).first, 201);
  auto [code, got] = Send("GET", std::string(kFlavors) + "/default-flavor");
  ASSERT_EQ(code, 200);
  EXPECT_EQ(got["spec"]["nodeLabels"]["topology.strata.dev/rack"], "rack-0");
  EXPECT_FALSE(got.contains("status"));
  Result<store::Object> native = store_->Get({"ResourceFlavor", "", "default-flavor"});
  ASSERT_TRUE(native);
  EXPECT_EQ(native->body["spec"]["nodeLabels"]["topology.strata.dev/rack"], "rack-0");
  // strata's own flavor stays at strata.dev.
  Apply(R"(apiVersion: strata.dev/v1alpha1
kind: ResourceFlavor
metadata: {name: own}
spec: {nodeLabels: {gpu: h100}}
)");
  auto [list_code, list] = Send("GET", kFlavors);
  ASSERT_EQ(list["items"].size(), 1u);
  EXPECT_EQ(Send("GET", std::string(kFlavors) + "/own").first, 404);
  auto [table_code, table] = Send("GET", kFlavors, "", "", kTable);
  EXPECT_EQ(table["columnDefinitions"].size(), 2u);  // NAME AGE, as a CRD without columns
}

TEST_F(KueueKindsTest, ALocalQueueIsKeptOnItsClusterQueueAndServedFromIt) {
  Start();
  auto [early_code, early] = Send("POST", kLocalQueues, kLocalQueueDocument);
  EXPECT_EQ(early_code, 400);
  EXPECT_THAT(early["message"].get<std::string>(), HasSubstr("spec.clusterQueue"));
  CreateSetup();

  auto [code, created] = Send("POST", kLocalQueues, kLocalQueueDocument);
  ASSERT_EQ(code, 201) << created.dump();
  EXPECT_EQ(created["kind"], "LocalQueue");
  EXPECT_EQ(created["metadata"]["namespace"], "team-a");
  EXPECT_EQ(created["metadata"]["labels"]["team"], "research");
  EXPECT_EQ(created["spec"]["clusterQueue"], "cluster-queue");
  EXPECT_EQ(created["status"]["conditions"][0]["type"], "Active");
  // The name workloads' kueue.x-k8s.io/queue-name labels resolve through.
  EXPECT_EQ(StoredQueue()["spec"]["localQueues"],
            Json::parse(R"([{"namespace":"team-a","name":"user-queue"}])"));
  EXPECT_EQ(Send("POST", kLocalQueues, kLocalQueueDocument).first, 409);

  // Its workloads' counts: a batch/v1 Job labelled with its name, admitted.
  auto [job_code, job] = Send("POST", "/apis/batch/v1/namespaces/team-a/jobs", kBatchJob);
  ASSERT_EQ(job_code, 201) << job.dump();
  auto [pending_code, pending] = Send("GET", kLocalQueue);
  ASSERT_EQ(pending_code, 200) << pending.dump();
  EXPECT_EQ(pending["status"]["pendingWorkloads"], 1);
  EXPECT_EQ(pending["status"]["admittedWorkloads"], 0);
  Result<store::Object> native = store_->Get({"Job", "team-a", "sample"});
  ASSERT_TRUE(native);
  native->body["status"] = {{"phase", "Running"}};
  ASSERT_TRUE(store_->Update(std::move(*native)));
  auto [table_code, table] = Send("GET", kLocalQueues, "", "", kTable);
  ASSERT_EQ(table_code, 200) << table.dump();
  EXPECT_EQ(table["columnDefinitions"][1]["name"], "ClusterQueue");
  EXPECT_EQ(table["rows"][0]["cells"],
            Json({"user-queue", "cluster-queue", "0", "1", table["rows"][0]["cells"][4]}));
  auto [list_code, list] = Send("GET", "/apis/kueue.x-k8s.io/v1beta2/localqueues");
  ASSERT_EQ(list["items"].size(), 1u);
  EXPECT_EQ(
      Send("GET", std::string(kLocalQueues) + "?labelSelector=team%3Dother").second["items"].size(),
      0u);
  EXPECT_EQ(Send("GET", std::string(kLocalQueues) + "?fieldSelector=metadata.name%3Dother")
                .second["items"]
                .size(),
            0u);

  // A merge patch (kubectl apply of a changed label) changes its labels; its ClusterQueue is
  // immutable, as in Kueue.
  auto [patch_code, patched] =
      Send("PATCH", kLocalQueue, R"({"metadata":{"labels":{"team":"ml"}}})",
           "application/merge-patch+json");
  ASSERT_EQ(patch_code, 200) << patched.dump();
  EXPECT_EQ(patched["metadata"]["labels"]["team"], "ml");
  EXPECT_EQ(Send("GET", kLocalQueue).second["metadata"]["labels"]["team"], "ml");
  auto [move_code, moved] = Send("PATCH", kLocalQueue, R"({"spec":{"clusterQueue":"other"}})",
                                 "application/merge-patch+json");
  EXPECT_EQ(move_code, 400);
  EXPECT_THAT(moved["message"].get<std::string>(), HasSubstr("immutable"));

  // Writing the ClusterQueue again keeps the LocalQueues naming it.
  auto [cq_code, cq] = Send("PATCH", kClusterQueue, R"({"metadata":{"labels":{"tier":"gold"}}})",
                            "application/merge-patch+json");
  ASSERT_EQ(cq_code, 200) << cq.dump();
  EXPECT_EQ(StoredQueue()["spec"]["localQueues"].size(), 1u);
  EXPECT_EQ(Send("GET", kLocalQueue).second["metadata"]["labels"]["team"], "ml");

  auto [delete_code, deleted] = Send("DELETE", kLocalQueue);
  EXPECT_EQ(delete_code, 200);
  EXPECT_EQ(deleted["metadata"]["name"], "user-queue");
  EXPECT_FALSE(StoredQueue()["spec"].contains("localQueues"));
  EXPECT_FALSE(StoredQueue()["metadata"]
                   .value("annotations", Json::object())
                   .contains(api::kLocalQueuesAnnotation));
  EXPECT_EQ(Send("GET", kLocalQueue).first, 404);
}

TEST_F(KueueKindsTest, ALocalQueueCreatedWhileItsQueueChangesIsWrittenOnTheQueueAsItIsNow) {
  // The scheduler writes the Queue's status at any time: a LocalQueue created meanwhile is
  // written on the Queue read again, not refused with a Conflict (kubectl apply of a setup
  // failed so under ASan).
  Start();
  CreateSetup();
  ASSERT_EQ(Send("POST", kLocalQueues, kLocalQueueDocument).first, 201);  // team-a exists now
  faults_->FailAt(1, store::FaultInjectingStore::Fault::kConflict);
  auto [code, created] =
      Send("POST", kLocalQueues,
           R"({"metadata":{"name":"second"},"spec":{"clusterQueue":"cluster-queue"}})",
           "application/json");
  ASSERT_EQ(code, 201) << created.dump();
  EXPECT_EQ(StoredQueue()["spec"]["localQueues"].size(), 2u);
}

TEST_F(KueueKindsTest, DeletingANamespaceDeletesItsLocalQueues) {
  Start();
  CreateSetup();
  ASSERT_EQ(Send("POST", kLocalQueues, kLocalQueueDocument).first, 201);
  ASSERT_EQ(Send("POST", "/apis/kueue.x-k8s.io/v1beta2/namespaces/team-b/localqueues",
                 R"({"metadata":{"name":"other"},"spec":{"clusterQueue":"cluster-queue"}})",
                 "application/json")
                .first,
            201);
  ASSERT_EQ(Send("DELETE", "/api/v1/namespaces/team-a").first, 200);
  EXPECT_EQ(Send("GET", kLocalQueue).first, 404);
  EXPECT_EQ(StoredQueue()["spec"]["localQueues"],
            Json::parse(R"([{"namespace":"team-b","name":"other"}])"));
}

TEST_F(KueueKindsTest, StrataApplyOfAV1beta1SetupIsServedAtV1beta2) {
  Start();
  Apply(std::string(R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: default-flavor}
---
)") + kV1beta1ClusterQueue +
        R"(---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: user-queue, namespace: team-a}
spec: {clusterQueue: cluster-queue}
)");
  auto [code, got] = Send("GET", kClusterQueue);
  ASSERT_EQ(code, 200) << got.dump();
  EXPECT_EQ(got["apiVersion"], "kueue.x-k8s.io/v1beta2");
  EXPECT_EQ(got["spec"]["cohortName"], "research");
  EXPECT_FALSE(got["spec"].contains("cohort"));
  auto [local_code, local] = Send("GET", kLocalQueue);
  ASSERT_EQ(local_code, 200) << local.dump();
  EXPECT_EQ(local["spec"]["clusterQueue"], "cluster-queue");
  // Applying the ClusterQueue alone again leaves its LocalQueue and is unchanged.
  const std::string before = StoredQueue()["metadata"]["resourceVersion"];
  Apply(kV1beta1ClusterQueue);
  EXPECT_EQ(StoredQueue()["metadata"]["resourceVersion"], before);
  EXPECT_EQ(Send("GET", kLocalQueue).first, 200);
}

constexpr char kV1beta1[] = "/apis/kueue.x-k8s.io/v1beta1";
constexpr char kV1beta1ClusterQueues[] = "/apis/kueue.x-k8s.io/v1beta1/clusterqueues";
constexpr char kV1beta1QueuePath[] = "/apis/kueue.x-k8s.io/v1beta1/clusterqueues/cluster-queue";

TEST_F(KueueKindsTest, DiscoveryServesV1beta1BesideThePreferredV1beta2) {
  Start();
  auto [code, group] = Send("GET", "/apis/kueue.x-k8s.io");
  ASSERT_EQ(code, 200);
  EXPECT_EQ(group["versions"],
            Json::parse(R"([{"groupVersion":"kueue.x-k8s.io/v1beta2","version":"v1beta2"},
                            {"groupVersion":"kueue.x-k8s.io/v1beta1","version":"v1beta1"}])"));
  EXPECT_EQ(group["preferredVersion"]["version"], "v1beta2");
  EXPECT_EQ(Resource(kV1beta1, "clusterqueues")["shortNames"], Json({"cq"}));
  EXPECT_EQ(Resource(kV1beta1, "resourceflavors")["kind"], "ResourceFlavor");
  EXPECT_EQ(Resource(kV1beta1, "localqueues")["namespaced"], true);
  auto [doc_code, document] = Send("GET", "/openapi/v3/apis/kueue.x-k8s.io/v1beta1");
  ASSERT_EQ(doc_code, 200);
  // kubectl validates a v1beta1 document against v1beta1's fields (`cohort`).
  EXPECT_TRUE(document["components"]["schemas"]["kueue.x-k8s.io.v1beta1.ClusterQueue"]["properties"]
                      ["spec"]["properties"]
                          .contains("cohort"));
}

TEST_F(KueueKindsTest, AV1beta1ClusterQueueIsStoredAsAtV1beta2AndServedAtEither) {
  Start();
  auto [code, created] = Send("POST", kV1beta1ClusterQueues, kV1beta1ClusterQueue);
  ASSERT_EQ(code, 201) << created.dump();
  // Kueue's CRDs mark v1beta1 deprecated: kubectl shows kube-apiserver's warning.
  net::HttpRequest get;
  get.method = "GET";
  get.target = kV1beta1ClusterQueues;
  get.headers = {{"Authorization", std::string("Bearer ") + kAdmin}};
  EXPECT_EQ(api_->Handle(get).response.Header("Warning"),
            "299 - \"This version is deprecated. Use v1beta2 instead.\"");
  get.target = kClusterQueues;
  EXPECT_EQ(api_->Handle(get).response.Header("Warning"), "");
  EXPECT_EQ(created["apiVersion"], "kueue.x-k8s.io/v1beta1");
  EXPECT_EQ(created["spec"]["cohort"], "research");
  EXPECT_FALSE(created["spec"].contains("cohortName"));
  const Json by_v1beta1 = StoredQueue();

  auto [v2_code, v2] = Send("GET", kClusterQueue);
  ASSERT_EQ(v2_code, 200);
  EXPECT_EQ(v2["apiVersion"], "kueue.x-k8s.io/v1beta2");
  EXPECT_EQ(v2["spec"]["cohortName"], "research");
  auto [list_code, list] = Send("GET", kV1beta1ClusterQueues);
  ASSERT_EQ(list_code, 200);
  EXPECT_EQ(list["apiVersion"], "kueue.x-k8s.io/v1beta1");
  ASSERT_EQ(list["items"].size(), 1u);
  EXPECT_EQ(list["items"][0]["apiVersion"], "kueue.x-k8s.io/v1beta1");
  EXPECT_EQ(list["items"][0]["spec"]["cohort"], "research");

  // The same queue written at v1beta2 keeps the same source: one native object for both.
  ASSERT_EQ(Send("DELETE", kV1beta1QueuePath).first, 200);
  std::string v1beta2 = kV1beta1ClusterQueue;
  v1beta2.replace(v1beta2.find("v1beta1"), 7, "v1beta2");
  v1beta2.replace(v1beta2.find("cohort:"), 7, "cohortName:");
  ASSERT_EQ(Send("POST", kClusterQueues, v1beta2).first, 201);
  EXPECT_EQ(StoredQueue()["metadata"]["annotations"], by_v1beta1["metadata"]["annotations"]);
  EXPECT_EQ(StoredQueue()["spec"], by_v1beta1["spec"]);

  // A merge patch in v1beta1's words (kubectl apply of a changed v1beta1 file).
  auto [patch_code, patched] = Send("PATCH", kV1beta1QueuePath, R"({"spec":{"cohort":"other"}})",
                                    "application/merge-patch+json");
  ASSERT_EQ(patch_code, 200) << patched.dump();
  EXPECT_EQ(patched["spec"]["cohort"], "other");
  EXPECT_EQ(StoredQueue()["spec"]["cohort"], "other");
  EXPECT_EQ(Send("GET", kClusterQueue).second["spec"]["cohortName"], "other");

  // A watch at v1beta1 sends v1beta1.
  std::vector<Json> events;
  Status watched =
      client_->Watch(std::string(kV1beta1ClusterQueues) + "?watch=1", [&](const Json& event) {
        events.push_back(event);
        return false;
      });
  ASSERT_TRUE(watched.ok()) << watched.ToString();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["object"]["apiVersion"], "kueue.x-k8s.io/v1beta1");
  EXPECT_EQ(events[0]["object"]["spec"]["cohort"], "other");

  // Kueue's v1beta1 whenCanBorrow Borrow is v1beta2's MayStopSearch.
  auto [borrow_code, borrow] = Send("PATCH", kV1beta1QueuePath,
                                    R"({"spec":{"flavorFungibility":{"whenCanBorrow":"Borrow"}}})",
                                    "application/merge-patch+json");
  ASSERT_EQ(borrow_code, 200) << borrow.dump();
  EXPECT_EQ(Send("GET", kClusterQueue).second["spec"]["flavorFungibility"]["whenCanBorrow"],
            "MayStopSearch");
}

TEST_F(KueueKindsTest, V1beta1FlavorsAndLocalQueuesAreTheV1beta2Ones) {
  Start();
  CreateSetup();
  auto [flavor_code, flavor] =
      Send("GET", std::string(kV1beta1) + "/resourceflavors/default-flavor");
  ASSERT_EQ(flavor_code, 200) << flavor.dump();
  EXPECT_EQ(flavor["apiVersion"], "kueue.x-k8s.io/v1beta1");
  EXPECT_EQ(flavor["spec"]["nodeLabels"]["topology.strata.dev/rack"], "rack-0");

  std::string local = kLocalQueueDocument;
  local.replace(local.find("v1beta2"), 7, "v1beta1");
  const std::string v1beta1_local_queues = std::string(kV1beta1) + "/namespaces/team-a/localqueues";
  auto [code, created] = Send("POST", v1beta1_local_queues, local);
  ASSERT_EQ(code, 201) << created.dump();
  EXPECT_EQ(created["apiVersion"], "kueue.x-k8s.io/v1beta1");
  EXPECT_EQ(Send("GET", kLocalQueue).second["apiVersion"], "kueue.x-k8s.io/v1beta2");
  auto [list_code, list] = Send("GET", v1beta1_local_queues);
  ASSERT_EQ(list_code, 200);
  ASSERT_EQ(list["items"].size(), 1u);
  EXPECT_EQ(list["items"][0]["apiVersion"], "kueue.x-k8s.io/v1beta1");
  auto [delete_code, deleted] = Send("DELETE", v1beta1_local_queues + "/user-queue");
  EXPECT_EQ(delete_code, 200);
  EXPECT_EQ(deleted["apiVersion"], "kueue.x-k8s.io/v1beta1");
  EXPECT_EQ(Send("GET", kLocalQueue).first, 404);
}

// The events of a watch of `target` until `enough` of them, or the end of the watch after
// `seconds`.
std::vector<Json> WatchEvents(client::ApiClient& client, const std::string& target, size_t enough,
                              const std::function<void(const Json&)>& on_event = {},
                              int seconds = 10) {
  std::vector<Json> events;
  const std::string bounded = target + "&timeoutSeconds=" + std::to_string(seconds);
  Status watched = client.Watch(bounded, [&](const Json& event) {
    events.push_back(event);
    if (on_event) on_event(event);
    return events.size() < enough;
  });
  EXPECT_TRUE(watched.ok()) << watched.ToString();
  return events;
}

TEST_F(KueueKindsTest, ALocalQueueWatchSendsItsChangesAndItsWorkloadCounts) {
  Start();
  CreateSetup();
  ASSERT_EQ(Send("POST", kLocalQueues, kLocalQueueDocument).first, 201);
  const std::string listed = Send("GET", kLocalQueues).second["metadata"]["resourceVersion"];

  // After the list: a Job comes (pending) and is admitted; the ClusterQueue's labels change
  // (nothing of its LocalQueues); another LocalQueue comes and goes.
  ASSERT_EQ(Send("POST", "/apis/batch/v1/namespaces/team-a/jobs", kBatchJob).first, 201);
  Result<store::Object> job = store_->Get({"Job", "team-a", "sample"});
  ASSERT_TRUE(job);
  job->body["status"] = {{"phase", "Running"}};
  ASSERT_TRUE(store_->Update(std::move(*job)));
  ASSERT_EQ(Send("PATCH", kClusterQueue, R"({"metadata":{"labels":{"tier":"gold"}}})",
                 "application/merge-patch+json")
                .first,
            200);
  ASSERT_EQ(Send("POST", kLocalQueues,
                 R"({"metadata":{"name":"other"},"spec":{"clusterQueue":"cluster-queue"}})",
                 "application/json")
                .first,
            201);
  ASSERT_EQ(Send("DELETE", std::string(kLocalQueues) + "/other").first, 200);

  // A watch from the list's version sends those changes, in order.
  const std::vector<Json> events =
      WatchEvents(*client_, std::string(kLocalQueues) + "?watch=1&resourceVersion=" + listed, 4);
  ASSERT_EQ(events.size(), 4u);
  std::vector<std::string> seen;
  for (const Json& event : events) {
    seen.push_back(event["type"].get<std::string>() + " " +
                   event["object"]["metadata"]["name"].get<std::string>());
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"MODIFIED user-queue", "MODIFIED user-queue",
                                            "ADDED other", "DELETED other"}));
  EXPECT_EQ(events[0]["object"]["status"]["pendingWorkloads"], 1);
  EXPECT_EQ(events[1]["object"]["status"]["pendingWorkloads"], 0);
  EXPECT_EQ(events[1]["object"]["status"]["admittedWorkloads"], 1);
  EXPECT_EQ(events[1]["object"]["kind"], "LocalQueue");
  EXPECT_EQ(events[1]["object"]["apiVersion"], "kueue.x-k8s.io/v1beta2");
}

TEST_F(KueueKindsTest, ALocalQueueWatchStartsFromTheCurrentStateAndFollowsIt) {
  Start();
  CreateSetup();
  ASSERT_EQ(Send("POST", kLocalQueues, kLocalQueueDocument).first, 201);
  // kubectl wait's watch-list (sendInitialEvents): the LocalQueue, then the bookmark that ends
  // the initial events; then a Job admitted while it watches.
  const std::vector<Json> events = WatchEvents(
      *client_,
      std::string(kLocalQueues) +
          "?watch=1&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch="
          "NotOlderThan&fieldSelector=metadata.name%3Duser-queue",
      3, [&](const Json& event) {
        if (event["type"] == "BOOKMARK") {
          ASSERT_EQ(Send("POST", "/apis/batch/v1/namespaces/team-a/jobs", kBatchJob).first, 201);
        }
      });
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0]["type"], "ADDED");
  EXPECT_EQ(events[0]["object"]["status"]["pendingWorkloads"], 0);
  EXPECT_EQ(events[1]["type"], "BOOKMARK");
  EXPECT_EQ(events[1]["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"], "true");
  EXPECT_EQ(events[2]["type"], "MODIFIED");
  EXPECT_EQ(events[2]["object"]["status"]["pendingWorkloads"], 1);

  // Another namespace's LocalQueues are not sent; at v1beta1, the LocalQueue is v1beta1's.
  const std::vector<Json> v1beta1 = WatchEvents(
      *client_, std::string(kV1beta1) + "/namespaces/team-b/localqueues?watch=1", 1, {}, 1);
  EXPECT_TRUE(v1beta1.empty());
  const std::vector<Json> all =
      WatchEvents(*client_, std::string(kV1beta1) + "/localqueues?watch=1", 1);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0]["object"]["apiVersion"], "kueue.x-k8s.io/v1beta1");
}

}  // namespace
}  // namespace strata::server
