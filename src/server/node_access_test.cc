#include "server/node_access.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <tuple>

#include "api/encode.h"
#include "api/node_lease.h"
#include "client/remote_store.h"
#include "node/simulated_inventory.h"
#include "server/node_registration.h"
#include "server/test_api_server.h"

namespace strata::server {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;

constexpr char kJoinToken[] = "join-s3cret";

// The Node manifest an agent named `name` with one simulated 8-GPU node sends to join.
std::string NodeManifest(const std::string& name) {
  auto spec = node::ParseSimulateSpec("1x8:H100-80GB");
  EXPECT_TRUE(spec);
  auto found = node::SimulatedInventory(*spec).Discover();
  EXPECT_TRUE(found);
  node::RenameSimulatedNode((*found)[0], name);
  std::vector<api::Node> nodes =
      NodesFromInventory(*found, SimulatedNodeCapacity(), true, FakeClock().Now());
  return api::EncodeObject(api::Object(nodes[0])).dump();
}

std::string PodManifest(const std::string& name, const std::string& node) {
  return Json{{"apiVersion", "strata.dev/v1alpha1"},
              {"kind", "Pod"},
              {"metadata", {{"name", name}, {"namespace", "default"}}},
              {"spec",
               {{"nodeName", node},
                {"resources", {{"gpu", "1"}}},
                {"template", {{"command", {"sleep", "1"}}}}}}}
      .dump();
}

class NodeAccessTest : public ::testing::Test {
 protected:
  NodeAccessTest() : server_(Options(&leases_)) {}

  static RestApiOptions Options(controller::NodeLeases* leases) {
    RestApiOptions options;
    options.join_tokens = {kJoinToken};
    options.node_leases = leases;
    return options;
  }

  Result<Json> Join(const std::string& name, const std::string& token = kJoinToken) {
    return server_.Client(token)->Call("POST", NodeAccess::kJoinPath, NodeManifest(name),
                                       "application/json");
  }

  // Joins `name` and returns a client holding its credential.
  std::unique_ptr<client::ApiClient> Agent(const std::string& name) {
    Result<Json> joined = Join(name);
    EXPECT_TRUE(joined) << joined.error().ToString();
    return server_.Client((*joined)["token"].get<std::string>());
  }

  void CreatePods() {
    auto admin = server_.Client();
    for (auto [pod, node] : {std::pair{"mine", "agent-1"}, std::pair{"theirs", "agent-2"}}) {
      auto created = admin->Call("POST", "/api/v1/namespaces/default/pods", PodManifest(pod, node),
                                 "application/json");
      ASSERT_TRUE(created) << created.error().ToString();
    }
  }

  controller::NodeLeases leases_{RealClock::Instance().Now()};  // before the server using it
  testing::TestApiServer server_;
};

TEST_F(NodeAccessTest, JoiningRegistersTheNodeAndIssuesACredentialBoundToIt) {
  Result<Json> joined = Join("agent-1");
  ASSERT_TRUE(joined) << joined.error().ToString();
  EXPECT_EQ((*joined)["kind"], "NodeCredential");
  EXPECT_EQ((*joined)["nodeName"], "agent-1");
  std::string token = (*joined)["token"];
  EXPECT_TRUE(NodeAccess::LooksLikeNodeCredential(token)) << token;

  auto node = server_.Client()->Get("/api/v1/nodes/agent-1");
  ASSERT_TRUE(node) << node.error().ToString();
  EXPECT_EQ((*node)["status"]["gpus"].size(), 8u);
  EXPECT_TRUE(server_.Client(token)->Get("/api/v1/nodes/agent-1").has_value());
}

TEST_F(NodeAccessTest, AWrongJoinTokenIsUnauthorizedAndRegistersNothing) {
  Result<Json> refused = Join("agent-1", "guess");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), StatusCode::kUnauthenticated);
  EXPECT_THAT(refused.error().message(), HasSubstr("join token"));
  auto node = server_.Client()->Get("/api/v1/nodes/agent-1");
  ASSERT_FALSE(node);
  EXPECT_EQ(node.error().code(), StatusCode::kNotFound);
}

