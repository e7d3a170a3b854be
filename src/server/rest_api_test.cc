#include "server/rest_api.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>

#include "client/api_client.h"
#include "net/http_client.h"
#include "server/api_listener.h"
#include "server/protobuf_body.h"
#include "server/rest_api_test_fixture.h"

namespace strata::server {
namespace {

using ::testing::HasSubstr;

TEST_F(RestApiTest, DiscoveryDescribesTheGroupsAndResourcesKubectlReads) {
  Start();
  auto core = client_->Get("/api");
  ASSERT_TRUE(core) << core.error().ToString();
  EXPECT_EQ((*core)["kind"], "APIVersions");
  EXPECT_EQ((*core)["versions"], nlohmann::json({"v1"}));

  auto groups = client_->Get("/apis");
  ASSERT_TRUE(groups);
  EXPECT_EQ((*groups)["kind"], "APIGroupList");
  // batch and kueue first: kubectl takes `jobs` to mean batch/v1's and `resourceflavors` Kueue's,
  // as on Kubernetes.
  EXPECT_EQ((*groups)["groups"][0]["name"], "batch");
  EXPECT_EQ((*groups)["groups"][1]["name"], "kueue.x-k8s.io");
  EXPECT_EQ((*groups)["groups"][2]["name"], "strata.dev");
  EXPECT_EQ((*groups)["groups"][2]["preferredVersion"]["groupVersion"], "strata.dev/v1alpha1");

  auto strata = client_->Get("/apis/strata.dev/v1alpha1");
  ASSERT_TRUE(strata);
  EXPECT_EQ((*strata)["kind"], "APIResourceList");
  EXPECT_EQ((*strata)["groupVersion"], "strata.dev/v1alpha1");
  bool jobs_found = false;
  for (const auto& resource : (*strata)["resources"]) {
    if (resource["name"] == "jobs") {
      jobs_found = true;
      EXPECT_EQ(resource["kind"], "Job");
      EXPECT_EQ(resource["namespaced"], true);
      EXPECT_EQ(resource["singularName"], "job");
      EXPECT_THAT(resource["verbs"].dump(), HasSubstr("\"watch\""));
    }
  }
  EXPECT_TRUE(jobs_found);

  auto v1 = client_->Get("/api/v1");
  ASSERT_TRUE(v1);
  EXPECT_THAT((*v1)["resources"].dump(), HasSubstr("\"name\":\"pods\""));
  EXPECT_THAT((*v1)["resources"].dump(), HasSubstr("\"name\":\"nodes\""));

  auto events = client_->Get("/apis/events.k8s.io/v1");
  ASSERT_TRUE(events) << events.error().ToString();
  EXPECT_EQ((*events)["resources"][0]["name"], "events");
  EXPECT_EQ((*events)["resources"][0]["verbs"], nlohmann::json({"get", "list", "watch"}));
  EXPECT_EQ((*groups)["groups"][3]["name"], "events.k8s.io");
  auto events_group = client_->Get("/apis/events.k8s.io");
  ASSERT_TRUE(events_group);
  EXPECT_EQ((*events_group)["preferredVersion"]["groupVersion"], "events.k8s.io/v1");

  auto version = client_->Get("/version");
  ASSERT_TRUE(version);
  EXPECT_EQ((*version)["major"], "1");
  EXPECT_TRUE((*version)["gitVersion"].is_string());
}

TEST_F(RestApiTest, CreateGetListAndDeleteANativeJob) {
  Start();
  auto created = Post("/apis/strata.dev/v1alpha1/namespaces/team-a/jobs", kJob);
  ASSERT_TRUE(created) << created.error().ToString();
  EXPECT_EQ((*created)["kind"], "Job");
  EXPECT_FALSE((*created)["metadata"]["uid"].get<std::string>().empty());
  std::string version = (*created)["metadata"]["resourceVersion"];

  auto got = client_->Get("/apis/strata.dev/v1alpha1/namespaces/team-a/jobs/train");
  ASSERT_TRUE(got);
  EXPECT_EQ((*got)["spec"]["replicas"], 2);
  EXPECT_EQ((*got)["metadata"]["resourceVersion"], version);

  auto listed = client_->Get("/apis/strata.dev/v1alpha1/jobs");
  ASSERT_TRUE(listed);
  EXPECT_EQ((*listed)["kind"], "JobList");
  EXPECT_EQ((*listed)["metadata"]["resourceVersion"], version);
  ASSERT_EQ((*listed)["items"].size(), 1u);

  auto other_namespace = client_->Get("/apis/strata.dev/v1alpha1/namespaces/team-b/jobs");
  ASSERT_TRUE(other_namespace);
  EXPECT_TRUE((*other_namespace)["items"].empty());

  auto again = Post("/apis/strata.dev/v1alpha1/namespaces/team-a/jobs", kJob);
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code(), StatusCode::kAlreadyExists);

