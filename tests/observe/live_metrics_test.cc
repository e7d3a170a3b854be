// The metrics of the real processes, as a platform team would scrape them: `strata up` (with
// its simulated nodes, a queue and a running job), a gateway in front of an engine simulator,
// and the engine itself, each checked by promtool; and a real Prometheus server scraping
// `strata up`, asked through its HTTP API for the series dashboards and alerts are built on.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "child_process.h"
#include "client/api_client.h"
#include "net/http_client.h"
#include "node/test_support.h"
#include "promtool_check.h"

namespace strata::observe_test {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;

constexpr auto kStartTimeout = std::chrono::seconds(60);

std::string StrataBinary() {
  const char* dir = std::getenv("STRATA_BINARY_DIR");
  return std::string(dir != nullptr ? dir : ".") + "/bin/strata";
}

std::string SourceDir() {
  const char* dir = std::getenv("STRATA_SOURCE_DIR");
  return dir != nullptr ? dir : ".";
}

bool HaveProgram(const std::string& name) {
  return std::system(("command -v " + name + " >/dev/null 2>&1").c_str()) == 0;
}

// A job of team "ml" in the queue of examples/team-queues/native.yaml, holding two GPUs with a
// process that runs until the test stops `strata up`.
constexpr char kJob[] = R"(apiVersion: strata.dev/v1alpha1
kind: Job
metadata:
  name: metrics-probe
  namespace: team-a
  labels: {team: ml, project: observe}
spec:
  replicas: 1
  procPerNode: 1
  queue: team-a
  resources: {cpu: "2", memory: 4Gi, gpu: 2}
  template:
    image: busybox
    command: ["sleep", "600"]
)";

// Splits "127.0.0.1:PORT" (what a process prints after its scheme) into the port.
int PortOf(const std::string& address) {
  size_t colon = address.rfind(':');
  return colon == std::string::npos ? 0 : std::atoi(address.c_str() + colon + 1);
}

class LiveMetricsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (access(StrataBinary().c_str(), X_OK) != 0) {
      GTEST_SKIP() << StrataBinary() << " is not built (build the strata target)";
    }
  }

  // Deletes the job and waits until its pod no longer runs: `strata up` leaves its pods'
  // processes running when it stops (a restarted agent adopts them), and a test leaves none.
  void TearDown() override {
    if (client_ == nullptr) return;
    auto deleted = client_->Call("DELETE",
                                 "/apis/strata.dev/v1alpha1/namespaces/team-a/jobs/"
                                 "metrics-probe");
    ASSERT_TRUE(deleted) << deleted.error().ToString();
    TimePoint deadline = RealClock::Instance().Now() + kStartTimeout;
    while (RealClock::Instance().Now() < deadline) {
      auto pods = client_->Get("/api/v1/namespaces/team-a/pods");
      ASSERT_TRUE(pods) << pods.error().ToString();
      bool running = false;
      for (const Json& pod : (*pods)["items"]) {
        running = running || pod["status"].value("phase", "") == "Running";
      }
      if (!running) return;
      usleep(100 * 1000);
    }
    FAIL() << "the job's pod still runs after the job was deleted\n" << up_.Log();
  }

  // Starts `strata up` on a kernel-chosen port with the default simulated cluster, applies
  // the example queues and kJob, and waits until the job's pod runs. Pods' CPU use is measured
  // over `activity_window_seconds`: by default an hour, so that within the test the job keeps
  // its GPUs as busy as a training job typically does (92 %).
  void StartCluster(const std::string& activity_window_seconds = "3600") {
    ASSERT_TRUE(up_.Start({StrataBinary(), "up", "--data-dir", dir_.File("data"), "--listen",
                           "127.0.0.1:0", "--nvml-library=/nonexistent/libnvidia-ml.so.1",
                           "--gpu-activity-window=" + activity_window_seconds},
                          dir_.File("up.log")));
    std::optional<std::string> address = up_.WaitForLine("API listening on http://", kStartTimeout);
    ASSERT_TRUE(address) << up_.Log();
    up_port_ = PortOf(*address);
    auto client = client::ApiClient::Create("http://" + *address, AdminToken());
    ASSERT_TRUE(client) << client.error().ToString();
    client_ = std::move(*client);
    std::ifstream example(SourceDir() + "/examples/team-queues/native.yaml");
    std::stringstream queues;
    queues << example.rdbuf();
    auto applied = client_->Call("POST", "/apis/strata.dev/v1alpha1/apply",
                                 queues.str() + "---\n" + kJob, "application/yaml");
    ASSERT_TRUE(applied) << applied.error().ToString();
    TimePoint deadline = RealClock::Instance().Now() + kStartTimeout;
    while (RealClock::Instance().Now() < deadline) {
      auto pods = client_->Get("/api/v1/namespaces/team-a/pods");
      ASSERT_TRUE(pods) << pods.error().ToString();
      for (const Json& pod : (*pods)["items"]) {
        if (pod["status"].value("phase", "") == "Running") return;
      }
      usleep(100 * 1000);
    }
    FAIL() << "the job's pod never ran\n" << up_.Log();
  }

  // The credential strata up made in its data dir.
  std::string AdminToken() const {
    std::string token = node::testing::ReadFileOrEmpty(dir_.File("data/admin-token"));
    while (!token.empty() && token.back() == '\n') token.pop_back();
    return token;
  }

  std::string Scrape(int port) {
    net::HttpRequest request;
    request.target = "/metrics";
    if (port == up_port_) request.headers.push_back({"Authorization", "Bearer " + AdminToken()});
    Result<net::HttpResponse> response = http_.Send("127.0.0.1", port, request);
    EXPECT_TRUE(response) << response.error().ToString();
    if (!response) return "";
    EXPECT_EQ(response->status, 200) << response->body;
    return response->body;
  }

  node::testing::TempDir dir_;
  ChildProcess up_;
  int up_port_ = 0;
  std::unique_ptr<client::ApiClient> client_;
  net::HttpClient http_;
};

