#include "gateway/routing_table.h"

#include <gtest/gtest.h>

namespace strata::gateway {
namespace {

ModelConfig Model(const std::string& name, std::vector<std::string> v1_endpoints,
                  std::vector<std::string> adapters = {}) {
  ModelConfig model;
  model.name = name;
  model.adapters = std::move(adapters);
  model.versions.push_back(VersionConfig{"v1", 1, std::move(v1_endpoints)});
  return model;
}

TEST(RoutingTableBuilderTest, KeepsReplicasAndCountersAcrossTables) {
  RoutingTableBuilder builder;
  auto first = builder.Build({Model("m", {"127.0.0.1:8001", "127.0.0.1:8002"})});
  ASSERT_TRUE(first.has_value()) << first.error().ToString();
  EXPECT_EQ(first->added.size(), 2u);
  const auto kept = first->table->versions[0][0].endpoints[0].runtime;
  const auto removed = first->table->versions[0][0].endpoints[1].runtime;
  kept->in_flight = 3;
  first->table->versions[0][0].counters->counts.At(0).arrivals = 5;

  auto second = builder.Build(
      {Model("m", {"127.0.0.1:8001", "127.0.0.1:8003"}), Model("n", {"127.0.0.1:8001"}, {"lora"})});
  ASSERT_TRUE(second.has_value()) << second.error().ToString();
  const RoutingTable& table = *second->table;
  EXPECT_GT(table.generation, first->table->generation);
  ASSERT_EQ(second->added.size(), 1u);
  EXPECT_EQ(second->added[0]->id, "127.0.0.1:8003");
  EXPECT_EQ(table.versions[0][0].endpoints[0].runtime, kept);
  EXPECT_EQ(table.versions[1][0].endpoints[0].runtime, kept);  // one runtime per replica
  EXPECT_EQ(table.endpoints.size(), 2u);
  EXPECT_EQ(kept->in_flight.load(), 3);
  EXPECT_TRUE(kept->routed.load());
  EXPECT_FALSE(removed->routed.load());
  EXPECT_EQ(table.versions[0][0].counters->counts.Sum(&VersionCounts::arrivals), 5);
  // A replica that left still counts its requests while something holds it.
  removed->in_flight = 2;
  EXPECT_EQ(builder.InFlight("127.0.0.1:8002"), 2);
  EXPECT_EQ(builder.InFlight("127.0.0.1:8001"), 3);
  EXPECT_EQ(builder.InFlight("127.0.0.1:9999"), 0);
  // A replica serves the adapters of every model naming it.
  EXPECT_EQ(table.versions[0][0].endpoints[0].served_adapters, std::vector<std::string>{"lora"});
  EXPECT_NE(table.versions[0][0].counters->serial, table.versions[1][0].counters->serial);
}

TEST(RoutingTableBuilderTest, AVersionMayHaveNoReplica) {
  RoutingTableBuilder builder;
  auto built = builder.Build({Model("m", {})});
  ASSERT_TRUE(built.has_value()) << built.error().ToString();
  EXPECT_TRUE(built->table->versions[0][0].endpoints.empty());
  EXPECT_TRUE(built->added.empty());
}

TEST(RoutingTableBuilderTest, InvalidModelsChangeNothing) {
  RoutingTableBuilder builder;
  auto first = builder.Build({Model("m", {"127.0.0.1:8001"})});
  ASSERT_TRUE(first.has_value());
  const auto runtime = first->table->endpoints[0];
  ModelConfig bad = Model("m", {"127.0.0.1:8002", "127.0.0.1:x"});
  auto failed = builder.Build({bad});
  ASSERT_FALSE(failed.has_value());
  EXPECT_EQ(failed.error().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(failed.error().message(),
            "models[0].versions[0].endpoints[1]: \"127.0.0.1:x\" has a bad port");
  EXPECT_TRUE(runtime->routed.load());
  auto next = builder.Build({Model("m", {"127.0.0.1:8001"})});
  ASSERT_TRUE(next.has_value());
  EXPECT_TRUE(next->added.empty());
  EXPECT_EQ(next->table->endpoints[0], runtime);
  EXPECT_EQ(next->table->generation, first->table->generation + 1);
}

}  // namespace
}  // namespace strata::gateway