  ASSERT_TRUE(client_->Call("DELETE", "/apis/strata.dev/v1alpha1/namespaces/team-a/jobs/train"));
  auto gone = client_->Get("/apis/strata.dev/v1alpha1/namespaces/team-a/jobs/train");
  ASSERT_FALSE(gone);
  EXPECT_EQ(gone.error().code(), StatusCode::kNotFound);
}

// kubectl asks for lists in chunks (limit=500): pages in key order, each with the first
// page's resourceVersion, the last without a continue token; a bad token names `continue`.
TEST_F(RestApiTest, ListsArePagedWithLimitAndContinue) {
  Start();
  std::string job = kJob;
  for (const char* name : {"a", "b", "c", "d", "e"}) {
    std::string manifest = job;
    manifest.replace(manifest.find("name: train"), 11, std::string("name: ") + name);
    ASSERT_TRUE(Post("/apis/strata.dev/v1alpha1/namespaces/team-a/jobs", manifest));
  }
  std::vector<std::string> names;
  std::string token;
  std::string first_version;
  for (int pages = 0;; ++pages) {
    ASSERT_LT(pages, 3);
    std::string path = "/apis/strata.dev/v1alpha1/jobs?limit=2";
    if (!token.empty()) path += "&continue=" + token;
    auto page = client_->Get(path);
    ASSERT_TRUE(page) << page.error().ToString();
    ASSERT_LE((*page)["items"].size(), 2u);
    for (const auto& item : (*page)["items"]) names.push_back(item["metadata"]["name"]);
    const auto& metadata = (*page)["metadata"];
    if (first_version.empty()) first_version = metadata["resourceVersion"];
    EXPECT_EQ(metadata["resourceVersion"], first_version);
    if (!metadata.contains("continue")) break;
    EXPECT_EQ(metadata["remainingItemCount"], 5 - static_cast<int>(names.size()));
    token = metadata["continue"];
  }
  EXPECT_EQ(names, (std::vector<std::string>{"a", "b", "c", "d", "e"}));

  auto bad = client_->Get("/apis/strata.dev/v1alpha1/jobs?limit=2&continue=zz");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.error().message(), ::testing::HasSubstr("continue"));
  auto negative = client_->Get("/apis/strata.dev/v1alpha1/jobs?limit=-1");
  ASSERT_FALSE(negative);
  EXPECT_THAT(negative.error().message(), ::testing::HasSubstr("limit"));
}