TEST_F(NodeAccessTest, JoiningIsOffWithoutJoinTokens) {
  testing::TestApiServer closed;
  auto refused =
      closed.Client(kJoinToken)
          ->Call("POST", NodeAccess::kJoinPath, NodeManifest("agent-1"), "application/json");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), StatusCode::kPermissionDenied);
  EXPECT_THAT(refused.error().message(), HasSubstr("--join-token-file"));
}

TEST_F(NodeAccessTest, AMalformedNodeIsRefusedNamingTheField) {
  Json node = Json::parse(NodeManifest("agent-1"));
  node["spec"] = {{"unschedulabel", true}};
  auto refused = server_.Client(kJoinToken)
                     ->Call("POST", NodeAccess::kJoinPath, node.dump(), "application/json");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.error().message(), HasSubstr("unschedulabel"));
  EXPECT_FALSE(server_.Client()->Get("/api/v1/nodes/agent-1").has_value());
}

TEST_F(NodeAccessTest, ANodeTheControlPlaneRegisteredCannotBeTakenOver) {
  std::vector<node::NodeGpus> found = {{"local-0", "", {}}};
  ASSERT_TRUE(RegisterNodes(server_.store(),
                            NodesFromInventory(found, HostCapacity(), false, FakeClock().Now()))
                  .ok());
  Result<Json> refused = Join("local-0");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), StatusCode::kAlreadyExists);
}

TEST_F(NodeAccessTest, ACredentialReadsOnlyItsNodeAndItsPods) {
  CreatePods();
  auto agent = Agent("agent-1");
  ASSERT_TRUE(Join("agent-2"));

  auto mine = agent->Get("/api/v1/pods?fieldSelector=spec.nodeName%3Dagent-1");
  ASSERT_TRUE(mine) << mine.error().ToString();
  ASSERT_EQ((*mine)["items"].size(), 1u);
  EXPECT_EQ((*mine)["items"][0]["metadata"]["name"], "mine");
  EXPECT_TRUE(agent->Get("/api/v1/namespaces/default/pods/mine").has_value());
  EXPECT_TRUE(agent->Get("/api/v1/nodes?fieldSelector=metadata.name%3Dagent-1").has_value());

  for (const char* path :
       {"/api/v1/pods", "/api/v1/pods?fieldSelector=spec.nodeName%3Dagent-2",
        "/api/v1/namespaces/default/pods/theirs", "/api/v1/nodes", "/api/v1/nodes/agent-2",
        "/apis/strata.dev/v1alpha1/jobs", "/apis/strata.dev/v1alpha1/queues", "/metrics"}) {
    auto denied = agent->Get(path);
    ASSERT_FALSE(denied) << path;
    EXPECT_EQ(denied.error().code(), StatusCode::kPermissionDenied) << path;
    EXPECT_THAT(denied.error().message(), HasSubstr("node \"agent-1\" may not GET")) << path;
  }
}

