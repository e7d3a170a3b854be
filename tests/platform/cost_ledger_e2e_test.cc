// The durable cost ledger end to end (issue 23): jobs of two teams run under the real
// `strata up`; their spend by team stays the same after their jobs are deleted, and after a
// kill -9 of `strata up` and a restart on the same data dir. `strata cost --step` prints it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "client/api_client.h"
#include "node/test_support.h"
#include "server/cost_api.h"
#include "strata_process.h"

namespace strata::platform_test {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;

constexpr char kNoNvml[] = "--nvml-library=/nonexistent/libnvidia-ml.so.1";

std::string ReadFile(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// A Job of team `team` in `ns` (whose local queue is named as the namespace) running
// `seconds` of sleep on `gpus` GPUs.
std::string JobManifest(const std::string& ns, const std::string& name, const std::string& team,
                        int gpus, int seconds) {
  return "apiVersion: strata.dev/v1alpha1\nkind: Job\nmetadata: {name: " + name +
         ", namespace: " + ns + ", labels: {team: " + team +
         "}}\nspec:\n  replicas: 1\n  procPerNode: 1\n  queue: " + ns +
         "\n  resources: {cpu: \"1\", memory: 1Gi, gpu: " + std::to_string(gpus) +
         "}\n  template:\n    command: [sleep, \"" + std::to_string(seconds) + "\"]\n";
}

class CostLedgerE2eTest : public ::testing::Test {
 protected:
  std::vector<std::string> UpArgs() {
    return {"--data-dir", data_.path(),       "--listen", "127.0.0.1:0",
            kNoNvml,      "--gateway-listen", "off"};
  }

  std::unique_ptr<client::ApiClient> Client(const UpProcess& up) {
    auto client = client::ApiClient::Create(up.url(), AdminTokenFor(up.url()));
    EXPECT_TRUE(client) << client.error().ToString();
    return std::move(*client);
  }

  // Waits up to a minute for `done` to hold; false if it never did.
  static bool WaitFor(const std::function<bool()>& done) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline) {
      if (done()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  }

  static std::string JobPhase(client::ApiClient& client, const std::string& ns,
                              const std::string& name) {
    auto job = client.Get("/apis/strata.dev/v1alpha1/namespaces/" + ns + "/jobs/" + name);
    return job ? job->value(Json::json_pointer("/status/phase"), std::string()) : "";
  }

  static size_t Pods(client::ApiClient& client, const std::string& ns) {
    auto pods = client.Get("/api/v1/namespaces/" + ns + "/pods");
    return pods ? (*pods)["items"].size() : 0;
  }

  // Cost by team over the last hour: each team's total and what it holds now, per hour.
  struct Line {
    double total = 0;
    double hourly_rate = 0;
    bool operator==(const Line&) const = default;
  };
  static std::map<std::string, Line> ByTeam(client::ApiClient& client) {
    auto report = client.Get(std::string(server::CostApi::kPath) + "?by=team&window=1h");
    EXPECT_TRUE(report) << report.error().ToString();
    std::map<std::string, Line> lines;
    if (!report) return lines;
    for (const Json& line : (*report)["lines"]) {
      lines[line["name"]] = {line["total"].get<double>(), line["hourlyRate"].get<double>()};
    }
    return lines;
  }

  node::testing::TempDir data_;
};

TEST_F(CostLedgerE2eTest, SpendByTeamSurvivesDeletesAndAKillNineOfUp) {
  UpProcess up;
  ASSERT_TRUE(up.Start(UpArgs())) << up.output();
  auto client = Client(up);
  auto apply = [&](const std::string& yaml) {
    auto applied =
        client->Call("POST", "/apis/strata.dev/v1alpha1/apply", yaml, "application/yaml");
    ASSERT_TRUE(applied) << applied.error().ToString();
  };
  apply(ReadFile(SourceDir() + "/examples/team-queues/native.yaml"));
  // alpha's job runs to its end; beta's is deleted while it runs.
  apply(JobManifest("team-a", "short", "alpha", 1, 2));
  apply(JobManifest("team-b", "long", "beta", 2, 600));
  ASSERT_TRUE(WaitFor([&] { return JobPhase(*client, "team-a", "short") == "Succeeded"; }))
      << JobPhase(*client, "team-a", "short") << "\n"
      << up.output();
  ASSERT_TRUE(WaitFor([&] { return JobPhase(*client, "team-b", "long") == "Running"; }))
      << JobPhase(*client, "team-b", "long");
  ASSERT_TRUE(client->Call("DELETE", "/apis/strata.dev/v1alpha1/namespaces/team-b/jobs/long"));
  ASSERT_TRUE(WaitFor([&] { return Pods(*client, "team-b") == 0; }));

  // Both allocations closed (nothing held now, per hour), the figures no longer move.
  std::map<std::string, Line> closed;
  ASSERT_TRUE(WaitFor([&] {
    closed = ByTeam(*client);
    return closed.count("alpha") > 0 && closed.count("beta") > 0 &&
           closed["alpha"].hourly_rate == 0 && closed["beta"].hourly_rate == 0;
  }));
  EXPECT_GT(closed["alpha"].total, 0);
  EXPECT_GT(closed["beta"].total, 0);

  // alpha's job deleted too: nothing of either is left in the cluster, and the same spend.
  ASSERT_TRUE(client->Call("DELETE", "/apis/strata.dev/v1alpha1/namespaces/team-a/jobs/short"));
  ASSERT_TRUE(WaitFor([&] { return Pods(*client, "team-a") == 0; }));
  EXPECT_EQ(ByTeam(*client), closed);

  up.Kill();
  UpProcess restarted;
  ASSERT_TRUE(restarted.Start(UpArgs())) << restarted.output();
  auto again = Client(restarted);
  EXPECT_EQ(ByTeam(*again), closed);

  // The CLI's series: one column per team, steps on the minute.
  CommandResult printed = RunStrata(
      {"cost", "--server", restarted.url(), "--by", "team", "--window", "1h", "--step", "1m"});
  EXPECT_EQ(printed.exit_code, 0) << printed.err;
  EXPECT_THAT(printed.out, HasSubstr("STEP"));
  EXPECT_THAT(printed.out, HasSubstr("alpha"));
  EXPECT_THAT(printed.out, HasSubstr("beta"));
  EXPECT_THAT(printed.out, HasSubstr(":00Z"));
}

}  // namespace
}  // namespace strata::platform_test