TEST_F(RestApiTest, CompatibleKindsAreStoredAsNativeObjectsInThePathNamespace) {
  Start();
  auto created = Post("/apis/strata.dev/v1alpha1/namespaces/ml/jobs", kPyTorchJob);
  ASSERT_TRUE(created) << created.error().ToString();
  EXPECT_EQ((*created)["apiVersion"], "strata.dev/v1alpha1");
  EXPECT_EQ((*created)["kind"], "Job");
  EXPECT_EQ((*created)["metadata"]["namespace"], "ml");
  EXPECT_TRUE(store_->Get({"Job", "ml", "resnet"}).has_value());

  auto wrong_collection = Post("/apis/strata.dev/v1alpha1/namespaces/ml/services", kPyTorchJob);
  ASSERT_FALSE(wrong_collection);
  EXPECT_EQ(wrong_collection.error().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(wrong_collection.error().message(), HasSubstr("expected one Service"));
}

TEST_F(RestApiTest, StaleResourceVersionIsAConflictAndChangesNothing) {
  Start();
  auto created = Post("/apis/strata.dev/v1alpha1/namespaces/team-a/jobs", kJob);
  ASSERT_TRUE(created);
  nlohmann::json job = *created;
  job["spec"]["replicas"] = 3;
  std::string path = "/apis/strata.dev/v1alpha1/namespaces/team-a/jobs/train";
  auto updated = client_->Call("PUT", path, job.dump(), "application/json");
  ASSERT_TRUE(updated) << updated.error().ToString();
  EXPECT_EQ((*updated)["spec"]["replicas"], 3);

  job["spec"]["replicas"] = 4;  // still carries the first resourceVersion
  auto stale = client_->Call("PUT", path, job.dump(), "application/json");
  ASSERT_FALSE(stale);
  EXPECT_EQ(stale.error().code(), StatusCode::kConflict);
  EXPECT_EQ((*client_->Get(path))["spec"]["replicas"], 3);
}

TEST_F(RestApiTest, BadInputIsRejectedWithTheFieldAndNothingIsStored) {
  Start();
  int64_t before = store_->CurrentVersion();
  std::string collection = "/apis/strata.dev/v1alpha1/namespaces/team-a/jobs";

  auto malformed = Post(collection, "kind: Job\nmetadata: {name: [\n");
  ASSERT_FALSE(malformed);
  EXPECT_EQ(malformed.error().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(malformed.error().message(), HasSubstr("line"));

  std::string typo = kJob;
  typo.replace(typo.find("replicas"), 8, "replcas");
  auto unknown_field = Post(collection, typo);
  ASSERT_FALSE(unknown_field);
  EXPECT_THAT(unknown_field.error().message(), HasSubstr("spec.replcas: unknown field"));

  auto unknown_kind = Post(collection,
                           "apiVersion: strata.dev/v1alpha1\nkind: Jobb\n"
                           "metadata: {name: x}\n");
  ASSERT_FALSE(unknown_kind);
  EXPECT_THAT(unknown_kind.error().message(), HasSubstr("unknown kind"));

  std::string big = std::string(kJob) + "# " + std::string(70 * 1024, 'x') + "\n";
  auto oversized = Post(collection, big);
  ASSERT_FALSE(oversized);
  EXPECT_THAT(oversized.error().message(), HasSubstr("larger than the limit"));

  // One bad document spoils the whole multi-document apply.
  std::string mixed = std::string(kQueues) + "---\n" + typo;
  auto partly_bad = Post(RestApi::kApplyPath, mixed);
  ASSERT_FALSE(partly_bad);
  EXPECT_THAT(partly_bad.error().message(), HasSubstr("document 3"));

  EXPECT_EQ(store_->CurrentVersion(), before);
}

TEST_F(RestApiTest, AnnotationsAndBodiesHaveKubernetesSizeLimitsAndAliasBombsAreRefused) {
  Start({}, 10000, ApiListenerOptions{}.max_body_bytes);
  int64_t before = store_->CurrentVersion();
  const std::string collection = "/apis/strata.dev/v1alpha1/namespaces/team-a/jobs";
  net::HttpClient http;
  auto post = [&](std::string body) {
    net::HttpRequest request;
    request.method = "POST";
    request.target = collection;
    request.headers.emplace_back("Content-Type", "application/yaml");
    request.headers.emplace_back("Authorization", std::string("Bearer ") + kAdmin);
    request.body = std::move(body);
    return http.Send("127.0.0.1", listener_->port(), request);
  };
  auto with_annotation = [](size_t bytes) {
    std::string job = kJob;
    job.insert(job.find("spec:"), "  annotations: {note: " + std::string(bytes, 'n') + "}\n");
    return job;
  };

  // Keys and values over 256 KiB together: refused naming the field, nothing stored.
  Result<net::HttpResponse> fat = post(with_annotation(256 * 1024));
  ASSERT_TRUE(fat.has_value()) << fat.error().ToString();
  EXPECT_EQ(fat->status, 400);
  EXPECT_THAT(fat->body, HasSubstr("metadata.annotations: too long: keys and values may not "
                                   "total more than 262144 bytes (they total 262148)"));
  EXPECT_EQ(store_->CurrentVersion(), before);

  // A body over 3 MiB: 413, before it is decoded.
  Result<net::HttpResponse> huge = post(std::string(kJob) + "# " + std::string(3 << 20, 'x'));
  ASSERT_TRUE(huge.has_value()) << huge.error().ToString();
  EXPECT_EQ(huge->status, 413);
  EXPECT_THAT(huge->body, HasSubstr("larger than the limit of 3145728 bytes"));

  // "Billion laughs": a small body whose aliases stand for 10^9 nodes.
  const std::string laughs = R"(kind: Job
l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]
l1: &l1 [*l0, *l0, *l0, *l0, *l0, *l0, *l0, *l0, *l0, *l0]
l2: &l2 [*l1, *l1, *l1, *l1, *l1, *l1, *l1, *l1, *l1, *l1]
l3: &l3 [*l2, *l2, *l2, *l2, *l2, *l2, *l2, *l2, *l2, *l2]
l4: &l4 [*l3, *l3, *l3, *l3, *l3, *l3, *l3, *l3, *l3, *l3]
l5: &l5 [*l4, *l4, *l4, *l4, *l4, *l4, *l4, *l4, *l4, *l4]
l6: &l6 [*l5, *l5, *l5, *l5, *l5, *l5, *l5, *l5, *l5, *l5]
l7: &l7 [*l6, *l6, *l6, *l6, *l6, *l6, *l6, *l6, *l6, *l6]
l8: &l8 [*l7, *l7, *l7, *l7, *l7, *l7, *l7, *l7, *l7, *l7]
l9: &l9 [*l8, *l8, *l8, *l8, *l8, *l8, *l8, *l8, *l8, *l8]
)";
  Result<net::HttpResponse> bomb = post(laughs);
  ASSERT_TRUE(bomb.has_value()) << bomb.error().ToString();
  EXPECT_EQ(bomb->status, 400);
  EXPECT_THAT(bomb->body, HasSubstr("expands to more than 1000000 nodes"));
  EXPECT_EQ(store_->CurrentVersion(), before);

  // Annotations just under the limit are kept.
  Result<net::HttpResponse> fits = post(with_annotation(256 * 1024 - 4));
  ASSERT_TRUE(fits.has_value()) << fits.error().ToString();
  EXPECT_EQ(fits->status, 201) << fits->body;
}