TEST_F(NodeAccessTest, ACredentialReadsOnlyTheSecretsAndConfigMapsItsPodsRead) {
  auto admin = server_.Client();
  auto pod = [](const std::string& name, const std::string& node, const std::string& secret) {
    return Json{{"apiVersion", "v1"},
                {"kind", "Pod"},
                {"metadata", {{"name", name}, {"namespace", "default"}}},
                {"spec",
                 {{"nodeName", node},
                  {"containers",
                   {{{"name", "main"},
                     {"command", {"env"}},
                     {"env",
                      {{{"name", "TOKEN"},
                        {"valueFrom", {{"secretKeyRef", {{"name", secret}, {"key", "k"}}}}}}}},
                     {"envFrom", {{{"configMapRef", {{"name", secret + "-config"}}}}}}}}}}}}
        .dump();
  };
  for (auto [name, node, secret] : {std::tuple{"mine", "agent-1", "my-secret"},
                                    std::tuple{"theirs", "agent-2", "their-secret"}}) {
    ASSERT_TRUE(admin->Call("POST", "/api/v1/namespaces/default/pods", pod(name, node, secret),
                            "application/json"));
    for (const char* kind : {"Secret", "ConfigMap"}) {
      const bool is_secret = kind == std::string("Secret");
      Json object = {{"apiVersion", "v1"},
                     {"kind", kind},
                     {"metadata",
                      {{"name", is_secret ? std::string(secret) : std::string(secret) + "-config"},
                       {"namespace", "default"}}},
                     {"data", {{"k", is_secret ? "djE=" : "v1"}}}};
      ASSERT_TRUE(admin->Call("POST",
                              is_secret ? "/api/v1/namespaces/default/secrets"
                                        : "/api/v1/namespaces/default/configmaps",
                              object.dump(), "application/json"));
    }
  }
  auto agent = Agent("agent-1");
  auto read = agent->Get("/api/v1/namespaces/default/secrets/my-secret");
  ASSERT_TRUE(read) << read.error().ToString();
  EXPECT_EQ((*read)["data"]["k"], "djE=");
  EXPECT_TRUE(agent->Get("/api/v1/namespaces/default/configmaps/my-secret-config"));
  for (const char* path : {"/api/v1/namespaces/default/secrets/their-secret",
                           "/api/v1/namespaces/default/configmaps/their-secret-config",
                           "/api/v1/namespaces/default/secrets", "/api/v1/secrets"}) {
    auto denied = agent->Get(path);
    ASSERT_FALSE(denied) << path;
    EXPECT_EQ(denied.error().code(), StatusCode::kPermissionDenied) << path;
  }
  auto anonymous = server_.Client("")->Get("/api/v1/namespaces/default/secrets/my-secret");
  ASSERT_FALSE(anonymous);
  EXPECT_EQ(anonymous.error().code(), StatusCode::kUnauthenticated);
}

TEST_F(NodeAccessTest, ACredentialWritesOnlyItsPodsStatusAndItsNodesStatus) {
  CreatePods();
  auto agent = Agent("agent-1");
  ASSERT_TRUE(Join("agent-2"));
  Json status = {{"status", {{"phase", "Running"}}}};
  auto written = agent->Call("PUT", "/api/v1/namespaces/default/pods/mine/status", status.dump(),
                             "application/json");
  ASSERT_TRUE(written) << written.error().ToString();
  EXPECT_EQ((*written)["status"]["phase"], "Running");

  auto node = agent->Get("/api/v1/nodes/agent-1");
  ASSERT_TRUE(node);
  auto heartbeat =
      agent->Call("PUT", "/api/v1/nodes/agent-1/status", node->dump(), "application/json");
  EXPECT_TRUE(heartbeat) << heartbeat.error().ToString();

  Json pod = server_.Client()->Get("/api/v1/namespaces/default/pods/mine").value();
  pod["spec"]["nodeName"] = "agent-2";
  struct Attempt {
    const char* method;
    const char* path;
    std::string body;
  };
  for (const Attempt& attempt :
       {Attempt{"PUT", "/api/v1/namespaces/default/pods/theirs/status", status.dump()},
        Attempt{"PUT", "/api/v1/namespaces/default/pods/mine", pod.dump()},
        Attempt{"DELETE", "/api/v1/namespaces/default/pods/mine", ""},
        Attempt{"POST", "/api/v1/namespaces/default/pods", PodManifest("extra", "agent-1")},
        Attempt{"PUT", "/api/v1/nodes/agent-2/status", node->dump()},
        Attempt{"POST", "/apis/strata.dev/v1alpha1/apply", PodManifest("extra", "agent-1")},
        // An agent writes whole statuses: no patch, not even of its own objects, nor eviction.
        Attempt{"PATCH", "/api/v1/namespaces/default/pods/mine/status", status.dump()},
        Attempt{"PATCH", "/api/v1/namespaces/default/pods/mine", R"({"metadata": {}})"},
        Attempt{"PATCH", "/api/v1/nodes/agent-1/status", status.dump()},
        Attempt{"POST", "/api/v1/namespaces/default/pods/mine/eviction", "{}"}}) {
    const bool patch = std::string_view(attempt.method) == "PATCH";
    auto denied = agent->Call(attempt.method, attempt.path, attempt.body,
                              patch ? "application/merge-patch+json" : "application/json");
    ASSERT_FALSE(denied) << attempt.method << " " << attempt.path;
    EXPECT_EQ(denied.error().code(), StatusCode::kPermissionDenied)
        << attempt.method << " " << attempt.path;
  }
  // Nothing of the refused writes happened.
  auto theirs = server_.Client()->Get("/api/v1/namespaces/default/pods/theirs");
  ASSERT_TRUE(theirs);
  EXPECT_NE((*theirs)["status"].value("phase", ""), "Running");
  EXPECT_FALSE(server_.Client()->Get("/api/v1/namespaces/default/pods/extra").has_value());
  EXPECT_TRUE(server_.Client()->Get("/api/v1/namespaces/default/pods/mine").has_value());
}

