#include "metrics/metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <thread>

#include "metrics/prometheus_text.h"
#include "metrics/stats.h"

namespace strata::metrics {
namespace {

using ::testing::HasSubstr;

TEST(RegistryTest, RendersCounterAndGaugeWithHelpAndType) {
  Registry registry;
  registry.AddCounter("strata_test_requests_total", "Requests seen.", {"code"})
      .With({"200"})
      .Increment(3);
  registry.AddGauge("strata_test_queue_depth", "Queued items.").With().Set(2.5);
  EXPECT_EQ(registry.RenderText(),
            "# HELP strata_test_queue_depth Queued items.\n"
            "# TYPE strata_test_queue_depth gauge\n"
            "strata_test_queue_depth 2.5\n"
            "# HELP strata_test_requests_total Requests seen.\n"
            "# TYPE strata_test_requests_total counter\n"
            "strata_test_requests_total{code=\"200\"} 3\n");
}

TEST(RegistryTest, HistogramHasCumulativeBucketsInfSumAndCount) {
  Registry registry;
  Histogram& latency =
      registry.AddHistogram("strata_test_latency_seconds", "Latency.", {"model"}, {0.1, 1})
          .With({"m"});
  latency.Observe(0.05);
  latency.Observe(0.1);  // on the bound: counts in le="0.1"
  latency.Observe(0.5);
  latency.Observe(7);
  EXPECT_EQ(registry.RenderText(),
            "# HELP strata_test_latency_seconds Latency.\n"
            "# TYPE strata_test_latency_seconds histogram\n"
            "strata_test_latency_seconds_bucket{model=\"m\",le=\"0.1\"} 2\n"
            "strata_test_latency_seconds_bucket{model=\"m\",le=\"1\"} 3\n"
            "strata_test_latency_seconds_bucket{model=\"m\",le=\"+Inf\"} 4\n"
            "strata_test_latency_seconds_sum{model=\"m\"} 7.65\n"
            "strata_test_latency_seconds_count{model=\"m\"} 4\n");
}

TEST(RegistryTest, ChildrenKeptInPartsRenderTheirSums) {
  Registry registry;
  CounterFamily& requests = registry.AddCounter("requests_total", "R.", {"code"});
  requests.With({"200"}).Increment(1);  // part 0
  requests.WithPart({"200"}, 2).Increment(4);
  requests.WithPart({"500"}, 1).Increment(2);  // parts 0 and 1 made, part 0 at zero
  HistogramFamily& latency = registry.AddHistogram("latency_seconds", "L.", {}, {0.1, 1});
  latency.WithPart({}, 0).Observe(0.05);
  latency.WithPart({}, 1).Observe(0.5);
  latency.WithPart({}, 1).Observe(2);
  EXPECT_EQ(&requests.WithPart({"200"}, 2), &requests.WithPart({"200"}, 2));
  EXPECT_NE(&requests.WithPart({"200"}, 0), &requests.WithPart({"200"}, 1));
  EXPECT_EQ(registry.RenderText(),
            "# HELP latency_seconds L.\n"
            "# TYPE latency_seconds histogram\n"
            "latency_seconds_bucket{le=\"0.1\"} 1\n"
            "latency_seconds_bucket{le=\"1\"} 2\n"
            "latency_seconds_bucket{le=\"+Inf\"} 3\n"
            "latency_seconds_sum 2.55\n"
            "latency_seconds_count 3\n"
            "# HELP requests_total R.\n"
            "# TYPE requests_total counter\n"
            "requests_total{code=\"200\"} 5\n"
            "requests_total{code=\"500\"} 2\n");
}

TEST(RegistryTest, PartsUpdatedFromThreadsOfTheirOwnAddUp) {
  Registry registry;
  CounterFamily& family = registry.AddCounter("c_total", "C.");
  std::vector<std::thread> threads;
  for (size_t part = 0; part < 4; ++part) {
    threads.emplace_back([&family, part] {
      Counter& counter = family.WithPart({}, part);
      for (int i = 0; i < 10000; ++i) counter.Increment();
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_THAT(registry.RenderText(), HasSubstr("c_total 40000\n"));
}

TEST(RegistryTest, EscapesLabelValuesAndHelp) {
  Registry registry;
  registry.AddGauge("g", "line one\nback\\slash", {"path"}).With({"a\"b\\c\nd"}).Set(1);
  std::string text = registry.RenderText();
  EXPECT_THAT(text, HasSubstr("# HELP g line one\\nback\\\\slash\n"));
  EXPECT_THAT(text, HasSubstr("g{path=\"a\\\"b\\\\c\\nd\"} 1\n"));
}

TEST(RegistryTest, SameNameAndShapeReturnsTheSameFamily) {
  Registry registry;
  CounterFamily& first = registry.AddCounter("c_total", "C.", {"a"});
  CounterFamily& second = registry.AddCounter("c_total", "C.", {"a"});
  EXPECT_EQ(&first, &second);
}

TEST(RegistryTest, RemovedChildIsNoLongerExported) {
  Registry registry;
  GaugeFamily& family = registry.AddGauge("endpoint_up", "Up.", {"endpoint"});
  family.With({"a"}).Set(1);
  family.With({"b"}).Set(1);
  family.Remove({"a"});
  std::string text = registry.RenderText();
  EXPECT_THAT(text, Not(HasSubstr("endpoint=\"a\"")));
  EXPECT_THAT(text, HasSubstr("endpoint=\"b\""));
}

TEST(RegistryTest, ConcurrentIncrementsAreAllCounted) {
  Registry registry;
  Counter& counter = registry.AddCounter("hits_total", "Hits.").With();
  Histogram& histogram = registry.AddHistogram("h", "H.", {}, {1}).With();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) {
        counter.Increment();
        histogram.Observe(0.5);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(counter.Value(), 40000);
  EXPECT_EQ(histogram.Count(), 40000u);
  EXPECT_EQ(histogram.CumulativeCounts().front(), 40000u);
}

TEST(RegistryTest, RenderedTextParsesBackToTheSameValues) {
  Registry registry;
  registry.AddCounter("rt_total", "R.", {"model", "code"})
      .With({"llama \"8b\"", "500"})
      .Increment(2);
  registry.AddGauge("rt_ratio", "R.").With().Set(0.125);
  registry.AddHistogram("rt_seconds", "R.", {}, {0.5}).With().Observe(0.25);
  Result<std::vector<Sample>> samples = ParsePrometheusText(registry.RenderText());
  ASSERT_TRUE(samples.has_value()) << samples.error().ToString();
  ASSERT_EQ(samples->size(), 6u);
  EXPECT_EQ((*samples)[0].name, "rt_ratio");
  EXPECT_EQ((*samples)[0].value, 0.125);
  EXPECT_EQ((*samples)[1].name, "rt_seconds_bucket");
  EXPECT_EQ(*(*samples)[1].Label("le"), "0.5");
  EXPECT_EQ(*(*samples)[2].Label("le"), "+Inf");
  EXPECT_EQ((*samples)[3].name, "rt_seconds_sum");
  EXPECT_EQ((*samples)[3].value, 0.25);
  EXPECT_EQ((*samples)[5].name, "rt_total");
  EXPECT_EQ(*(*samples)[5].Label("model"), "llama \"8b\"");
  EXPECT_EQ((*samples)[5].value, 2);
}

#define STRATA_TEST_STATS(COUNTER, GAUGE, HISTOGRAM)             \
  COUNTER(requests_total, "Requests received, by code.", "code") \
  GAUGE(in_flight_requests, "Requests being served.")            \
  HISTOGRAM(ttft_seconds, "Time to first token.", ExponentialBuckets(0.01, 10, 3), "model")
STRATA_DECLARE_STATS(TestStats, STRATA_TEST_STATS);

TEST(StatsTest, DeclaredOnceRegistersPrefixedNames) {
  Registry registry;
  TestStats stats(registry, "widget");
  stats.requests_total.With({"200"}).Increment();
  stats.in_flight_requests.With().Set(4);
  stats.ttft_seconds.With({"m"}).Observe(0.05);
  std::string text = registry.RenderText();
  EXPECT_THAT(text, HasSubstr("# TYPE strata_widget_requests_total counter\n"));
  EXPECT_THAT(text, HasSubstr("strata_widget_requests_total{code=\"200\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("strata_widget_in_flight_requests 4\n"));
  EXPECT_THAT(text, HasSubstr("strata_widget_ttft_seconds_bucket{model=\"m\",le=\"0.1\"} 1\n"));
  EXPECT_EQ(stats.component, "widget");
}

TEST(ExponentialBucketsTest, GrowsByTheFactor) {
  EXPECT_EQ(ExponentialBuckets(0.5, 2, 4), (std::vector<double>{0.5, 1, 2, 4}));
}

}  // namespace
}  // namespace strata::metrics

namespace strata::metrics {
namespace {

TEST(RegistryCollectorTest, CollectorsAppendAfterTheFamiliesAtEveryRender) {
  Registry registry;
  registry.AddGauge("strata_test_a", "A.").With().Set(1);
  int calls = 0;
  registry.AddCollector({"strata_test_collected"},
                        [&calls](const FamilySelection&, std::string& out) {
                          ++calls;
                          out += "# HELP strata_test_collected Collected.\n";
                          out += "# TYPE strata_test_collected gauge\n";
                          out += "strata_test_collected " + std::to_string(calls) + "\n";
                        });
  std::string first = registry.RenderText();
  EXPECT_EQ(first,
            "# HELP strata_test_a A.\n# TYPE strata_test_a gauge\nstrata_test_a 1\n"
            "# HELP strata_test_collected Collected.\n# TYPE strata_test_collected gauge\n"
            "strata_test_collected 1\n");
  EXPECT_NE(registry.RenderText().find("strata_test_collected 2\n"), std::string::npos);
}

// Appends families "strata_test_<name>" with one sample each, whatever is wanted, and counts
// its runs.
Collector AppendEvery(std::vector<std::string> names, int* runs) {
  return [names = std::move(names), runs](const FamilySelection&, std::string& out) {
    ++*runs;
    for (const std::string& name : names) {
      out += "# HELP " + name + " Help.\n# TYPE " + name + " gauge\n" + name + "{a=\"#\"} 1\n";
    }
  };
}

FamilySelection Only(std::set<std::string, std::less<>> names) {
  return FamilySelection(std::move(names));
}

TEST(RegistrySelectionTest, RendersOnlyTheRegisteredFamiliesAsked) {
  Registry registry;
  registry.AddGauge("strata_test_a", "A.").With().Set(1);
  registry.AddCounter("strata_test_b_total", "B.").With().Increment(2);
  registry.AddGauge("strata_test_c", "C.").With().Set(3);
  EXPECT_EQ(registry.RenderText(Only({"strata_test_c", "strata_test_a", "no_such_family"})),
            "# HELP strata_test_a A.\n# TYPE strata_test_a gauge\nstrata_test_a 1\n"
            "# HELP strata_test_c C.\n# TYPE strata_test_c gauge\nstrata_test_c 3\n");
  EXPECT_EQ(registry.RenderText(Only({})), "");
}

TEST(RegistrySelectionTest, ACollectorRunsOnlyWhenOneOfItsFamiliesIsAsked) {
  Registry registry;
  registry.AddGauge("strata_test_a", "A.").With().Set(1);
  int gpu_runs = 0;
  int cost_runs = 0;
  registry.AddCollector({"strata_test_gpu"}, AppendEvery({"strata_test_gpu"}, &gpu_runs));
  registry.AddCollector({"strata_test_cost"}, AppendEvery({"strata_test_cost"}, &cost_runs));

  EXPECT_EQ(registry.RenderText(Only({"strata_test_a"})),
            "# HELP strata_test_a A.\n# TYPE strata_test_a gauge\nstrata_test_a 1\n");
  EXPECT_EQ(gpu_runs, 0);
  EXPECT_EQ(cost_runs, 0);

  EXPECT_EQ(registry.RenderText(Only({"strata_test_cost"})),
            "# HELP strata_test_cost Help.\n# TYPE strata_test_cost gauge\n"
            "strata_test_cost{a=\"#\"} 1\n");
  EXPECT_EQ(gpu_runs, 0);
  EXPECT_EQ(cost_runs, 1);

  registry.RenderText();
  EXPECT_EQ(gpu_runs, 1);
  EXPECT_EQ(cost_runs, 2);
}

TEST(RegistrySelectionTest, FamiliesACollectorAppendsButWasNotAskedForAreDropped) {
  Registry registry;
  int runs = 0;
  registry.AddCollector({"strata_test_x", "strata_test_y", "strata_test_z"},
                        AppendEvery({"strata_test_x", "strata_test_y", "strata_test_z"}, &runs));
  EXPECT_EQ(registry.RenderText(Only({"strata_test_x", "strata_test_z"})),
            "# HELP strata_test_x Help.\n# TYPE strata_test_x gauge\n"
            "strata_test_x{a=\"#\"} 1\n"
            "# HELP strata_test_z Help.\n# TYPE strata_test_z gauge\n"
            "strata_test_z{a=\"#\"} 1\n");
  EXPECT_EQ(registry.RenderText(Only({"strata_test_y"})),
            "# HELP strata_test_y Help.\n# TYPE strata_test_y gauge\n"
            "strata_test_y{a=\"#\"} 1\n");
}

TEST(RegistrySelectionTest, EverythingSelectedIsTheWholePage) {
  Registry registry;
  registry.AddGauge("strata_test_a", "A.").With().Set(1);
  int runs = 0;
  registry.AddCollector({"strata_test_x", "strata_test_y"},
                        AppendEvery({"strata_test_x", "strata_test_y"}, &runs));
  const std::string page = registry.RenderText();
  EXPECT_EQ(registry.RenderText(FamilySelection()), page);
  EXPECT_EQ(registry.RenderText(Only({"strata_test_a", "strata_test_x", "strata_test_y"})), page);
}

TEST(RegistrySelectionDeathTest, ACollectorAppendingAFamilyItDidNotDeclareCrashes) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  Registry registry;
  int runs = 0;
  registry.AddCollector({"strata_test_x"}, AppendEvery({"strata_test_x", "strata_test_y"}, &runs));
  EXPECT_DEATH(registry.RenderText(), "strata_test_y, which it did not declare");
  EXPECT_DEATH(registry.RenderText(Only({"strata_test_x"})), "strata_test_y");
}

TEST(StatsTest, FamilyNamesListWhatTheStructRegisters) {
  EXPECT_THAT(TestStats::FamilyNames("unit"),
              ::testing::ElementsAre("strata_unit_requests_total", "strata_unit_in_flight_requests",
                                     "strata_unit_ttft_seconds"));
  // So another registry's rendering of them passes a collector's check.
  Registry registry;
  TestStats(registry, "unit").in_flight_requests.With().Set(1);
  Registry outer;
  outer.AddCollector(
      TestStats::FamilyNames("unit"),
      [&registry](const FamilySelection&, std::string& out) { out += registry.RenderText(); });
  EXPECT_EQ(outer.RenderText(), registry.RenderText());
  EXPECT_EQ(outer.RenderText(Only({"strata_unit_in_flight_requests"})),
            registry.RenderText(Only({"strata_unit_in_flight_requests"})));
}

}  // namespace
}  // namespace strata::metrics