TEST_F(RestApiTest, ReplicasAboveTheirCeilingAreRefusedNamingTheField) {
  Start();
  auto created = Post("/apis/strata.dev/v1alpha1/namespaces/team-a/jobs", kJob);
  ASSERT_TRUE(created) << created.error().ToString();
  int64_t before = store_->CurrentVersion();

  // Scaling a stored Job up past the ceiling: the update is refused, the Job kept as it was.
  std::string huge_job = kJob;
  huge_job.replace(huge_job.find("replicas: 2"), 11, "replicas: 1000000000");
  auto scaled = client_->Call("PUT", "/apis/strata.dev/v1alpha1/namespaces/team-a/jobs/train",
                              huge_job, "application/yaml");
  ASSERT_FALSE(scaled);
  EXPECT_EQ(scaled.error().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(scaled.error().message(),
              HasSubstr("spec.replicas: 1000000000 exceeds the limit of 10000"));

  // The issue's Service, through the apply path.
  auto service = Post(RestApi::kApplyPath, R"(apiVersion: strata.dev/v1alpha1
kind: Service
metadata: {name: chat, namespace: team-a}
spec:
  model: chat
  engine: {command: [vllm, serve, m]}
  minReplicas: 1000000000
)");
  ASSERT_FALSE(service);
  EXPECT_EQ(service.error().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(service.error().message(),
              HasSubstr("spec.minReplicas: 1000000000 exceeds the limit of 10000"));
  EXPECT_EQ(store_->CurrentVersion(), before);
}

TEST_F(RestApiTest, ApplyCreatesEveryObjectThenReportsThemUnchanged) {
  Start();
  auto first = Post(RestApi::kApplyPath, kQueues);
  ASSERT_TRUE(first) << first.error().ToString();
  ASSERT_EQ((*first)["results"].size(), 2u);
  EXPECT_EQ((*first)["results"][0]["action"], "created");
  EXPECT_EQ((*first)["results"][1]["reference"], "queue.strata.dev/team-a");
  int64_t version = store_->CurrentVersion();

  auto second = Post(RestApi::kApplyPath, kQueues);
  ASSERT_TRUE(second);
  EXPECT_EQ((*second)["results"][1]["action"], "unchanged");
  EXPECT_EQ(store_->CurrentVersion(), version);

  std::string changed = kQueues;
  changed.replace(changed.find("nominal: 32"), 11, "nominal: 16");
  auto third = Post(RestApi::kApplyPath, changed);
  ASSERT_TRUE(third);
  EXPECT_EQ((*third)["results"][0]["action"], "unchanged");
  EXPECT_EQ((*third)["results"][1]["action"], "configured");
}

// kubectl get jobs: the READY cell counts each Job's own running pods (read from the cache by
// owner), not another Job's of the namespace, whether listed or got.
TEST_F(RestApiTest, AJobTablesReadyCellCountsItsOwnRunningPods) {
  Start();
  ASSERT_TRUE(Post("/apis/strata.dev/v1alpha1/namespaces/team-a/jobs", kJob));
  auto pod = [&](std::string name, std::string owner, std::string phase) {
    store::Object object;
    object.key = {"Pod", "team-a", name};
    object.body = {{"apiVersion", "strata.dev/v1alpha1"},
                   {"kind", "Pod"},
                   {"metadata", {{"name", name}, {"namespace", "team-a"}}},
                   {"spec",
                    {{"owner", {{"kind", "Job"}, {"name", owner}}},
                     {"template", {{"command", {"sleep", "1"}}}}}},
                   {"status", {{"phase", phase}}}};
    ASSERT_TRUE(store_->Create(std::move(object)));
  };
  pod("train-0", "train", "Running");
  pod("train-1", "train", "Pending");
  pod("other-0", "other", "Running");
  pod("other-1", "other", "Running");
  for (std::string target : {"/apis/strata.dev/v1alpha1/namespaces/team-a/jobs",
                             "/apis/strata.dev/v1alpha1/namespaces/team-a/jobs/train"}) {
    net::HttpRequest request;
    request.target = target;
    request.headers.push_back({"Accept", "application/json;as=Table;v=v1;g=meta.k8s.io"});
    request.headers.push_back({"Authorization", std::string("Bearer ") + kAdmin});
    ApiReply reply = api_->Handle(request);
    ASSERT_EQ(reply.response.status, 200) << reply.response.body;
    const nlohmann::json table = nlohmann::json::parse(reply.response.body);
    ASSERT_EQ(table["kind"], "Table") << target;
    size_t ready = 0;
    while (ready < table["columnDefinitions"].size() &&
           table["columnDefinitions"][ready]["name"] != "Ready") {
      ++ready;
    }
    ASSERT_LT(ready, table["columnDefinitions"].size());
    ASSERT_EQ(table["rows"].size(), 1u) << target;
    EXPECT_EQ(table["rows"][0]["cells"][ready], "1/2") << target;
  }
}

// Namespaces as Kubernetes' v1 Namespaces: made by a create into them (strata takes objects in
// any namespace) or by their own create; deleting one deletes what is in it, and nothing else.
TEST_F(RestApiTest, ANamespaceIsMadeByItsFirstObjectAndDeletedWithEverythingInIt) {
  Start();
  ASSERT_TRUE(Post("/apis/strata.dev/v1alpha1/namespaces/team-a/jobs", kJob));
  auto made = client_->Get("/api/v1/namespaces/team-a");
  ASSERT_TRUE(made) << made.error().ToString();
  EXPECT_EQ((*made)["apiVersion"], "v1");
  EXPECT_EQ((*made)["status"]["phase"], "Active");

  auto created = client_->Call("POST", "/api/v1/namespaces",
                               R"({"apiVersion": "v1", "kind": "Namespace",
                                   "metadata": {"name": "team-b"}, "spec": {}, "status": {}})",
                               "application/json");
  ASSERT_TRUE(created) << created.error().ToString();
  std::string other_job = kJob;
  other_job.replace(other_job.find("team-a"), 6, "team-b");
  ASSERT_TRUE(Post("/apis/strata.dev/v1alpha1/namespaces/team-b/jobs", other_job));
  auto names = [&] {
    std::vector<std::string> out;
    auto listed = client_->Get("/api/v1/namespaces");
    EXPECT_TRUE(listed);
    for (const auto& item : (*listed)["items"]) out.push_back(item["metadata"]["name"]);
    return out;
  };
  EXPECT_EQ(names(), (std::vector<std::string>{"team-a", "team-b"}));

  auto bad = client_->Call("POST", "/api/v1/namespaces",
                           R"({"apiVersion": "v1", "kind": "Namespace",
                               "metadata": {"name": "Team_C"}})",
                           "application/json");
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message(), HasSubstr("metadata.name"));

  ASSERT_TRUE(client_->Call("DELETE", "/api/v1/namespaces/team-a"));
  EXPECT_EQ(names(), (std::vector<std::string>{"team-b"}));
  auto gone = client_->Get("/apis/strata.dev/v1alpha1/namespaces/team-a/jobs/train");
  ASSERT_FALSE(gone);
  EXPECT_EQ(gone.error().code(), StatusCode::kNotFound);
  EXPECT_TRUE(client_->Get("/apis/strata.dev/v1alpha1/namespaces/team-b/jobs/train"));
}

