// The REST API's reads: watches and watch-lists, events in both groups, pods selected by field,
// and /metrics.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>

#include "net/http_client.h"
#include "server/rest_api_test_fixture.h"

namespace strata::server {
namespace {

using ::testing::HasSubstr;

TEST_F(RestApiTest, WatchStreamsChangesFromAVersionAndOldVersionsAreExpired) {
  Start({}, /*history_limit=*/4);
  std::string collection = "/apis/strata.dev/v1alpha1/namespaces/team-a/jobs";
  // Versions 1 and 2: the watch below starts after them (version 0 would mean "any version").
  ASSERT_TRUE(Post(RestApi::kApplyPath, kQueues));
  auto created = Post(collection, kJob);
  ASSERT_TRUE(created);
  int64_t version = std::stoll((*created)["metadata"]["resourceVersion"].get<std::string>());
  ASSERT_TRUE(client_->Call("DELETE", collection + "/train"));

  std::vector<std::string> types;
  Status watched =
      client_->Watch(collection + "?watch=1&resourceVersion=" + std::to_string(version - 1),
                     [&](const nlohmann::json& event) {
                       types.push_back(event["type"]);
                       EXPECT_EQ(event["object"]["metadata"]["name"], "train");
                       return types.size() < 2;
                     });
  ASSERT_TRUE(watched.ok()) << watched.ToString();
  EXPECT_EQ(types, (std::vector<std::string>{"ADDED", "DELETED"}));

  for (int i = 0; i < 6; ++i) {
    ASSERT_TRUE(Post(collection, kJob));
    ASSERT_TRUE(client_->Call("DELETE", collection + "/train"));
  }
  Status expired = client_->Watch(collection + "?watch=1&resourceVersion=1",
                                  [](const nlohmann::json&) { return false; });
  EXPECT_EQ(expired.code(), StatusCode::kExpired) << expired.ToString();
}

TEST_F(RestApiTest, WatchWithoutVersionStartsWithTheCurrentObjectsAndEndsOnTimeout) {
  Start();
  ASSERT_TRUE(Post(RestApi::kApplyPath, kQueues));
  std::vector<std::string> names;
  Status watched = client_->Watch("/apis/strata.dev/v1alpha1/queues?watch=true&timeoutSeconds=0",
                                  [&](const nlohmann::json& event) {
                                    names.push_back(event["object"]["metadata"]["name"]);
                                    return true;
                                  });
  ASSERT_TRUE(watched.ok()) << watched.ToString();
  EXPECT_EQ(names, std::vector<std::string>{"team-a"});
}

TEST_F(RestApiTest, MetricsCountRequestsAndPods) {
  Start();
  ASSERT_TRUE(client_->Get("/api"));
  auto metrics = client_->Call("GET", "/metrics");
  // Prometheus text is not JSON: the client reports that, and the raw scrape is checked below.
  ASSERT_FALSE(metrics);
  net::HttpClient http;
  net::HttpRequest request;
  request.target = "/metrics";
  request.headers.emplace_back("Authorization", std::string("Bearer ") + kAdmin);
  auto scraped = http.Send("127.0.0.1", listener_->port(), request);
  ASSERT_TRUE(scraped);
  EXPECT_THAT(scraped->body, HasSubstr("strata_apiserver_requests_total{verb=\"discovery\""));
  EXPECT_THAT(scraped->body, HasSubstr("strata_apiserver_pods{phase=\"Running\"} 0"));

  // ?families= keeps only the families named, headers and samples.
  request.target = "/metrics?families=strata_apiserver_pods,no_such_family";
  scraped = http.Send("127.0.0.1", listener_->port(), request);
  ASSERT_TRUE(scraped);
  EXPECT_THAT(scraped->body, HasSubstr("# TYPE strata_apiserver_pods gauge\n"));
  EXPECT_THAT(scraped->body, HasSubstr("strata_apiserver_pods{phase=\"Running\"} 0\n"));
  EXPECT_THAT(scraped->body, Not(HasSubstr("strata_apiserver_requests_total")));
  // Without a strata_* family asked for, the cluster state is not read: nothing is left here.
  request.target = "/metrics?families=DCGM_FI_DEV_GPU_UTIL";
  scraped = http.Send("127.0.0.1", listener_->port(), request);
  ASSERT_TRUE(scraped);
  EXPECT_EQ(scraped->body, "");
}

TEST_F(RestApiTest, MetricsOfSomeFamiliesRunOnlyTheCollectorsThatProduceThem) {
  int runs = 0;
  registry_.AddCollector({"strata_test_collected"},
                         [&runs](const metrics::FamilySelection&, std::string& out) {
                           ++runs;
                           out += "# HELP strata_test_collected Collected.\n";
                           out += "# TYPE strata_test_collected gauge\nstrata_test_collected 1\n";
                         });
  Start();
  net::HttpRequest request;
  request.headers.push_back({"Authorization", std::string("Bearer ") + kAdmin});
  request.target = "/metrics?families=strata_apiserver_pods";
  ApiReply reply = api_->Handle(request);
  EXPECT_THAT(reply.response.body, HasSubstr("strata_apiserver_pods{phase=\"Running\"} 0\n"));
  EXPECT_EQ(runs, 0);

  request.target = "/metrics?families=strata_test_collected";
  reply = api_->Handle(request);
  EXPECT_EQ(reply.response.body,
            "# HELP strata_test_collected Collected.\n"
            "# TYPE strata_test_collected gauge\nstrata_test_collected 1\n");
  EXPECT_EQ(runs, 1);

  // An empty list is the whole page, as no list is.
  request.target = "/metrics?families=";
  reply = api_->Handle(request);
  EXPECT_THAT(reply.response.body, HasSubstr("strata_apiserver_requests_total{"));
  EXPECT_THAT(reply.response.body, HasSubstr("strata_test_collected 1\n"));
  EXPECT_EQ(runs, 2);
}

TEST_F(RestApiTest, PodsAreSelectedByNodeAndPhaseAsKubectlDescribeNodeAsks) {
  Start();
  for (const char* pod : {"a", "b"}) {
    auto created = client_->Call(
        "POST", "/api/v1/namespaces/default/pods",
        std::string(R"({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": ")") + pod +
            R"("}, "spec": {"nodeName": "n1", "template": {"command": ["true"]}}})",
        "application/json");
    ASSERT_TRUE(created) << created.error().ToString();
  }
  ASSERT_TRUE(client_->Call("PUT", "/api/v1/namespaces/default/pods/b/status",
                            R"({"status": {"phase": "Succeeded"}})", "application/json"));
  auto listed = client_->Get(
      "/api/v1/pods?fieldSelector=spec.nodeName%3Dn1%2Cstatus.phase%21%3DSucceeded%2C"
      "status.phase%21%3DFailed");
  ASSERT_TRUE(listed) << listed.error().ToString();
  ASSERT_EQ((*listed)["items"].size(), 1u);
  EXPECT_EQ((*listed)["items"][0]["metadata"]["name"], "a");
  auto other_node = client_->Get("/api/v1/pods?fieldSelector=spec.nodeName!%3Dn1");
  ASSERT_TRUE(other_node);
  EXPECT_TRUE((*other_node)["items"].empty());
  auto not_a_pod_field = client_->Get("/api/v1/nodes?fieldSelector=status.phase%3DRunning");
  ASSERT_FALSE(not_a_pod_field);
  EXPECT_THAT(not_a_pod_field.error().message(), HasSubstr("\"status.phase\" is not supported"));
}

