#include "cluster/event_recorder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/event.h"
#include "cluster/stored_object.h"

namespace strata::cluster {
namespace {

class EventRecorderTest : public ::testing::Test {
 protected:
  void Record(const std::string& message) {
    Status recorded =
        recorder_.Record({"Job", "team-a", "train", "uid"}, "Warning", "FailedScheduling", message);
    ASSERT_TRUE(recorded.ok()) << recorded.ToString();
  }
  std::vector<api::Event> Events() {
    Result<std::vector<Stored<api::Event>>> events = ListStored<api::Event>(*store_, "Event");
    EXPECT_TRUE(events.has_value());
    std::vector<api::Event> out;
    for (auto& event : *events) out.push_back(event.value);
    return out;
  }

  FakeClock clock_;
  std::unique_ptr<store::Store> store_ = store::NewMemoryStore({.clock = &clock_});
  EventRecorder recorder_{*store_, clock_, std::chrono::seconds(60)};
};

TEST_F(EventRecorderTest, TheSameEventAggregatesIntoOneObject) {
  Record("0/4 nodes are available");
  Record("0/4 nodes are available");  // within the interval: nothing written
  ASSERT_EQ(Events().size(), 1u);
  EXPECT_EQ(Events()[0].count, 1);
  EXPECT_EQ(Events()[0].metadata.namespace_name, "team-a");
  EXPECT_EQ(Events()[0].involved_object.name, "train");

  clock_.Advance(std::chrono::seconds(61));
  Record("0/4 nodes are available");
  ASSERT_EQ(Events().size(), 1u);
  EXPECT_EQ(Events()[0].count, 2);
  EXPECT_EQ(Events()[0].first_timestamp, FormatRfc3339(FakeClock::kDefaultStart));
  EXPECT_EQ(Events()[0].last_timestamp, FormatRfc3339(clock_.Now()));
}

TEST_F(EventRecorderTest, ARecorderThatDidNotWriteTheEventReadsItBeforeCountingARepeat) {
  Record("0/4 nodes are available");
  // A recorder of a restarted loop knows nothing of what was written: it reads the event.
  EventRecorder restarted{*store_, clock_, std::chrono::seconds(60)};
  ASSERT_TRUE(restarted
                  .Record({"Job", "team-a", "train", "uid"}, "Warning", "FailedScheduling",
                          "0/4 nodes are available")
                  .ok());
  ASSERT_EQ(Events().size(), 1u);
  EXPECT_EQ(Events()[0].count, 1);
  clock_.Advance(std::chrono::seconds(61));
  ASSERT_TRUE(restarted
                  .Record({"Job", "team-a", "train", "uid"}, "Warning", "FailedScheduling",
                          "0/4 nodes are available")
                  .ok());
  EXPECT_EQ(Events()[0].count, 2);
}

TEST_F(EventRecorderTest, ADifferentMessageIsADifferentEvent) {
  Record("0/4 nodes are available");
  Record("0/5 nodes are available");
  EXPECT_EQ(Events().size(), 2u);
}

}  // namespace
}  // namespace strata::cluster