// Kubernetes' typed clients send built-in kinds in protobuf: a Namespace is read as its JSON, a
// kind strata does not read so gets 415 naming it, as does a body of another type.
TEST_F(RestApiTest, ProtobufBodiesOfKindsStrataReadsAreTakenAndOthersAre415) {
  Start();
  auto post = [&](std::string path, std::string type, std::string body) {
    net::HttpRequest request;
    request.method = "POST";
    request.target = std::move(path);
    request.headers.push_back({"Content-Type", std::move(type)});
    request.headers.push_back({"Authorization", std::string("Bearer ") + kAdmin});
    request.body = std::move(body);
    return api_->Handle(request).response;
  };
  auto envelope = [](std::string kind, std::string name) {
    auto bytes = [](int field, std::string value) {
      return std::string(1, static_cast<char>(field << 3 | 2)) +
             std::string(1, static_cast<char>(value.size())) + value;
    };
    return std::string("k8s\0", 4) + bytes(1, bytes(1, "v1") + bytes(2, kind)) +
           bytes(2, bytes(1, bytes(1, name)));
  };
  net::HttpResponse ns =
      post("/api/v1/namespaces", std::string(kKubeProtobuf), envelope("Namespace", "team-p"));
  EXPECT_EQ(ns.status, 201) << ns.body;
  EXPECT_TRUE(client_->Get("/api/v1/namespaces/team-p"));

  net::HttpResponse pod =
      post("/api/v1/namespaces/team-p/pods", std::string(kKubeProtobuf), envelope("Pod", "p"));
  EXPECT_EQ(pod.status, 415) << pod.body;
  EXPECT_THAT(pod.body, HasSubstr("not v1 Pod; send it as JSON"));
  net::HttpResponse cbor = post("/api/v1/namespaces", "application/cbor", "\xa0");
  EXPECT_EQ(cbor.status, 415) << cbor.body;
  EXPECT_THAT(cbor.body, HasSubstr("application/cbor is not read"));
}

