// The history recorder (history_recorder.h) and the endpoint that serves it (history_api.h).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/manifest.h"
#include "cluster/indexes.h"
#include "cluster/stored_object.h"
#include "gateway/gateway_stats.h"
#include "server/history_api.h"
#include "server/history_recorder.h"
#include "store/store.h"

namespace strata::server {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;
using std::chrono::seconds;

constexpr char kObjects[] = R"(apiVersion: strata.dev/v1alpha1
kind: Service
metadata: {name: chat, namespace: team-a}
spec:
  model: llama
  versions: [{name: v1}]
  engine: {command: [strata, engine-sim]}
  resources: {gpu: 1}
---
apiVersion: strata.dev/v1alpha1
kind: Queue
metadata: {name: research}
spec:
  weight: 2
  flavors:
    - name: h100
      resources: [{name: gpu, nominal: 8}]
)";

class HistoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<std::vector<api::Object>> objects = api::DecodeManifests({{"objects.yaml", kObjects}});
    ASSERT_TRUE(objects.has_value()) << objects.error().ToString();
    for (api::Object& object : *objects) {
      if (api::Service* service = object.As<api::Service>()) {
        service->status.Version("v1").desired_replicas = 2;
        service->status.Version("v1").ready_replicas = 1;
        service->status.Record({"2026-01-01T00:00:05Z", "v1", 1, 2, "load 7.5 over target 4"});
      }
      if (api::Queue* queue = object.As<api::Queue>()) {
        queue->status.flavors_usage = {
            {"h100",
             {{"gpu", Quantity::FromUnits(8), Quantity::FromUnits(12), Quantity::FromUnits(4)}}}};
        queue->status.pending_workloads = 3;
      }
      ASSERT_TRUE(store_->Create(cluster::EncodeForStore(object)).has_value());
    }
    ASSERT_TRUE(cache_.Sync().ok());
  }

  // One endpoint of version v1 of llama with its prefix counters.
  std::vector<gateway::VersionSignals> Signals() {
    gateway::VersionSignals v;
    v.model = "llama";
    v.version = "v1";
    v.answered_total = answered_;
    v.late_total = late_;
    v.tokens_total = answered_ * 100;
    gateway::EndpointSignals& e = v.endpoints.emplace_back();
    e.id = "127.0.0.1:9000";
    e.prefix_cache_queries = answered_ * 10;
    e.prefix_cache_hits = answered_ * 5;
    return {v};
  }

  // The newest value of `name` with label `label` in `range`, NaN if none.
  static double Last(const history::HistoryRange& range, std::string_view name,
                     std::pair<std::string, std::string> label = {}) {
    for (const auto& s : range.series) {
      if (s.name != name) continue;
      if (!label.first.empty() &&
          std::find(s.labels.begin(), s.labels.end(), label) == s.labels.end()) {
        continue;
      }
      return s.values.back();
    }
    return std::nan("");
  }

  std::unique_ptr<store::Store> store_ = store::NewMemoryStore(store::StoreOptions{});
  cluster::Cache cache_{*store_, cluster::ControlPlaneCacheOptions()};
  metrics::Registry registry_;
  gateway::GatewayStats stats_{registry_, "gateway"};
  FakeClock clock_;
  history::SeriesStore history_{{seconds(15), std::chrono::hours(6)}};
  int64_t answered_ = 0;
  int64_t late_ = 0;
};

