#include "server/node_registration.h"

#include <gtest/gtest.h>

#include "node/simulated_inventory.h"

namespace strata::server {
namespace {

std::vector<api::Node> SimulatedNodes(std::string_view spec_text, TimePoint now) {
  auto spec = node::ParseSimulateSpec(spec_text);
  EXPECT_TRUE(spec);
  node::SimulatedInventory inventory(*spec);
  auto found = inventory.Discover();
  EXPECT_TRUE(found);
  return NodesFromInventory(*found, SimulatedNodeCapacity(), /*simulated=*/true, now);
}

TEST(NodeRegistrationTest, SimulatedInventoryBecomesLabelledNodesWithGpus) {
  FakeClock clock;
  std::vector<api::Node> nodes = SimulatedNodes(node::kDefaultSimulateSpec, clock.Now());
  ASSERT_EQ(nodes.size(), 4u);
  const api::Node& first = nodes[0];
  EXPECT_EQ(first.metadata.labels.at(api::kRackLabel), "rack-0");
  EXPECT_EQ(nodes[3].metadata.labels.at(api::kRackLabel), "rack-1");
  EXPECT_EQ(first.metadata.labels.at(api::kGpuModelLabel), "H100-80GB");
  EXPECT_EQ(first.metadata.labels.at(api::kSimulatedLabel), "true");
  ASSERT_EQ(first.status.gpus.size(), 8u);
  EXPECT_EQ(first.status.gpus[7].index, 7);
  EXPECT_EQ(first.status.gpus[0].model, "H100-80GB");
  ASSERT_EQ(first.status.conditions.size(), 1u);
  EXPECT_EQ(first.status.conditions[0].status, "True");
  EXPECT_EQ(first.status.conditions[0].last_heartbeat_time, "2026-01-01T00:00:00Z");
}

TEST(NodeRegistrationTest, RegisteringAgainKeepsTheOperatorsSpecAndHeartbeatsAdvance) {
  FakeClock clock;
  auto store = store::NewMemoryStore({&clock});
  std::vector<api::Node> nodes = SimulatedNodes("2x4:A100-80GB", clock.Now());
  ASSERT_TRUE(RegisterNodes(*store, nodes).ok());
  auto listed = store->List({"Node", std::nullopt, {}});
  ASSERT_TRUE(listed);
  ASSERT_EQ(listed->items.size(), 2u);

  store::Object cordoned = listed->items[0];
  cordoned.body["spec"]["unschedulable"] = true;
  ASSERT_TRUE(store->Update(cordoned));
  ASSERT_TRUE(RegisterNodes(*store, nodes).ok());
  auto after = store->Get(cordoned.key);
  ASSERT_TRUE(after);
  EXPECT_EQ(after->body["spec"]["unschedulable"], true);
  EXPECT_EQ(after->uid, cordoned.uid);

  clock.Advance(std::chrono::seconds(30));
  ASSERT_TRUE(HeartbeatNodes(*store, {cordoned.key.name, "gone"}, clock.Now()).ok());
  auto beaten = store->Get(cordoned.key);
  ASSERT_TRUE(beaten);
  EXPECT_EQ(beaten->body["status"]["conditions"][0]["lastHeartbeatTime"], "2026-01-01T00:00:30Z");
}

}  // namespace
}  // namespace strata::server
