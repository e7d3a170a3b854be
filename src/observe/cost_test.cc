#include "observe/cost.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "metrics/family_parts_check.h"
#include "metrics/prometheus_text.h"

namespace strata::observe {
namespace {

using std::chrono::hours;
using ::testing::HasSubstr;

PriceTable Prices() {
  PriceTable prices;
  prices.gpu_hour = {{"H100-80GB", 2.0}};
  prices.default_gpu_hour = 1.0;
  prices.cpu_core_hour = 0.01;
  prices.memory_gib_hour = 0.001;
  return prices;
}

CostPod Pod(std::string name, std::string team, double gpus, TimePoint start,
            std::optional<TimePoint> end = std::nullopt) {
  CostPod pod;
  pod.name = std::move(name);
  pod.namespace_name = "default";
  if (!team.empty()) pod.labels["team"] = std::move(team);
  pod.gpu_model = "H100-80GB";
  pod.gpus = gpus;
  pod.cpu_cores = 10;
  pod.memory_gib = 100;
  pod.start = start;
  pod.end = end;
  return pod;
}

// ComputeCost over `pods` charged at Prices() (as the ledger charges them when it opens them).
CostReport Cost(std::vector<CostPod> pods, CostDimension dimension, TimePoint window_start,
                TimePoint now, const std::map<std::string, double>& tokens = {}) {
  for (CostPod& pod : pods) pod.prices = PricesFor(Prices(), pod.gpu_model);
  return ComputeCost("USD", pods, dimension, window_start, now, tokens);
}

TEST(ComputeCostTest, RequestTimesPriceTimesTimeHeldInsideTheWindow) {
  FakeClock clock;
  TimePoint t0 = clock.Now();
  std::vector<CostPod> pods = {Pod("a", "ml", 8, t0)};
  clock.Advance(hours(3));
  CostReport report = Cost(pods, CostDimension::kTeam, t0, clock.Now());
  ASSERT_EQ(report.lines.size(), 1u);
  const CostLine& ml = report.lines[0];
  EXPECT_EQ(ml.name, "ml");
  EXPECT_DOUBLE_EQ(ml.gpu_hours, 24);
  EXPECT_DOUBLE_EQ(ml.gpu_cost, 48);
  EXPECT_DOUBLE_EQ(ml.cpu_cost, 0.3);
  EXPECT_DOUBLE_EQ(ml.memory_cost, 0.3);
  EXPECT_DOUBLE_EQ(ml.total, 48.6);
  EXPECT_DOUBLE_EQ(ml.hourly_rate, 16.2);
  EXPECT_DOUBLE_EQ(report.total.total, 48.6);
}

TEST(ComputeCostTest, OnlyThePartInsideTheWindowCountsAndFinishedPodsStopAccruing) {
  FakeClock clock;
  TimePoint t0 = clock.Now();
  clock.Advance(hours(10));
  TimePoint now = clock.Now();
  std::vector<CostPod> pods = {
      Pod("old", "ml", 1, t0, t0 + hours(2)),  // ended before the window
      Pod("long", "ml", 1, t0),                // started before, still running
      Pod("done", "web", 1, t0 + hours(5), t0 + hours(7)),
  };
  CostReport report = Cost(pods, CostDimension::kTeam, now - hours(4), now);
  ASSERT_EQ(report.lines.size(), 2u);
  EXPECT_EQ(report.lines[0].name, "ml");
  EXPECT_DOUBLE_EQ(report.lines[0].gpu_hours, 4);
  EXPECT_EQ(report.lines[0].pods, 1);
  EXPECT_EQ(report.lines[1].name, "web");
  EXPECT_DOUBLE_EQ(report.lines[1].gpu_hours, 1);    // hours 6-7 of its 5-7
  EXPECT_DOUBLE_EQ(report.lines[1].hourly_rate, 0);  // finished: costs nothing now
}

TEST(ComputeCostTest, GroupsByEveryDimensionAndUnlabelledPodsAreUnallocated) {
  FakeClock clock;
  TimePoint t0 = clock.Now();
  CostPod job_pod = Pod("train-0", "ml", 1, t0);
  job_pod.job = "train";
  job_pod.queue = "research";
  job_pod.labels["project"] = "llama";
  CostPod loose = Pod("debug", "", 1, t0);
  clock.Advance(hours(1));
  auto names = [&](CostDimension dimension) {
    std::vector<std::string> out;
    for (const CostLine& line : Cost({job_pod, loose}, dimension, t0, clock.Now()).lines) {
      out.push_back(line.name);
    }
    std::sort(out.begin(), out.end());
    return out;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(names(CostDimension::kTeam), (V{"__unallocated__", "ml"}));
  EXPECT_EQ(names(CostDimension::kProject), (V{"__unallocated__", "llama"}));
  EXPECT_EQ(names(CostDimension::kQueue), (V{"__unallocated__", "research"}));
  EXPECT_EQ(names(CostDimension::kJob), (V{"__unallocated__", "default/train"}));
  EXPECT_EQ(names(CostDimension::kPod), (V{"default/debug", "default/train-0"}));
}

TEST(ComputeCostTest, ServicesGetCostPerMillionTokens) {
  FakeClock clock;
  TimePoint t0 = clock.Now();
  CostPod replica = Pod("llm-0", "", 1, t0);
  replica.service = "llm";
  replica.cpu_cores = 0;
  replica.memory_gib = 0;
  clock.Advance(hours(5));
  CostReport report =
      Cost({replica}, CostDimension::kService, t0, clock.Now(), {{"llm", 2'000'000}});
  ASSERT_EQ(report.lines.size(), 1u);
  EXPECT_DOUBLE_EQ(report.lines[0].total, 10);
  EXPECT_DOUBLE_EQ(*report.lines[0].tokens, 2'000'000);
  EXPECT_DOUBLE_EQ(*report.lines[0].cost_per_million_tokens, 5);
}

TEST(ComputeCostTest, AnUnpricedModelIsChargedTheDefaultAndNamed) {
  FakeClock clock;
  TimePoint t0 = clock.Now();
  CostPod pod = Pod("x", "ml", 2, t0);
  pod.gpu_model = "MI300X";
  pod.cpu_cores = 0;
  pod.memory_gib = 0;
  clock.Advance(hours(1));
  CostReport report = Cost({pod}, CostDimension::kTeam, t0, clock.Now());
  EXPECT_DOUBLE_EQ(report.total.gpu_cost, 2);
  EXPECT_EQ(report.unpriced_gpu_models, std::vector<std::string>{"MI300X"});
}

TEST(ComputeCostTest, EachAllocationIsChargedItsOwnPricesNotTheCurrentTable) {
  FakeClock clock;
  TimePoint t0 = clock.Now();
  CostPod before = Pod("a", "ml", 1, t0, t0 + hours(1));
  before.prices = {2.0, 0, 0, true};
  CostPod after = Pod("a", "ml", 1, t0 + hours(1), t0 + hours(2));
  after.prices = {3.0, 0, 0, true};
  CostReport report = ComputeCost("USD", {before, after}, CostDimension::kTeam, t0, t0 + hours(2));
  EXPECT_DOUBLE_EQ(report.total.gpu_cost, 5);
}

TEST(StepStartTest, StepsFallOnHoursAndMidnightsUtc) {
  const TimePoint at = *ParseRfc3339("2026-03-04T05:06:07Z");
  EXPECT_EQ(FormatRfc3339(StepStart(at, hours(1))), "2026-03-04T05:00:00Z");
  EXPECT_EQ(FormatRfc3339(StepStart(at, hours(24))), "2026-03-04T00:00:00Z");
  EXPECT_EQ(FormatRfc3339(StepStart(at, std::chrono::minutes(15))), "2026-03-04T05:00:00Z");
  EXPECT_EQ(StepStart(StepStart(at, hours(1)), hours(1)), StepStart(at, hours(1)));
}

TEST(ComputeCostSeriesTest, SpendPerStepSumsToTheWindowsTotalsAndTheLastStepIsPartial) {
  const TimePoint midnight = *ParseRfc3339("2026-03-04T00:00:00Z");
  // ml: 1 GPU from 00:30 to 02:15; search: 2 GPUs from 01:00 on, still running at 03:30.
  std::vector<CostPod> pods = {Pod("a", "ml", 1, midnight + std::chrono::minutes(30),
                                   midnight + hours(2) + std::chrono::minutes(15)),
                               Pod("b", "search", 2, midnight + hours(1))};
  for (CostPod& pod : pods) {
    pod.cpu_cores = 0;
    pod.memory_gib = 0;
    pod.prices = PricesFor(Prices(), pod.gpu_model);  // 2.0 per GPU-hour
  }
  const TimePoint now = midnight + hours(3) + std::chrono::minutes(30);
  CostSeries series = ComputeCostSeries(pods, CostDimension::kTeam, midnight, now, hours(1), {});
  ASSERT_EQ(series.starts.size(), 4u);
  EXPECT_EQ(FormatRfc3339(series.starts[3]), "2026-03-04T03:00:00Z");
  ASSERT_EQ(series.lines.size(), 2u);
  EXPECT_EQ(series.lines[0].name, "search");  // in the report's order: the larger total first
  EXPECT_THAT(series.lines[0].cost, ::testing::ElementsAre(0, 4, 4, 2));
  EXPECT_EQ(series.lines[1].name, "ml");
  EXPECT_THAT(series.lines[1].cost, ::testing::ElementsAre(1, 2, 0.5, 0));
  CostReport report = ComputeCost("USD", pods, CostDimension::kTeam, midnight, now);
  EXPECT_DOUBLE_EQ(report.lines[0].total, 10);
  EXPECT_DOUBLE_EQ(report.lines[1].total, 3.5);
  EXPECT_FALSE(series.lines[0].tokens.has_value());

  nlohmann::json json = CostSeriesToJson(series);
  EXPECT_EQ(json["step"], 3600);
  EXPECT_EQ(json["starts"][0], "2026-03-04T00:00:00Z");
  EXPECT_EQ(json["lines"][1]["cost"][2], 0.5);
}

TEST(ComputeCostSeriesTest, ServicesGetTokensAndCostPerMillionTokensPerStep) {
  const TimePoint midnight = *ParseRfc3339("2026-03-04T00:00:00Z");
  CostPod replica = Pod("llm-0", "", 1, midnight);
  replica.service = "llm";
  replica.cpu_cores = 0;
  replica.memory_gib = 0;
  replica.prices = PricesFor(Prices(), replica.gpu_model);
  std::vector<std::pair<TimePoint, TimePoint>> asked;
  auto tokens = [&](TimePoint from, TimePoint to) {
    asked.emplace_back(from, to);
    // A million tokens in the first hour, none in the second.
    return std::map<std::string, double>{{"llm", from == midnight ? 1e6 : 0.0}};
  };
  CostSeries series = ComputeCostSeries({replica}, CostDimension::kService, midnight,
                                        midnight + hours(2), hours(1), tokens);
  ASSERT_EQ(series.lines.size(), 1u);
  ASSERT_TRUE(series.lines[0].tokens.has_value());
  EXPECT_THAT(*series.lines[0].tokens, ::testing::ElementsAre(1e6, 0));
  EXPECT_EQ((*series.lines[0].cost_per_million_tokens)[0], 2.0);
  EXPECT_FALSE((*series.lines[0].cost_per_million_tokens)[1].has_value());
  ASSERT_EQ(asked.size(), 2u);
  EXPECT_EQ(asked[1], std::make_pair(midnight + hours(1), midnight + hours(2)));
  EXPECT_TRUE(CostSeriesToJson(series)["lines"][0]["costPerMillionTokens"][1].is_null());
}

TEST(ComputeCostSeriesTest, AServiceThatServedOnlyInALaterStepHasItsTokensCounted) {
  // Steps in which a service served nothing leave it out of their counts, as the ledger does:
  // here the first of three.
  const TimePoint midnight = *ParseRfc3339("2026-03-04T00:00:00Z");
  CostPod replica = Pod("llm-0", "", 1, midnight);
  replica.service = "llm";
  auto tokens = [&](TimePoint from, TimePoint /*to*/) {
    return from == midnight ? std::map<std::string, double>{}
                            : std::map<std::string, double>{{"llm", 5e5}};
  };
  CostSeries series = ComputeCostSeries({replica}, CostDimension::kService, midnight,
                                        midnight + hours(3), hours(1), tokens);
  ASSERT_EQ(series.lines.size(), 1u);
  ASSERT_TRUE(series.lines[0].tokens.has_value());
  EXPECT_THAT(*series.lines[0].tokens, ::testing::ElementsAre(0, 5e5, 5e5));
  EXPECT_FALSE((*series.lines[0].cost_per_million_tokens)[0].has_value());
  EXPECT_TRUE((*series.lines[0].cost_per_million_tokens)[2].has_value());
}

TEST(ParsePriceTableTest, ReadsEveryField) {
  Result<PriceTable> prices = ParsePriceTable(
      "currency: EUR\ngpuHour: {H100-80GB: 2.49, A100-80GB: 1.6}\ndefaultGpuHour: 1\n"
      "cpuCoreHour: 0.031\nmemoryGiBHour: 0.0042\n",
      "prices.yaml");
  ASSERT_TRUE(prices) << prices.error().ToString();
  EXPECT_EQ(prices->currency, "EUR");
  EXPECT_DOUBLE_EQ(prices->gpu_hour.at("H100-80GB"), 2.49);
  EXPECT_DOUBLE_EQ(prices->default_gpu_hour, 1);
  EXPECT_DOUBLE_EQ(prices->cpu_core_hour, 0.031);
  EXPECT_DOUBLE_EQ(prices->memory_gib_hour, 0.0042);
}

TEST(ParsePriceTableTest, BadInputNamesTheFileAndTheField) {
  auto error = [](std::string_view text) {
    Result<PriceTable> prices = ParsePriceTable(text, "prices.yaml");
    EXPECT_FALSE(prices);
    return prices ? std::string() : prices.error().message();
  };
  EXPECT_EQ(error("gpuHour: {H100-80GB: cheap}"),
            "prices.yaml: gpuHour.H100-80GB: must be a number >= 0");
  EXPECT_EQ(error("cpuCoreHour: -1"), "prices.yaml: cpuCoreHour: must be a number >= 0");
  EXPECT_EQ(error("gpuPrice: 1"), "prices.yaml: gpuPrice: unknown field");
  EXPECT_EQ(error("cpuCoreHuor: 1"),
            "prices.yaml: cpuCoreHuor: unknown field; did you mean \"cpuCoreHour\"?");
  EXPECT_EQ(error("currency: ''"),
            "prices.yaml: currency: must be a currency's name, such as \"USD\"");
  EXPECT_THAT(error("- 1\n- 2"), HasSubstr("expected one mapping of prices"));
  EXPECT_THAT(error("a: [\n"), HasSubstr("prices.yaml: line"));
}

TEST(ReadPriceTableFileTest, ReadsAFileAndNamesItInErrors) {
  std::string path = ::testing::TempDir() + "/prices-" + std::to_string(getpid()) + ".yaml";
  std::ofstream(path) << "gpuHour:\n  H100-80GB: 2.0\ncpuCoreHour: oops\n";
  Result<PriceTable> bad = ReadPriceTableFile(path);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message(), path + ": cpuCoreHour: must be a number >= 0");
  std::ofstream(path) << "{\"gpuHour\": {\"H100-80GB\": 2.0}, \"cpuCoreHour\": 0.05}";
  Result<PriceTable> good = ReadPriceTableFile(path);
  ASSERT_TRUE(good) << good.error().ToString();
  EXPECT_DOUBLE_EQ(good->gpu_hour.at("H100-80GB"), 2.0);
  EXPECT_DOUBLE_EQ(good->cpu_core_hour, 0.05);
  std::remove(path.c_str());
  Result<PriceTable> missing = ReadPriceTableFile(path);
  ASSERT_FALSE(missing);
  EXPECT_THAT(missing.error().message(), HasSubstr("price table " + path + ": cannot be read"));
}

TEST(ParseCostDimensionTest, KnowsTheSixDimensions) {
  for (std::string_view name : {"pod", "team", "project", "queue", "job", "service"}) {
    Result<CostDimension> dimension = ParseCostDimension(name);
    ASSERT_TRUE(dimension);
    EXPECT_EQ(CostDimensionName(*dimension), name);
  }
  EXPECT_FALSE(ParseCostDimension("tenant"));
}

// By team and by service, of one service replica of team ml that held a GPU for two hours and
// served a million tokens.
std::vector<CostReport> TeamAndServiceReportsOverTwoHours() {
  FakeClock clock;
  TimePoint t0 = clock.Now();
  CostPod replica = Pod("llm-0", "ml", 1, t0);
  replica.service = "llm";
  clock.Advance(hours(2));
  return {Cost({replica}, CostDimension::kTeam, t0, clock.Now()),
          Cost({replica}, CostDimension::kService, t0, clock.Now(), {{"llm", 1'000'000}})};
}

TEST(RenderCostMetricsTest, SeriesParseAndCarryTheGroup) {
  std::string out;
  RenderCostMetrics(TeamAndServiceReportsOverTwoHours(), out);
  Result<std::vector<metrics::Sample>> parsed = metrics::ParsePrometheusText(out);
  ASSERT_TRUE(parsed) << parsed.error().ToString();
  EXPECT_THAT(out, HasSubstr("strata_cost_hourly_rate{by=\"team\",name=\"ml\",currency=\"USD\"} "
                             "2.2\n"));
  EXPECT_THAT(out, HasSubstr("strata_cost_accrued{by=\"service\",name=\"llm\",currency=\"USD\","
                             "window=\"7200s\"} 4.4\n"));
  EXPECT_THAT(out, HasSubstr("strata_cost_per_million_tokens{service=\"llm\",currency=\"USD\"} "
                             "4.4\n"));
}

TEST(CostReportToJsonTest, CarriesTheWindowAndEveryLine) {
  FakeClock clock;
  TimePoint t0 = clock.Now();
  clock.Advance(hours(1));
  nlohmann::json json =
      CostReportToJson(Cost({Pod("a", "ml", 1, t0)}, CostDimension::kTeam, t0, clock.Now()));
  EXPECT_EQ(json["by"], "team");
  EXPECT_EQ(json["windowStart"], "2026-01-01T00:00:00Z");
  EXPECT_EQ(json["windowEnd"], "2026-01-01T01:00:00Z");
  EXPECT_EQ(json["lines"][0]["name"], "ml");
  EXPECT_DOUBLE_EQ(json["lines"][0]["gpuHours"].get<double>(), 1);
  EXPECT_DOUBLE_EQ(json["total"]["total"].get<double>(), 2.2);
  EXPECT_FALSE(json["lines"][0].contains("tokens"));
}

TEST(RenderCostMetricsTest, EachFamilyAloneIsItsPartOfTheWholeRendering) {
  const std::vector<CostReport> reports = TeamAndServiceReportsOverTwoHours();
  EXPECT_EQ(metrics::testing::FamilyPartsMismatch(
                CostMetricFamilies(),
                [&reports](const metrics::FamilySelection& wanted, std::string& out) {
                  RenderCostMetrics(reports, out, wanted);
                }),
            "");
}

}  // namespace
}  // namespace strata::observe