TEST_F(RestApiTest, ApplyReturnsIgnoredFieldsAsKubernetesWarningHeaders) {
  Start();
  net::HttpRequest request;
  request.method = "POST";
  request.target = std::string(RestApi::kApplyPath);
  request.headers.push_back({"Content-Type", "application/yaml"});
  request.headers.push_back({"Authorization", std::string("Bearer ") + kAdmin});
  request.body = R"(
apiVersion: batch/v1
kind: Job
metadata: {name: pi, namespace: default}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: pi, image: perl, imagePullPolicy: Always, command: [perl]}]
)";
  ApiReply reply = api_->Handle(request);
  ASSERT_EQ(reply.response.status, 200) << reply.response.body;
  EXPECT_EQ(reply.response.Header("Warning"),
            "299 - \"request body: document 1 (Job pi): "
            "spec.template.spec.containers[0].imagePullPolicy: ignored: pods run as local "
            "processes and pull no images\"");
}

TEST_F(RestApiTest, TokensAreRequiredWhenConfigured) {
  RestApiOptions options;
  options.tokens = {{"s3cret", "admin", {}}};
  Start(options);
  auto anonymous = Client("")->Get("/apis/strata.dev/v1alpha1/queues");
  ASSERT_FALSE(anonymous);
  EXPECT_EQ(anonymous.error().code(), StatusCode::kUnauthenticated);
  auto wrong = Client("guess")->Get("/api");
  ASSERT_FALSE(wrong);
  EXPECT_EQ(wrong.error().code(), StatusCode::kUnauthenticated);
  EXPECT_TRUE(Client("s3cret")->Get("/apis/strata.dev/v1alpha1/queues").has_value());
  // Health is open to a kubelet's probe, which carries no token; only for reading.
  for (const char* path : {"/healthz", "/readyz", "/livez"}) {
    net::HttpRequest probe;
    probe.method = "GET";
    probe.target = path;
    EXPECT_EQ(api_->Handle(probe).response.status, 200) << path;
    probe.method = "POST";
    EXPECT_NE(api_->Handle(probe).response.status, 200) << path;
  }
}

