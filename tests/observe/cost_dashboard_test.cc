// The cost endpoint, the dashboard's files and `strata cost`, over real HTTP: an API listener
// on a loopback port chosen by the kernel, in front of a store holding a simulated cluster, and
// the strata binary run as a child process against it.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "net/http_client.h"
#include "observe/cluster_cost.h"
#include "observe/test_cluster.h"
#include "server/api_listener.h"
#include "server/cost_api.h"
#include "server/dashboard_files.h"
#include "server/rest_api.h"

namespace strata::server {
namespace {

using ::testing::HasSubstr;

class CostDashboardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = observe::testing::SimulatedClusterStore(2);
    // The ledger as strata up keeps it: synced from the store's pods.
    std::string pattern = (std::filesystem::temp_directory_path() / "cost-api-XXXXXX").string();
    dir_ = mkdtemp(pattern.data());
    const TimePoint now = RealClock::Instance().Now();
    Result<std::unique_ptr<observe::CostLedger>> ledger = observe::CostLedger::Open(
        dir_ + "/" + observe::kCostLedgerFileName, observe::DefaultPriceTable(), now);
    ASSERT_TRUE(ledger) << ledger.error().ToString();
    observe::ClusterObjectsCache cluster(*store_);
    Result<std::shared_ptr<const observe::ClusterObjects>> objects = cluster.Get();
    ASSERT_TRUE(objects) << objects.error().ToString();
    ASSERT_TRUE((*ledger)->Sync(observe::CostPodsOf(**objects), now).ok());
    CostApiOptions cost_options;
    cost_options.service_tokens = [](TimePoint, TimePoint) {
      return std::map<std::string, double>{{"llm", 2e6}};
    };
    cost_ = std::make_unique<CostApi>(std::move(*ledger), cost_options);
    RestApiOptions rest_options;
    rest_options.tokens.push_back({"admin", "admin", {}});
    rest_ = std::make_unique<RestApi>(*store_, registry_, rest_options);
    listener_ = std::make_unique<ApiListener>(ApiListenerOptions{}, [this](const auto& request) {
      if (std::optional<ApiReply> reply = dashboard_.Handle(request)) return std::move(*reply);
      if (std::optional<ApiReply> reply = cost_->Handle(request)) return std::move(*reply);
      return rest_->Handle(request);
    });
    ASSERT_TRUE(listener_->Start().ok());
  }

  net::HttpResponse Get(const std::string& target) {
    net::HttpRequest request;
    request.target = target;
    request.headers.push_back({"Authorization", "Bearer admin"});
    Result<net::HttpResponse> response = client_.Send("127.0.0.1", listener_->port(), request);
    EXPECT_TRUE(response) << response.error().ToString();
    return response ? *response : net::HttpResponse{};
  }

  std::string Server() const { return "http://127.0.0.1:" + std::to_string(listener_->port()); }

  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  std::string dir_;
  std::unique_ptr<store::Store> store_;
  metrics::Registry registry_;
  DashboardFiles dashboard_;
  std::unique_ptr<CostApi> cost_;
  std::unique_ptr<RestApi> rest_;
  std::unique_ptr<ApiListener> listener_;
  net::HttpClient client_;
};

TEST_F(CostDashboardTest, CostByTeamAndByServiceWithTokens) {
  net::HttpResponse team = Get(std::string(CostApi::kPath) + "?by=team&window=24h");
  ASSERT_EQ(team.status, 200) << team.body;
  nlohmann::json report = nlohmann::json::parse(team.body);
  EXPECT_EQ(report["by"], "team");
  EXPECT_EQ(report["currency"], "USD");
  std::vector<std::string> names;
  for (const auto& line : report["lines"]) names.push_back(line["name"]);
  EXPECT_THAT(names, ::testing::UnorderedElementsAre("ml", "serving"));
  // 4 H100s for the training pod at 2.50 + 8 cores + 64 GiB: the rate of what runs now.
  for (const auto& line : report["lines"]) {
    if (line["name"] == "ml") {
      EXPECT_DOUBLE_EQ(line["hourlyRate"].get<double>(), 4 * 2.5 + 8 * 0.03 + 64 * 0.004);
    }
  }

  net::HttpResponse service = Get(std::string(CostApi::kPath) + "?by=service");
  ASSERT_EQ(service.status, 200) << service.body;
  nlohmann::json by_service = nlohmann::json::parse(service.body);
  bool found = false;
  for (const auto& line : by_service["lines"]) {
    if (line["name"] != "llm") continue;
    found = true;
    EXPECT_EQ(line["tokens"], 2e6);
    EXPECT_TRUE(line.contains("costPerMillionTokens"));
  }
  EXPECT_TRUE(found) << service.body;
}