TEST_F(LiveMetricsTest, EveryMetricsPageOfTheRunningPlatformPassesPromtool) {
  if (!HavePromtool()) {
    GTEST_SKIP() << "promtool not found: install Debian's prometheus package (make deps)";
  }
  ASSERT_NO_FATAL_FAILURE(StartCluster());
  // The running pod's cost appears once the cost ledger, which syncs each second, has it.
  std::string control_plane;
  const TimePoint deadline = RealClock::Instance().Now() + std::chrono::seconds(30);
  do {
    control_plane = Scrape(up_port_);
    if (control_plane.find("strata_cost_hourly_rate{by=\"team\"") != std::string::npos) break;
    usleep(100 * 1000);
  } while (RealClock::Instance().Now() < deadline);
  EXPECT_THAT(control_plane, HasSubstr("DCGM_FI_DEV_GPU_UTIL{"));
  EXPECT_THAT(control_plane, HasSubstr("pod=\"metrics-probe-worker-0\""));
  EXPECT_THAT(control_plane, HasSubstr("strata_queue_nominal_quota{queue=\"team-a-cq\""));
  EXPECT_THAT(control_plane, HasSubstr("strata_cost_hourly_rate{by=\"team\",name=\"ml\""));
  ExpectOnlyPeerNamingComplaints(CheckMetrics(control_plane));

  // A gateway in front of one engine simulator, after one request went through it.
  ChildProcess engine;
  ASSERT_TRUE(engine.Start({StrataBinary(), "engine-sim", "--port", "0", "--model", "tiny"},
                           dir_.File("engine.log")));
  std::optional<std::string> engine_address = engine.WaitForLine("listening on ", kStartTimeout);
  ASSERT_TRUE(engine_address) << engine.Log();
  std::ofstream(dir_.File("gateway.yaml"))
      << "models:\n- {name: tiny, versions: [{name: v1, endpoints: [\"127.0.0.1:"
      << PortOf(*engine_address) << "\"]}]}\n";
  ChildProcess gateway;
  ASSERT_TRUE(gateway.Start(
      {StrataBinary(), "gateway", "--listen", "127.0.0.1:0", "--config", dir_.File("gateway.yaml")},
      dir_.File("gateway.log")));
  std::optional<std::string> gateway_address =
      gateway.WaitForLine("gateway listening on http://", kStartTimeout);
  ASSERT_TRUE(gateway_address) << gateway.Log();
  int gateway_port = PortOf(*gateway_address);
  net::HttpRequest completion;
  completion.method = "POST";
  completion.target = "/v1/completions";
  completion.headers.push_back({"Content-Type", "application/json"});
  completion.body = R"({"model": "tiny", "prompt": "hello", "max_tokens": 4})";
  Result<net::HttpResponse> answered = http_.Send("127.0.0.1", gateway_port, completion);
  ASSERT_TRUE(answered) << answered.error().ToString();
  EXPECT_EQ(answered->status, 200) << answered->body;

  std::string gateway_page = Scrape(gateway_port);
  EXPECT_THAT(gateway_page, HasSubstr("strata_gateway_"));
  ExpectOnlyPeerNamingComplaints(CheckMetrics(gateway_page));
  std::string engine_page = Scrape(PortOf(*engine_address));
  EXPECT_THAT(engine_page, HasSubstr("vllm:num_requests_running"));
  ExpectOnlyPeerNamingComplaints(CheckMetrics(engine_page));
}