TEST_F(RestApiTest, AWatchListEndsTheCurrentStateWithTheInitialEventsEndBookmark) {
  Start();
  std::string collection = "/apis/strata.dev/v1alpha1/namespaces/team-a/jobs";
  auto created = Post(collection, kJob);
  ASSERT_TRUE(created);
  // client-go's reflectors (kubectl wait) ask for the state and the changes in one stream, from
  // a version they knew, and read on until this bookmark.
  std::vector<nlohmann::json> events;
  Status watched = client_->Watch(collection +
                                      "?watch=true&sendInitialEvents=true&allowWatchBookmarks=true"
                                      "&resourceVersionMatch=NotOlderThan&resourceVersion=1",
                                  [&](const nlohmann::json& event) {
                                    events.push_back(event);
                                    return events.size() < 2;
                                  });
  ASSERT_TRUE(watched.ok()) << watched.ToString();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0]["type"], "ADDED");
  EXPECT_EQ(events[1]["type"], "BOOKMARK");
  EXPECT_EQ(events[1]["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"], "true");
  EXPECT_EQ(events[1]["object"]["metadata"]["resourceVersion"],
            (*created)["metadata"]["resourceVersion"]);
}

TEST_F(RestApiTest, EventsAreServedInEventsK8sIoShapeBesideTheCoreGroup) {
  Start();
  auto created = client_->Call("POST", "/api/v1/namespaces/team-a/events", R"({
      "apiVersion": "v1", "kind": "Event", "metadata": {"name": "train.1", "namespace": "team-a"},
      "involvedObject": {"kind": "Job", "name": "train", "namespace": "team-a"},
      "type": "Warning", "reason": "FailedScheduling", "message": "0/4 nodes are available",
      "count": 3, "firstTimestamp": "2026-01-01T00:00:00Z",
      "lastTimestamp": "2026-01-01T00:05:00Z"})",
                               "application/json");
  ASSERT_TRUE(created) << created.error().ToString();

  auto listed = client_->Get("/apis/events.k8s.io/v1/namespaces/team-a/events");
  ASSERT_TRUE(listed) << listed.error().ToString();
  EXPECT_EQ((*listed)["apiVersion"], "events.k8s.io/v1");
  ASSERT_EQ((*listed)["items"].size(), 1u);
  const nlohmann::json& event = (*listed)["items"][0];
  EXPECT_EQ(event["apiVersion"], "events.k8s.io/v1");
  EXPECT_EQ(event["regarding"]["name"], "train");
  EXPECT_EQ(event["note"], "0/4 nodes are available");
  EXPECT_EQ(event["reason"], "FailedScheduling");
  EXPECT_EQ(event["type"], "Warning");
  EXPECT_EQ(event["eventTime"], "2026-01-01T00:05:00.000000Z");
  EXPECT_EQ(
      event["series"],
      nlohmann::json::parse(R"({"count": 3, "lastObservedTime": "2026-01-01T00:05:00.000000Z"})"));
  EXPECT_EQ(event["reportingController"], "strata.dev/control-plane");
  EXPECT_EQ(event["deprecatedFirstTimestamp"], "2026-01-01T00:00:00Z");

  auto one = client_->Get("/apis/events.k8s.io/v1/namespaces/team-a/events/train.1");
  ASSERT_TRUE(one);
  EXPECT_EQ((*one)["note"], "0/4 nodes are available");
  auto selected = client_->Get(
      "/apis/events.k8s.io/v1/namespaces/team-a/events?fieldSelector=regarding.name%3Dother");
  ASSERT_TRUE(selected);
  EXPECT_TRUE((*selected)["items"].empty());
  // The core group still serves its own shape.
  auto core = client_->Get("/api/v1/namespaces/team-a/events/train.1");
  ASSERT_TRUE(core);
  EXPECT_EQ((*core)["message"], "0/4 nodes are available");

  auto written = client_->Call("DELETE", "/apis/events.k8s.io/v1/namespaces/team-a/events/train.1");
  ASSERT_FALSE(written);
  EXPECT_THAT(written.error().message(), HasSubstr("write Events through /api/v1"));
}

}  // namespace
}  // namespace strata::server