TEST_F(NodeAccessTest, ACredentialRenewsItsOwnNodesLeaseOnly) {
  Result<Json> joined = Join("agent-1");
  ASSERT_TRUE(joined) << joined.error().ToString();
  const std::string token = (*joined)["token"];
  auto agent = server_.Client(token);
  ASSERT_TRUE(Join("agent-2"));
  const TimePoint before = RealClock::Instance().Now();
  auto renewed = agent->Call("PUT", api::NodeLeasePath("agent-1"),
                             api::NodeLeaseJson("agent-1", before), "application/json");
  ASSERT_TRUE(renewed) << renewed.error().ToString();
  EXPECT_EQ((*renewed)["kind"], "Lease");
  EXPECT_EQ((*renewed)["metadata"]["namespace"], "kube-node-lease");
  EXPECT_EQ((*renewed)["spec"]["holderIdentity"], "agent-1");
  ASSERT_TRUE(leases_.Renewed("agent-1").has_value());
  EXPECT_GE(*leases_.Renewed("agent-1"), before);
  auto read = agent->Get(api::NodeLeasePath("agent-1"));
  ASSERT_TRUE(read) << read.error().ToString();
  EXPECT_EQ((*read)["spec"]["renewTime"], (*renewed)["spec"]["renewTime"]);

  // The agent's store renews it the same way, and no other node's.
  client::RemoteStoreOptions remote_options;
  remote_options.server = server_.url();
  remote_options.token = token;
  remote_options.node_name = "agent-1";
  auto remote = client::RemoteStore::Create(remote_options);
  ASSERT_TRUE(remote);
  EXPECT_TRUE((*remote)->RenewNodeLease("agent-1", before).ok());
  Status other = (*remote)->RenewNodeLease("agent-2", before);
  EXPECT_EQ(other.code(), StatusCode::kPermissionDenied);
  EXPECT_THAT(other.message(), HasSubstr("another node's Lease"));
  auto read_other = agent->Get(api::NodeLeasePath("agent-2"));
  ASSERT_FALSE(read_other);
  EXPECT_EQ(read_other.error().code(), StatusCode::kPermissionDenied);
  auto delete_own = agent->Call("DELETE", api::NodeLeasePath("agent-1"));
  ASSERT_FALSE(delete_own);
  EXPECT_EQ(delete_own.error().code(), StatusCode::kPermissionDenied);
  EXPECT_FALSE(leases_.Renewed("agent-2").has_value());
}

