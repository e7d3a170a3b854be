#include "client/remote_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/encode.h"
#include "node/simulated_inventory.h"
#include "server/node_access.h"
#include "server/node_registration.h"
#include "server/test_api_server.h"

namespace strata::client {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;

constexpr char kJoinToken[] = "join-s3cret";

server::RestApiOptions Options() {
  server::RestApiOptions options;
  options.join_tokens = {kJoinToken};
  return options;
}

// A node agent's view: node "agent-1" joined the server, and a RemoteStore with its credential.
class RemoteStoreTest : public ::testing::Test {
 protected:
  RemoteStoreTest() : server_(Options()), admin_(server_.Client()) {
    auto spec = node::ParseSimulateSpec("1x2:H100-80GB");
    auto found = node::SimulatedInventory(*spec).Discover();
    (*found)[0].node_name = "agent-1";
    api::Node node = server::NodesFromInventory(*found, server::SimulatedNodeCapacity(), true,
                                                FakeClock().Now())[0];
    auto joined = server_.Client(kJoinToken)
                      ->Call("POST", server::NodeAccess::kJoinPath,
                             api::EncodeObject(api::Object(node)).dump(), "application/json");
    EXPECT_TRUE(joined) << joined.error().ToString();
    RemoteStoreOptions options;
    options.server = server_.url();
    options.token = (*joined)["token"];
    options.node_name = "agent-1";
    auto store = RemoteStore::Create(options);
    EXPECT_TRUE(store) << store.error().ToString();
    remote_ = std::move(*store);
  }

  void CreatePod(const std::string& name, const std::string& node) {
    Json pod = {{"apiVersion", "strata.dev/v1alpha1"},
                {"kind", "Pod"},
                {"metadata", {{"name", name}, {"namespace", "default"}, {"labels", {{"a", "b"}}}}},
                {"spec", {{"nodeName", node}, {"template", {{"command", {"true"}}}}}}};
    auto created =
        admin_->Call("POST", "/api/v1/namespaces/default/pods", pod.dump(), "application/json");
    ASSERT_TRUE(created) << created.error().ToString();
  }

  server::testing::TestApiServer server_;
  std::unique_ptr<ApiClient> admin_;
  std::unique_ptr<RemoteStore> remote_;
};

TEST_F(RemoteStoreTest, ListsAndGetsOnlyWhatTheNodeMaySee) {
  CreatePod("mine", "agent-1");
  CreatePod("theirs", "agent-2");
  store::Selection pods_selection;
  pods_selection.kind = "Pod";
  auto pods = remote_->List(pods_selection);
  ASSERT_TRUE(pods) << pods.error().ToString();
  ASSERT_EQ(pods->items.size(), 1u);
  EXPECT_EQ(pods->items[0].key, (store::ObjectKey{"Pod", "default", "mine"}));
  EXPECT_EQ(pods->items[0].labels.at("a"), "b");
  EXPECT_GT(pods->items[0].resource_version, 0);
  EXPECT_EQ(remote_->CurrentVersion(), pods->resource_version);

  auto theirs = remote_->Get({"Pod", "default", "theirs"});
  ASSERT_FALSE(theirs);
  EXPECT_EQ(theirs.error().code(), StatusCode::kPermissionDenied);
  store::Selection nodes_selection;
  nodes_selection.kind = "Node";
  auto nodes = remote_->List(nodes_selection);
  ASSERT_TRUE(nodes) << nodes.error().ToString();
  ASSERT_EQ(nodes->items.size(), 1u);
  EXPECT_EQ(nodes->items[0].key.name, "agent-1");
}

TEST_F(RemoteStoreTest, UpdatesWriteAPodsStatusAndAnnotationsWithTheVersionAsPrecondition) {
  CreatePod("mine", "agent-1");
  auto pod = remote_->Get({"Pod", "default", "mine"});
  ASSERT_TRUE(pod);
  store::Object update = *pod;
  update.body["status"] = {{"phase", "Running"}};
  update.body["metadata"]["annotations"] = {{"strata.dev/started-at", "2026-01-01T00:00:00Z"}};
  auto written = remote_->Update(update);
  ASSERT_TRUE(written) << written.error().ToString();
  EXPECT_GT(written->resource_version, pod->resource_version);

  auto stored = admin_->Get("/api/v1/namespaces/default/pods/mine");
  ASSERT_TRUE(stored);
  EXPECT_EQ((*stored)["status"]["phase"], "Running");
  EXPECT_EQ((*stored)["metadata"]["annotations"]["strata.dev/started-at"], "2026-01-01T00:00:00Z");

  auto stale = remote_->Update(update);  // still carries the version it read first
  ASSERT_FALSE(stale);
  EXPECT_EQ(stale.error().code(), StatusCode::kConflict);
  auto batch =
      remote_->Apply({{store::WriteOp::kUpdate, *written}, {store::WriteOp::kUpdate, *written}});
  ASSERT_FALSE(batch);
  EXPECT_THAT(batch.error().message(), HasSubstr("one write at a time"));
}

TEST_F(RemoteStoreTest, HeartbeatsGoThroughTheNodesStatus) {
  FakeClock clock;
  clock.Advance(std::chrono::hours(1));
  ASSERT_TRUE(server::HeartbeatNodes(*remote_, {"agent-1"}, clock.Now()).ok());
  auto node = admin_->Get("/api/v1/nodes/agent-1");
  ASSERT_TRUE(node);
  EXPECT_THAT(node->dump(), HasSubstr(FormatRfc3339(clock.Now())));
}

TEST_F(RemoteStoreTest, AWatchDeliversTheNodesPodsInOrder) {
  store::WatchOptions options;
  options.selection.kind = "Pod";
  auto watcher = remote_->Watch(options);
  ASSERT_TRUE(watcher) << watcher.error().ToString();
  CreatePod("theirs", "agent-2");
  CreatePod("first", "agent-1");
  ASSERT_TRUE(admin_->Call("DELETE", "/api/v1/namespaces/default/pods/first").has_value());
  auto added = (*watcher)->Next(std::chrono::seconds(30));
  ASSERT_TRUE(added) << added.error().ToString();
  EXPECT_EQ(added->type, store::WatchEventType::kAdded);
  EXPECT_EQ(added->object.key.name, "first");
  auto deleted = (*watcher)->Next(std::chrono::seconds(30));
  ASSERT_TRUE(deleted) << deleted.error().ToString();
  EXPECT_EQ(deleted->type, store::WatchEventType::kDeleted);
  EXPECT_EQ((*watcher)->ProgressVersion(), deleted->object.resource_version);
}

}  // namespace
}  // namespace strata::client
