#include "history/series_store.h"

#include <gtest/gtest.h>

#include <cmath>

namespace strata::history {
namespace {

using std::chrono::hours;
using std::chrono::seconds;

const TimePoint kStart = FakeClock::kDefaultStart;

Reading Ready(std::string scope, std::string version, double value) {
  return Reading{std::move(scope), "ready", {{"version", std::move(version)}}, value};
}

std::vector<double> ValuesOf(const HistoryRange& range, std::string_view scope) {
  for (const auto& series : range.series) {
    if (series.scope == scope) return series.values;
  }
  return {};
}

TEST(SeriesStoreTest, SeriesAlignOnSampleTimesWithGapsAsNoReading) {
  SeriesStore store({seconds(10), hours(1)});
  store.Record(kStart, {Ready("services/a/chat", "v1", 1)});
  store.Record(kStart + seconds(10),
               {Ready("services/a/chat", "v1", 2), Ready("services/a/other", "v1", 5)});
  store.Record(kStart + seconds(20), {Ready("services/a/other", "v1", 6)});
  store.Record(kStart + seconds(30), {Ready("services/a/chat", "v1", 3)});

  HistoryRange range = store.Read("services/a", TimePoint{});
  ASSERT_EQ(range.times.size(), 4u);
  EXPECT_EQ(range.times[1], kStart + seconds(10));
  std::vector<double> chat = ValuesOf(range, "services/a/chat");
  ASSERT_EQ(chat.size(), 4u);
  EXPECT_EQ(chat[0], 1);
  EXPECT_EQ(chat[1], 2);
  EXPECT_TRUE(std::isnan(chat[2]));  // no reading at 20 s
  EXPECT_EQ(chat[3], 3);
  std::vector<double> other = ValuesOf(range, "services/a/other");
  EXPECT_TRUE(std::isnan(other[0]));  // before it existed
  EXPECT_EQ(other[2], 6);
  EXPECT_TRUE(std::isnan(other[3]));
}

TEST(SeriesStoreTest, ReadsOnlyTheScopeAskedForAndItsChildren) {
  SeriesStore store({seconds(10), hours(1)});
  store.Record(kStart, {Ready("services/a/chat", "v1", 1), Ready("services/a/chatbot", "v1", 2),
                        Ready("queues/q", "v1", 3)});
  HistoryRange chat = store.Read("services/a/chat", TimePoint{});
  ASSERT_EQ(chat.series.size(), 1u);  // not services/a/chatbot
  EXPECT_EQ(chat.series[0].labels, (Labels{{"version", "v1"}}));
  EXPECT_EQ(store.Read("services", TimePoint{}).series.size(), 2u);
  EXPECT_EQ(store.Read("", TimePoint{}).series.size(), 3u);
}

TEST(SeriesStoreTest, KeepsOneWindowAndDropsSeriesSilentForAWindow) {
  SeriesStore store({seconds(10), seconds(50)});  // 5 points
  ASSERT_EQ(store.capacity(), 5u);
  for (int i = 0; i < 8; ++i) {
    std::vector<Reading> readings = {Ready("cluster", "v", i)};
    if (i == 0) readings.push_back(Ready("jobs/a/gone", "v", 1));
    store.Record(kStart + seconds(10 * i), readings);
  }
  HistoryRange range = store.Read("", TimePoint{});
  ASSERT_EQ(range.times.size(), 5u);
  EXPECT_EQ(range.times.front(), kStart + seconds(30));
  ASSERT_EQ(range.series.size(), 1u);  // jobs/a/gone aged out
  EXPECT_EQ(range.series[0].values, (std::vector<double>{3, 4, 5, 6, 7}));
  EXPECT_EQ(store.SeriesCount(), 1u);
}

TEST(SeriesStoreTest, ReadsFromATime) {
  SeriesStore store({seconds(10), hours(1)});
  for (int i = 0; i < 4; ++i) store.Record(kStart + seconds(10 * i), {Ready("cluster", "v", i)});
  HistoryRange range = store.Read("cluster", kStart + seconds(15));
  EXPECT_EQ(range.times.size(), 2u);
  EXPECT_EQ(range.series[0].values, (std::vector<double>{2, 3}));
}

TEST(SeriesStoreTest, ATimeNotLaterReplacesTheLastSample) {
  SeriesStore store({seconds(10), hours(1)});
  store.Record(kStart + seconds(10), {Ready("cluster", "v", 1)});
  store.Record(kStart + seconds(5), {Ready("cluster", "v", 2)});
  HistoryRange range = store.Read("cluster", TimePoint{});
  ASSERT_EQ(range.times.size(), 1u);
  EXPECT_EQ(range.series[0].values, (std::vector<double>{2}));
}

TEST(SeriesStoreTest, SeriesBeyondTheLimitAreDroppedAndCounted) {
  SeriesStore store({seconds(10), hours(1), /*max_series=*/2});
  store.Record(kStart, {Ready("a", "v", 1), Ready("b", "v", 1), Ready("c", "v", 1)});
  EXPECT_EQ(store.SeriesCount(), 2u);
  EXPECT_EQ(store.DroppedReadings(), 1u);
}

TEST(SeriesStoreTest, EventsAreKeptOnceInTimeOrderAndBounded) {
  SeriesStoreOptions options{seconds(10), hours(1)};
  options.max_events_per_scope = 2;
  SeriesStore store(options);
  auto decision = [](int second, std::string to) {
    return Event{kStart + seconds(second), "services/a/chat", "scale", {{"to", std::move(to)}}};
  };
  store.AddEvent(decision(20, "2"));
  store.AddEvent(decision(10, "1"));
  store.AddEvent(decision(20, "2"));  // seen again: one decision
  HistoryRange range = store.Read("services/a/chat", TimePoint{});
  ASSERT_EQ(range.events.size(), 2u);
  EXPECT_EQ(range.events[0].fields.at("to"), "1");
  EXPECT_EQ(range.events[1].fields.at("to"), "2");
  store.AddEvent(decision(30, "3"));
  range = store.Read("services/a/chat", TimePoint{});
  ASSERT_EQ(range.events.size(), 2u);
  EXPECT_EQ(range.events[0].fields.at("to"), "2");
  EXPECT_TRUE(store.Read("services/a/chat", kStart + seconds(40)).events.empty());
}

TEST(SeriesStoreTest, MemoryGrowsWithSeriesTimesWindow) {
  SeriesStore store({seconds(15), hours(6)});
  const size_t empty = store.MemoryBytes();
  std::vector<Reading> readings;
  for (int i = 0; i < 100; ++i)
    readings.push_back(Ready("services/a/s" + std::to_string(i), "v1", i));
  store.Record(kStart, readings);
  const size_t per_series = (store.MemoryBytes() - empty) / 100;
  EXPECT_GE(per_series, 1440 * sizeof(float));
  EXPECT_LT(per_series, 1440 * sizeof(float) + 512);
}

}  // namespace
}  // namespace strata::history