TEST_F(RestApiTest, PodStatusIsReplacedThroughTheStatusSubresource) {
  Start();
  auto created = Post("/api/v1/namespaces/default/pods",
                      "apiVersion: v1\nkind: Pod\nmetadata: {name: probe}\nspec:\n"
                      "  containers: [{name: c, image: i, command: [\"true\"]}]\n");
  ASSERT_TRUE(created) << created.error().ToString();
  nlohmann::json report = {{"status", {{"phase", "Running"}}}};
  auto updated = client_->Call("PUT", "/api/v1/namespaces/default/pods/probe/status", report.dump(),
                               "application/json");
  ASSERT_TRUE(updated) << updated.error().ToString();
  EXPECT_EQ((*updated)["status"]["phase"], "Running");
  // A spec update keeps the status the agent reported.
  nlohmann::json pod = *updated;
  pod["metadata"]["labels"] = {{"team", "a"}};
  pod.erase("status");
  auto relabeled =
      client_->Call("PUT", "/api/v1/namespaces/default/pods/probe", pod.dump(), "application/json");
  ASSERT_TRUE(relabeled) << relabeled.error().ToString();
  EXPECT_EQ((*relabeled)["status"]["phase"], "Running");
}

// Only a virtual kubelet's store marks a pod as one strata did not make; such a pod keeps the
// environment it names (CUDA_VISIBLE_DEVICES among it), so a user may not claim the mark.
TEST_F(RestApiTest, APodCannotClaimToBeForeignThroughTheApi) {
  Start();
  auto created = Post(api::kApplyPath,
                      "apiVersion: strata.dev/v1alpha1\nkind: Pod\nmetadata:\n  name: sneaky\n"
                      "  annotations: {strata.dev/foreign-pod: c}\nspec:\n"
                      "  template:\n    command: [\"true\"]\n"
                      "    env: [{name: CUDA_VISIBLE_DEVICES, value: \"0,1,2,3\"}]\n");
  ASSERT_FALSE(created);
  EXPECT_EQ(created.error().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(created.error().message(),
              ::testing::HasSubstr("metadata.annotations[strata.dev/foreign-pod]"));
  ASSERT_TRUE(Post("/api/v1/namespaces/default/pods",
                   "apiVersion: v1\nkind: Pod\nmetadata: {name: plain}\nspec:\n"
                   "  containers: [{name: c, image: i, command: [\"true\"]}]\n"));
  nlohmann::json mark = {{"metadata", {{"annotations", {{"strata.dev/cannot-run", "no"}}}}}};
  auto patched = client_->Call("PATCH", "/api/v1/namespaces/default/pods/plain", mark.dump(),
                               "application/merge-patch+json");
  ASSERT_FALSE(patched);
  EXPECT_EQ(patched.error().code(), StatusCode::kInvalidArgument);
}

TEST_F(RestApiTest, UnknownPathsAndMethodsAreStatusErrors) {
  Start();
  auto unknown = client_->Get("/apis/strata.dev/v1alpha1/widgets");
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code(), StatusCode::kNotFound);
  auto options = client_->Call("OPTIONS", "/apis/strata.dev/v1alpha1/queues/x");
  ASSERT_FALSE(options);
  EXPECT_EQ(options.error().code(), StatusCode::kUnimplemented);
  auto patch_collection = client_->Call("PATCH", "/apis/strata.dev/v1alpha1/queues", "{}",
                                        "application/merge-patch+json");
  ASSERT_FALSE(patch_collection);
  EXPECT_EQ(patch_collection.error().code(), StatusCode::kUnimplemented);
  auto namespaced_node = client_->Get("/api/v1/namespaces/default/nodes");
  ASSERT_FALSE(namespaced_node);
  EXPECT_EQ(namespaced_node.error().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace strata::server