TEST_F(LiveMetricsTest, TopNodesShowsEachGpusAllocationAgainstItsUse) {
  ASSERT_NO_FATAL_FAILURE(StartCluster());
  ProgramResult top =
      RunToEnd(StrataBinary() + " top nodes --server http://127.0.0.1:" + std::to_string(up_port_));
  ASSERT_EQ(top.exit_code, 0) << top.output;
  EXPECT_THAT(top.output, HasSubstr("ALLOC%"));
  EXPECT_THAT(top.output, HasSubstr("BUSY%"));
  // The job's two GPUs, whole and busy as a simulated training step keeps them; 30 free ones.
  std::istringstream lines(top.output);
  std::string line;
  int held = 0;
  int free = 0;
  while (std::getline(lines, line)) {
    if (line.find("team-a/metrics-probe-worker-0") != std::string::npos) {
      ++held;
      EXPECT_THAT(line, ::testing::MatchesRegex(".*100% +92% +team-a/metrics-probe-worker-0 *"));
    } else if (line.find("NODE") != 0) {
      ++free;
      EXPECT_THAT(line, ::testing::MatchesRegex(".*0% +0% +- *"));
    }
  }
  EXPECT_EQ(held, 2);
  EXPECT_EQ(free, 30);

  // The same figures on /metrics, per GPU, node, queue and team.
  std::string page = Scrape(up_port_);
  EXPECT_THAT(page, HasSubstr("strata_gpu_allocated_ratio{scope=\"cluster\",name=\"\"} 0.0625\n"));
  // By the job's Queue, which strata_queue_* name too, not by the LocalQueue it wrote.
  EXPECT_THAT(page, HasSubstr("strata_gpu_allocated_ratio{scope=\"queue\",name=\"team-a-cq\"}"));
  EXPECT_THAT(page, HasSubstr("strata_gpu_busy_ratio{scope=\"team\",name=\"ml\"} 0.0575\n"));
}

TEST_F(LiveMetricsTest, ASleepingJobsSimulatedGpusReadIdleOnceItsCpuUseIsMeasured) {
  ASSERT_NO_FATAL_FAILURE(StartCluster("1"));
  // The job's two GPUs under DCGM's name, until both read 0 %: its process only sleeps. The
  // deadline is generous; this asserts what the page comes to say, not when.
  std::vector<std::string> held;
  TimePoint deadline = RealClock::Instance().Now() + kStartTimeout;
  while (RealClock::Instance().Now() < deadline) {
    held.clear();
    std::istringstream lines(Scrape(up_port_));
    std::string line;
    while (std::getline(lines, line)) {
      if (line.starts_with("DCGM_FI_DEV_GPU_UTIL{") &&
          line.find("pod=\"metrics-probe-worker-0\"") != std::string::npos) {
        held.push_back(line);
      }
    }
    if (held.size() == 2 && held[0].ends_with("} 0") && held[1].ends_with("} 0")) break;
    usleep(250 * 1000);
  }
  ASSERT_EQ(held.size(), 2u) << up_.Log();
  EXPECT_THAT(held[0], ::testing::EndsWith("} 0"));
  EXPECT_THAT(held[1], ::testing::EndsWith("} 0"));
}

// A Prometheus server on a free loopback port scraping `strata up` every second, with its
// storage in the test's directory.
class PrometheusServer {
 public:
  // Returns false with the server's log in `why` when it does not become ready.
  bool Start(const node::testing::TempDir& dir, int target_port,
             const std::string& credentials_file, std::string* why) {
    std::string config = dir.File("prometheus.yml");
    std::ofstream(config) << "global: {scrape_interval: 1s, scrape_timeout: 1s}\n"
                             "scrape_configs:\n"
                             "- job_name: strata\n"
                             "  authorization: {credentials_file: '"
                          << credentials_file
                          << "'}\n"
                             "  static_configs: [{targets: ['127.0.0.1:"
                          << target_port << "']}]\n";
    // The port is free when chosen; another process may take it first, so try a few.
    for (int attempt = 0; attempt < 3; ++attempt) {
      port_ = FreeLoopbackPort();
      process_ = std::make_unique<ChildProcess>();
      std::string log = dir.File("prometheus-" + std::to_string(attempt) + ".log");
      if (!process_->Start(
              {"prometheus", "--config.file=" + config, "--storage.tsdb.path=" + dir.File("tsdb"),
               "--web.listen-address=127.0.0.1:" + std::to_string(port_)},
              log)) {
        continue;
      }
      if (process_->WaitForLine("Server is ready to receive web requests", kStartTimeout)) {
        return true;
      }
      *why = process_->Log();
      process_->Stop();
    }
    return false;
  }

