#include "server/node_heartbeat.h"

#include <gtest/gtest.h>

#include <map>

#include "cluster/indexes.h"
#include "node/simulated_inventory.h"
#include "server/node_registration.h"

namespace strata::server {
namespace {

class NodeHeartbeatTest : public ::testing::Test {
 protected:
  NodeHeartbeatTest() : store_(store::NewMemoryStore({&clock_})) {
    auto spec = node::ParseSimulateSpec("2x8:H100-80GB");
    EXPECT_TRUE(spec);
    auto found = node::SimulatedInventory(*spec).Discover();
    EXPECT_TRUE(found);
    std::vector<api::Node> nodes =
        NodesFromInventory(*found, SimulatedNodeCapacity(), /*simulated=*/true, clock_.Now());
    EXPECT_TRUE(RegisterNodes(*store_, nodes).ok());
    for (const api::Node& node : nodes) names_.push_back(node.metadata.name);
  }

  // A heartbeat whose Lease renewals are counted here; renewing `gone_` fails as the API
  // does for a node that does not exist.
  NodeHeartbeat Heartbeat(Duration report_interval) {
    NodeHeartbeatOptions options;
    options.status_report_interval = report_interval;
    return NodeHeartbeat(
        *store_, cache_,
        [this](const std::string& name, TimePoint now) {
          if (name == "gone") return Status(NotFoundError("nodes \"gone\" not found"));
          renewals_[name].push_back(now);
          return Status::Ok();
        },
        options);
  }

  int64_t Version(const std::string& name) {
    return store_->Get({"Node", "", name})->resource_version;
  }
  nlohmann::json Ready(const std::string& name) {
    return store_->Get({"Node", "", name})->body["status"]["conditions"][0];
  }

  FakeClock clock_;
  std::unique_ptr<store::Store> store_;
  cluster::Cache cache_{*store_, cluster::NodeAgentCacheOptions()};
  std::vector<std::string> names_;
  std::map<std::string, std::vector<TimePoint>> renewals_;
};

TEST_F(NodeHeartbeatTest, RenewsLeasesEveryBeatAndReportsStatusOnlyWhenDue) {
  NodeHeartbeat heartbeat = Heartbeat(std::chrono::minutes(5));
  const std::string& first = names_[0];
  const int64_t registered = Version(first);
  for (int beat = 1; beat < 30; ++beat) {  // 4 min 50 s of beats every 10 s
    clock_.Advance(std::chrono::seconds(10));
    ASSERT_TRUE(heartbeat.Beat(names_, clock_.Now()).ok());
  }
  EXPECT_EQ(renewals_[first].size(), 29u);
  EXPECT_EQ(renewals_[names_[1]].size(), 29u);
  EXPECT_EQ(Version(first), registered) << "no status written within the report interval";

  clock_.Advance(std::chrono::seconds(10));  // 5 minutes after registration
  ASSERT_TRUE(heartbeat.Beat(names_, clock_.Now()).ok());
  EXPECT_NE(Version(first), registered);
  EXPECT_EQ(Ready(first)["lastHeartbeatTime"], FormatRfc3339(clock_.Now()));
  const int64_t reported = Version(first);
  clock_.Advance(std::chrono::seconds(10));
  ASSERT_TRUE(heartbeat.Beat(names_, clock_.Now()).ok());
  EXPECT_EQ(Version(first), reported);
}

TEST_F(NodeHeartbeatTest, ANodeMarkedLostIsReportedReadyAtTheNextBeat) {
  NodeHeartbeat heartbeat = Heartbeat(std::chrono::minutes(5));
  const std::string& first = names_[0];
  store::Object lost = *store_->Get({"Node", "", first});
  lost.body["status"]["conditions"][0]["status"] = "Unknown";
  lost.body["status"]["conditions"][0]["reason"] = "NodeStatusUnknown";
  ASSERT_TRUE(store_->Update(lost));
  clock_.Advance(std::chrono::seconds(10));
  ASSERT_TRUE(heartbeat.Beat(names_, clock_.Now()).ok());
  EXPECT_EQ(Ready(first)["status"], "True");
  EXPECT_EQ(Ready(first)["lastTransitionTime"], FormatRfc3339(clock_.Now()));
}

TEST_F(NodeHeartbeatTest, ZeroReportIntervalReportsEveryBeat) {
  NodeHeartbeat heartbeat = Heartbeat(Duration::zero());
  for (int beat = 1; beat <= 3; ++beat) {
    const int64_t before = Version(names_[0]);
    clock_.Advance(std::chrono::seconds(10));
    ASSERT_TRUE(heartbeat.Beat(names_, clock_.Now()).ok());
    EXPECT_NE(Version(names_[0]), before) << "beat " << beat;
  }
}

TEST_F(NodeHeartbeatTest, AFailedRenewalIsReturnedAfterEveryNodeIsBeaten) {
  NodeHeartbeat heartbeat = Heartbeat(std::chrono::minutes(5));
  std::vector<std::string> names = {"gone", names_[0], names_[1]};
  Status beat = heartbeat.Beat(names, clock_.Now());
  EXPECT_EQ(beat.code(), StatusCode::kNotFound);
  EXPECT_EQ(renewals_[names_[0]].size(), 1u);
  EXPECT_EQ(renewals_[names_[1]].size(), 1u);
}

}  // namespace
}  // namespace strata::server