TEST_F(HistoryTest, RecordsReplicasDecisionsLatencyGoodputAndQueues) {
  HistoryRecorder recorder(cache_, registry_, history_, clock_, [this] { return Signals(); });
  ASSERT_TRUE(recorder.RecordOnce().ok());
  // 15 s of traffic: 30 answered (3 late), TTFT 0.1 s for most, 2 s for some.
  answered_ = 30;
  late_ = 3;
  for (int i = 0; i < 27; ++i) stats_.ttft_seconds.With({"llama", "v1"}).Observe(0.1);
  for (int i = 0; i < 3; ++i) stats_.ttft_seconds.With({"llama", "v1"}).Observe(2);
  stats_.requests_total.With({"llama", "v1", "acme", "200"}).Increment(27);
  stats_.requests_total.With({"llama", "v1", "acme", "429"}).Increment(3);
  clock_.Advance(seconds(15));
  ASSERT_TRUE(recorder.RecordOnce().ok());

  history::HistoryRange service = history_.Read("services/team-a/chat", TimePoint{});
  ASSERT_EQ(service.times.size(), 2u);
  EXPECT_EQ(Last(service, "desired", {"version", "v1"}), 2);
  EXPECT_EQ(Last(service, "ready", {"version", "v1"}), 1);
  EXPECT_FLOAT_EQ(Last(service, "goodput_per_second", {"version", "v1"}), 27.0 / 15);
  EXPECT_FLOAT_EQ(Last(service, "requests_per_second", {"version", "v1"}), 2);
  EXPECT_FLOAT_EQ(Last(service, "throttled_per_second", {"tenant", "acme"}), 3.0 / 15);
  EXPECT_FLOAT_EQ(Last(service, "prefix_hit_ratio", {"replica", "127.0.0.1:9000"}), 0.5);
  const double p50 = Last(service, "ttft_seconds", {"quantile", "0.5"});
  EXPECT_GT(p50, 0.064);  // within the 0.064-0.128 bucket
  EXPECT_LE(p50, 0.128);
  EXPECT_GT(Last(service, "ttft_seconds", {"quantile", "0.99"}), 1.024);
  ASSERT_EQ(service.events.size(), 1u);
  EXPECT_EQ(service.events[0].fields.at("reason"), "load 7.5 over target 4");
  EXPECT_EQ(service.events[0].fields.at("to"), "2");

  history::HistoryRange queue = history_.Read("queues/research", TimePoint{});
  EXPECT_EQ(Last(queue, "used", {"flavor", "h100"}), 12);
  EXPECT_EQ(Last(queue, "nominal", {"flavor", "h100"}), 8);
  EXPECT_EQ(Last(queue, "borrowed", {"flavor", "h100"}), 4);
  EXPECT_EQ(Last(queue, "pending"), 3);
  EXPECT_FLOAT_EQ(Last(queue, "share"), 12.0 / 8 / 2);  // over its weight
}

TEST_F(HistoryTest, PercentilesCoverOnlyTheLastInterval) {
  HistoryRecorder recorder(cache_, registry_, history_, clock_, nullptr);
  for (int i = 0; i < 100; ++i) stats_.ttft_seconds.With({"llama", "v1"}).Observe(2);
  ASSERT_TRUE(recorder.RecordOnce().ok());
  for (int i = 0; i < 10; ++i) stats_.ttft_seconds.With({"llama", "v1"}).Observe(0.01);
  clock_.Advance(seconds(15));
  ASSERT_TRUE(recorder.RecordOnce().ok());
  history::HistoryRange service = history_.Read("services/team-a/chat", TimePoint{});
  EXPECT_LT(Last(service, "ttft_seconds", {"quantile", "0.99"}), 0.017);
}