TEST_F(CostDashboardTest, AStepAddsTheSpendPerStepOnRealTimeBoundaries) {
  net::HttpResponse reply = Get(std::string(CostApi::kPath) + "?by=team&window=3h&step=1h");
  ASSERT_EQ(reply.status, 200) << reply.body;
  nlohmann::json report = nlohmann::json::parse(reply.body);
  const nlohmann::json& series = report["series"];
  EXPECT_EQ(series["step"], 3600);
  // The window starts on the hour at or before now - 3h: 4 steps, the last one partial.
  ASSERT_EQ(series["starts"].size(), 4u);
  EXPECT_EQ(report["windowStart"], series["starts"][0]);
  EXPECT_THAT(series["starts"][0].get<std::string>(), ::testing::EndsWith(":00:00Z"));
  std::map<std::string, double> summed;
  for (const auto& line : series["lines"]) {
    for (const auto& cost : line["cost"]) summed[line["name"]] += cost.get<double>();
  }
  for (const auto& line : report["lines"]) {
    EXPECT_NEAR(summed[line["name"]], line["total"].get<double>(), 1e-9) << line["name"];
  }
  // Per service, each step has its tokens and cost per million tokens.
  nlohmann::json services = nlohmann::json::parse(
      Get(std::string(CostApi::kPath) + "?by=service&window=2h&step=1h").body);
  bool found = false;
  for (const auto& line : services["series"]["lines"]) {
    if (line["name"] != "llm") continue;
    found = true;
    EXPECT_EQ(line["tokens"].size(), services["series"]["starts"].size());
    EXPECT_TRUE(line.contains("costPerMillionTokens"));
  }
  EXPECT_TRUE(found) << services.dump();
}

TEST_F(CostDashboardTest, BadParametersAre400NamingTheParameter) {
  net::HttpResponse window = Get(std::string(CostApi::kPath) + "?window=yesterday");
  EXPECT_EQ(window.status, 400);
  EXPECT_THAT(window.body, HasSubstr("window \\\"yesterday\\\""));
  net::HttpResponse by = Get(std::string(CostApi::kPath) + "?by=colour");
  EXPECT_EQ(by.status, 400);
  EXPECT_THAT(by.body, HasSubstr("cost by \\\"colour\\\""));
  net::HttpResponse step = Get(std::string(CostApi::kPath) + "?step=often");
  EXPECT_EQ(step.status, 400);
  EXPECT_THAT(step.body, HasSubstr("step \\\"often\\\""));
  net::HttpResponse fine = Get(std::string(CostApi::kPath) + "?window=366d&step=1h");
  EXPECT_EQ(fine.status, 400);
  EXPECT_THAT(fine.body, HasSubstr("at most 2000: take a longer step"));
}

TEST_F(CostDashboardTest, TheDashboardIsServedFromTheBinary) {
  net::HttpResponse page = Get("/");
  ASSERT_EQ(page.status, 200);
  EXPECT_THAT(page.Header("Content-Type"), HasSubstr("text/html"));
  EXPECT_THAT(page.body, HasSubstr("/ui/app.js"));
  net::HttpResponse script = Get("/ui/app.js");
  ASSERT_EQ(script.status, 200);
  EXPECT_THAT(script.Header("Content-Type"), HasSubstr("text/javascript"));
  EXPECT_THAT(script.body, HasSubstr("LiveCollection"));
  EXPECT_EQ(Get("/ui/missing.js").status, 404);
  // Everything else still reaches the REST API.
  EXPECT_EQ(Get("/healthz").status, 200);
}

TEST_F(CostDashboardTest, StrataCostPrintsATableAndJson) {
  const char* binary_dir = std::getenv("STRATA_BINARY_DIR");
  ASSERT_NE(binary_dir, nullptr);
  std::string strata = std::string(binary_dir) + "/bin/strata";
  if (access(strata.c_str(), X_OK) != 0) {
    GTEST_SKIP() << strata << " is not built (build the strata target, as make build does)";
  }
  auto run = [&](const std::string& args, int* exit_code) {
    std::string output;
    FILE* pipe = popen((strata + " cost --server " + Server() + " " + args + " 2>&1").c_str(), "r");
    if (pipe == nullptr) return output;
    char buffer[4096];
    size_t n;
    while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) output.append(buffer, n);
    int status = pclose(pipe);
    *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return output;
  };
  int code = -1;
  std::string table = run("--by team --window 24h", &code);
  EXPECT_EQ(code, 0) << table;
  EXPECT_THAT(table, HasSubstr("TEAM"));
  EXPECT_THAT(table, HasSubstr("PER-1M-TOKENS"));
  EXPECT_THAT(table, HasSubstr("\nml "));
  EXPECT_THAT(table, HasSubstr("\ntotal "));
  std::string series = run("--by team --window 7d --step 1d", &code);
  EXPECT_EQ(code, 0) << series;
  EXPECT_THAT(series, HasSubstr("STEP"));
  EXPECT_THAT(series, HasSubstr("T00:00:00Z"));  // days start at midnight UTC
  EXPECT_THAT(series, HasSubstr("\ntotal "));
  std::string json = run("--by service -o json", &code);
  EXPECT_EQ(code, 0) << json;
  EXPECT_EQ(nlohmann::json::parse(json)["by"], "service");
  std::string bad = run("--by colour", &code);
  EXPECT_EQ(code, 2) << bad;
  EXPECT_THAT(bad, HasSubstr("cost by \"colour\""));
}

}  // namespace
}  // namespace strata::server