  // The instant vector of `query` (PromQL), as Prometheus' /api/v1/query returns it in
  // data.result; an empty array when the query fails.
  Json Query(const std::string& query) {
    net::HttpRequest request;
    request.method = "POST";
    request.target = "/api/v1/query";
    request.headers.push_back({"Content-Type", "application/x-www-form-urlencoded"});
    request.body = "query=" + UrlEncode(query);
    Result<net::HttpResponse> response = http_.Send("127.0.0.1", port_, request);
    if (!response || response->status != 200) return Json::array();
    Json body = Json::parse(response->body, nullptr, false);
    if (body.is_discarded() || body.value("status", "") != "success") return Json::array();
    return body["data"]["result"];
  }

 private:
  static std::string UrlEncode(const std::string& text) {
    static constexpr char kHex[] = "0123456789ABCDEF";
    std::string out;
    for (unsigned char c : text) {
      if (std::isalnum(c) || c == '_' || c == '-' || c == '.' || c == '~') {
        out += static_cast<char>(c);
      } else {
        out += '%';
        out += kHex[c >> 4];
        out += kHex[c & 15];
      }
    }
    return out;
  }

  int port_ = 0;
  std::unique_ptr<ChildProcess> process_;
  net::HttpClient http_;
};

TEST_F(LiveMetricsTest, ARealPrometheusServerScrapesTheExpectedSeriesAndLabels) {
  if (!HaveProgram("prometheus")) {
    GTEST_SKIP() << "prometheus not found: install Debian's prometheus package (make deps)";
  }
  ASSERT_NO_FATAL_FAILURE(StartCluster());
  PrometheusServer prometheus;
  std::string why;
  ASSERT_TRUE(prometheus.Start(dir_, up_port_, dir_.File("data/admin-token"), &why)) << why;

  // Each query until it answers as expected: Prometheus scrapes on its own schedule. The
  // deadline is generous; this asserts what arrives, not when.
  auto poll = [&](const std::string& query, auto&& accept) {
    Json result = Json::array();
    TimePoint deadline = RealClock::Instance().Now() + kStartTimeout;
    while (RealClock::Instance().Now() < deadline) {
      result = prometheus.Query(query);
      if (accept(result)) return result;
      usleep(250 * 1000);
    }
    ADD_FAILURE() << query << " never answered as expected; last answer: " << result.dump();
    return result;
  };

  // The GPUs the job holds, under the DCGM exporter's name and labels, with the holder.
  // The holder's job is strata_job, so Prometheus' own `job` label (the scrape job) stays.
  Json held = poll("DCGM_FI_DEV_GPU_UTIL{pod=\"metrics-probe-worker-0\"}",
                   [](const Json& result) { return result.size() == 2; });
  for (const Json& series : held) {
    const Json& labels = series["metric"];
    for (const char* name : {"gpu", "UUID", "modelName", "Hostname", "namespace", "queue"}) {
      EXPECT_TRUE(labels.contains(name)) << name << " missing from " << labels.dump();
    }
    EXPECT_EQ(labels.value("modelName", ""), "H100-80GB");
    EXPECT_EQ(labels.value("strata_job", ""), "metrics-probe");
    EXPECT_FALSE(labels.contains("exported_job")) << labels.dump();
    EXPECT_EQ(labels.value("job", ""), "strata");
    EXPECT_GT(std::stod(series["value"][1].get<std::string>()), 0);
  }
  // Every GPU of the four simulated nodes, held or not.
  poll("count(DCGM_FI_DEV_GPU_UTIL)",
       [](const Json& result) { return result.size() == 1 && result[0]["value"][1] == "32"; });

  poll("strata_queue_nominal_quota{queue=\"team-a-cq\",resource=\"gpu\"}",
       [](const Json& result) { return result.size() == 1 && result[0]["value"][1] == "32"; });
  poll("strata_queue_usage{queue=\"team-a-cq\",resource=\"gpu\"}",
       [](const Json& result) { return result.size() == 1 && result[0]["value"][1] == "2"; });
  poll("strata_cost_hourly_rate{by=\"team\",name=\"ml\"}", [](const Json& result) {
    return result.size() == 1 && std::stod(result[0]["value"][1].get<std::string>()) > 0;
  });
  poll("strata_cost_accrued{by=\"project\",name=\"observe\"}",
       [](const Json& result) { return result.size() == 1; });
}

}  // namespace
}  // namespace strata::observe_test