TEST_F(HistoryTest, EachCheckpointOfAJobIsAnEventOnce) {
  Result<std::vector<api::Object>> decoded = api::DecodeManifests({{"job.yaml", R"(
apiVersion: strata.dev/v1alpha1
kind: Job
metadata: {name: train, namespace: team-a}
spec:
  resources: {gpu: 1}
  template: {command: [python, train.py]}
)"}});
  ASSERT_TRUE(decoded.has_value()) << decoded.error().ToString();
  api::Object job = decoded->front();
  job.As<api::Job>()->status.last_checkpoint_time = "2026-01-01T00:00:30Z";
  Result<store::Object> created = store_->Create(cluster::EncodeForStore(job));
  ASSERT_TRUE(created.has_value()) << created.error().ToString();
  HistoryRecorder recorder(cache_, registry_, history_, clock_, nullptr);
  ASSERT_TRUE(recorder.RecordOnce().ok());
  clock_.Advance(seconds(15));
  ASSERT_TRUE(recorder.RecordOnce().ok());
  history::HistoryRange range = history_.Read("jobs/team-a/train", TimePoint{});
  ASSERT_EQ(range.events.size(), 1u);
  EXPECT_EQ(range.events[0].kind, "checkpoint");
  EXPECT_EQ(range.events[0].time, *ParseRfc3339("2026-01-01T00:00:30Z"));
}

TEST(HistogramQuantileTest, InterpolatesWithinTheBucketAndAnswersNaNWhenEmpty) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_DOUBLE_EQ(HistogramQuantile({{1, 50}, {2, 100}, {inf, 100}}, 0.75), 1.5);
  EXPECT_DOUBLE_EQ(HistogramQuantile({{1, 0}, {2, 0}, {inf, 10}}, 0.5), 2);
  EXPECT_TRUE(std::isnan(HistogramQuantile({{1, 0}, {inf, 0}}, 0.5)));
}

class HistoryApiTest : public ::testing::Test {
 protected:
  HistoryApiTest() {
    store_->Record(clock_.Now(), {{"services/team-a/chat", "ready", {{"version", "v1"}}, 1},
                                  {"cluster", "pending_jobs", {}, 4}});
  }
  ApiReply Get(const std::string& target, const Caller& caller) {
    net::HttpRequest request;
    request.target = target;
    std::optional<ApiReply> reply = api_.Handle(request, caller);
    EXPECT_TRUE(reply.has_value()) << target;
    return reply ? std::move(*reply) : ApiReply{};
  }

  FakeClock clock_;
  std::shared_ptr<history::SeriesStore> store_ = std::make_shared<history::SeriesStore>();
  HistoryApi api_{store_, &clock_};
  Caller admin_{Caller::Kind::kUser, "admin", {}};
  Caller team_a_{Caller::Kind::kUser, "alice", {"team-a"}};
};

TEST_F(HistoryApiTest, ServesAServiceScopeWithItsSeriesAndTimes) {
  ApiReply reply =
      Get("/apis/strata.dev/v1alpha1/history/namespaces/team-a/services/chat?window=1h", team_a_);
  ASSERT_EQ(reply.response.status, 200) << reply.response.body;
  Json body = Json::parse(reply.response.body);
  EXPECT_EQ(body["kind"], "History");
  EXPECT_EQ(body["scope"], "services/team-a/chat");
  EXPECT_EQ(body["stepSeconds"], 15);
  ASSERT_EQ(body["times"].size(), 1u);
  EXPECT_EQ(body["times"][0], 1767225600);
  ASSERT_EQ(body["series"].size(), 1u);
  EXPECT_EQ(body["series"][0]["name"], "ready");
  EXPECT_EQ(body["series"][0]["labels"]["version"], "v1");
  EXPECT_EQ(body["series"][0]["values"], Json::array({1}));
}

TEST_F(HistoryApiTest, UsersReadTheirNamespacesAndQueuesOnly) {
  EXPECT_EQ(Get("/apis/strata.dev/v1alpha1/history/cluster", admin_).response.status, 200);
  ApiReply cluster = Get("/apis/strata.dev/v1alpha1/history/cluster", team_a_);
  EXPECT_EQ(cluster.response.status, 403);
  EXPECT_THAT(cluster.response.body, HasSubstr("namespaces team-a"));
  EXPECT_EQ(
      Get("/apis/strata.dev/v1alpha1/history/namespaces/team-b/jobs/x", team_a_).response.status,
      403);
  EXPECT_EQ(Get("/apis/strata.dev/v1alpha1/history/queues", team_a_).response.status, 200);
}

TEST_F(HistoryApiTest, BadPathsAndWindowsAreRefusedSayingWhy) {
  ApiReply unknown = Get("/apis/strata.dev/v1alpha1/history/nodes", admin_);
  EXPECT_EQ(unknown.response.status, 404);
  EXPECT_THAT(unknown.response.body, HasSubstr("expected cluster"));
  ApiReply window = Get("/apis/strata.dev/v1alpha1/history/cluster?window=soon", admin_);
  EXPECT_EQ(window.response.status, 400);
  EXPECT_THAT(window.response.body, HasSubstr("window \\\"soon\\\""));
  net::HttpRequest other;
  other.target = "/apis/strata.dev/v1alpha1/historyx";
  EXPECT_FALSE(api_.Handle(other, admin_).has_value());
}

}  // namespace
}  // namespace strata::server