TEST_F(NodeAccessTest, ALeaseIsRenewedOnlyForANodeThatExistsAndByItsName) {
  auto admin = server_.Client();
  ASSERT_TRUE(Join("agent-1"));
  auto missing = admin->Call("PUT", api::NodeLeasePath("nobody"), "", "application/json");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), StatusCode::kNotFound);
  EXPECT_FALSE(leases_.Renewed("nobody").has_value());

  auto misnamed = admin->Call("PUT", api::NodeLeasePath("agent-1"),
                              api::NodeLeaseJson("agent-2", FakeClock().Now()), "application/json");
  ASSERT_FALSE(misnamed);
  EXPECT_EQ(misnamed.error().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(misnamed.error().message(), HasSubstr("metadata.name"));
  auto not_an_object = admin->Call("PUT", api::NodeLeasePath("agent-1"), "[1]", "application/json");
  ASSERT_FALSE(not_an_object);
  EXPECT_EQ(not_an_object.error().code(), StatusCode::kInvalidArgument);
  auto truncated = admin->Call("PUT", api::NodeLeasePath("agent-1"),
                               R"({"metadata": {"name": "agent-1"})", "application/json");
  ASSERT_FALSE(truncated);
  EXPECT_EQ(truncated.error().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(truncated.error().message(), HasSubstr("byte"));
  auto numbered = admin->Call("PUT", api::NodeLeasePath("agent-1"), R"({"metadata": {"name": 1}})",
                              "application/json");
  ASSERT_FALSE(numbered);
  EXPECT_THAT(numbered.error().message(), HasSubstr("metadata.name: expected a string"));
  EXPECT_FALSE(leases_.Renewed("agent-1").has_value());

  auto unread = admin->Get(api::NodeLeasePath("agent-1"));
  ASSERT_FALSE(unread);
  EXPECT_EQ(unread.error().code(), StatusCode::kNotFound);
  auto deleted = admin->Call("DELETE", api::NodeLeasePath("agent-1"));
  ASSERT_FALSE(deleted);
  EXPECT_EQ(deleted.error().code(), StatusCode::kUnimplemented);
  // An empty body renews too.
  EXPECT_TRUE(admin->Call("PUT", api::NodeLeasePath("agent-1"), "", "application/json"));
  EXPECT_TRUE(leases_.Renewed("agent-1").has_value());

  // The Lease goes with its node.
  EXPECT_TRUE(admin->Call("DELETE", "/api/v1/nodes/agent-1"));
  EXPECT_FALSE(leases_.Renewed("agent-1").has_value());
}

TEST(NodeLeaseApiTest, AnApiWithoutLeasesServesNone) {
  testing::TestApiServer server;
  auto read = server.Client()->Call("PUT", api::NodeLeasePath("agent-1"), "", "application/json");
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().code(), StatusCode::kNotFound);
}

TEST_F(NodeAccessTest, AJoinTokenAdmitsANameOnceAndTheAgentRejoinsWithItsCredential) {
  auto first = Join("agent-1");
  ASSERT_TRUE(first);
  const std::string credential = (*first)["token"];

  // Whoever holds the join token cannot take the joined node over.
  auto taken = Join("agent-1");
  ASSERT_FALSE(taken);
  EXPECT_EQ(taken.error().code(), StatusCode::kPermissionDenied);
  EXPECT_THAT(taken.error().message(), HasSubstr("node \"agent-1\" has joined already"));
  EXPECT_TRUE(server_.Client(credential)->Get("/api/v1/nodes/agent-1").has_value());

  // The agent itself joins again with its credential, which stays valid.
  auto again = Join("agent-1", credential);
  ASSERT_TRUE(again) << again.error().ToString();
  EXPECT_EQ((*again)["token"], credential);
  EXPECT_TRUE(server_.Client(credential)->Get("/api/v1/nodes/agent-1").has_value());

  // Another node's credential joins nothing but its own node.
  auto other = Join("agent-2");
  ASSERT_TRUE(other);
  auto borrowed = Join("agent-1", (*other)["token"]);
  ASSERT_FALSE(borrowed);
  EXPECT_EQ(borrowed.error().code(), StatusCode::kUnauthenticated);
}

