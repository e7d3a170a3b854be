#include "controller/event_recorder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/event.h"
#include "controller/stored_objects.h"

namespace strata::controller {
namespace {

class EventRecorderTest : public ::testing::Test {
 protected:
  void Record(const std::string& message) {
    Result<std::optional<store::Write>> write =
        recorder_.Record({"Job", "team-a", "train", "uid"}, "Warning", "FailedScheduling", message);
    ASSERT_TRUE(write.has_value()) << write.error().ToString();
    if (*write) {
      ASSERT_TRUE(store_->Apply({**write}).has_value());
    }
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

TEST_F(EventRecorderTest, ADifferentMessageIsADifferentEvent) {
  Record("0/4 nodes are available");
  Record("0/5 nodes are available");
  EXPECT_EQ(Events().size(), 2u);
}

}  // namespace
}  // namespace strata::controller