TEST_F(NodeAccessTest, AnAdminRejoinsANodeWithANewCredentialAndADeletedNodeJoinsAgain) {
  auto first = Join("agent-1");
  ASSERT_TRUE(first);
  auto replaced = Join("agent-1", testing::TestApiServer::kAdminToken);
  ASSERT_TRUE(replaced) << replaced.error().ToString();
  EXPECT_NE((*replaced)["token"], (*first)["token"]);
  auto old = server_.Client((*first)["token"])->Get("/api/v1/nodes/agent-1");
  ASSERT_FALSE(old);
  EXPECT_EQ(old.error().code(), StatusCode::kUnauthenticated);
  EXPECT_TRUE(server_.Client((*replaced)["token"])->Get("/api/v1/nodes/agent-1").has_value());

  ASSERT_TRUE(server_.Client()->Call("DELETE", "/api/v1/nodes/agent-1"));
  auto rejoined = Join("agent-1");
  ASSERT_TRUE(rejoined) << rejoined.error().ToString();
  EXPECT_TRUE(server_.Client((*rejoined)["token"])->Get("/api/v1/nodes/agent-1").has_value());
}

TEST_F(NodeAccessTest, ANodeClaimingAnotherNodesGpuUuidIsRefusedNamingTheUuidAndTheNode) {
  auto agent = Agent("agent-1");
  // agent-2's manifest with agent-1's third GPU in it.
  Json other = Json::parse(NodeManifest("agent-2"));
  other["status"]["gpus"][2]["uuid"] = "GPU-agent-1-02";
  auto refused = server_.Client(kJoinToken)
                     ->Call("POST", NodeAccess::kJoinPath, other.dump(), "application/json");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), StatusCode::kAlreadyExists);
  EXPECT_THAT(refused.error().message(),
              HasSubstr("status.gpus[2].uuid \"GPU-agent-1-02\" is a GPU that node \"agent-1\" "
                        "reports already"));
  EXPECT_THAT(refused.error().message(), HasSubstr("strata delete node agent-1"));
  EXPECT_FALSE(server_.Client()->Get("/api/v1/nodes/agent-2").has_value());

  // A joined node cannot claim it through its status either, and its status is unchanged.
  auto second = Agent("agent-2");
  Json status = second->Get("/api/v1/nodes/agent-2").value();
  status["status"]["gpus"][0]["uuid"] = "GPU-agent-1-05";
  auto written =
      second->Call("PUT", "/api/v1/nodes/agent-2/status", status.dump(), "application/json");
  ASSERT_FALSE(written);
  EXPECT_EQ(written.error().code(), StatusCode::kAlreadyExists);
  EXPECT_THAT(written.error().message(), HasSubstr("\"GPU-agent-1-05\""));
  EXPECT_EQ(server_.Client()->Get("/api/v1/nodes/agent-2").value()["status"]["gpus"][0]["uuid"],
            "GPU-agent-2-00");

  // Once an admin deletes agent-1, its GPUs are free to be claimed.
  ASSERT_TRUE(server_.Client()->Call("DELETE", "/api/v1/nodes/agent-1"));
  auto claimed =
      second->Call("PUT", "/api/v1/nodes/agent-2/status", status.dump(), "application/json");
  EXPECT_TRUE(claimed) << claimed.error().ToString();
}

TEST_F(NodeAccessTest, CredentialsAreKeptInTheStoreAcrossRestarts) {
  NodeAccess before(server_.store(), {kJoinToken});
  auto joined = before.Join(kJoinToken, /*admin=*/false, NodeManifest("agent-1"));
  ASSERT_TRUE(joined) << joined.error().ToString();
  NodeAccess after(server_.store(), {kJoinToken});
  auto node = after.NodeOf((*joined)["token"].get<std::string>());
  ASSERT_TRUE(node) << node.error().ToString();
  EXPECT_EQ(*node, "agent-1");
  EXPECT_FALSE(after.NodeOf("agent-1." + std::string(64, 'a')).has_value());
}

TEST(FieldSelectorValueTest, FindsOneFieldAmongSeveral) {
  EXPECT_EQ(FieldSelectorValue("metadata.name=p,spec.nodeName==n1", "spec.nodeName"), "n1");
  EXPECT_EQ(FieldSelectorValue("spec.nodeName!=n1", "spec.nodeName"), "");
  EXPECT_EQ(FieldSelectorValue("", "spec.nodeName"), "");
}

}  // namespace
}  // namespace strata::server
