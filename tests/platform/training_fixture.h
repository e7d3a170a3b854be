#pragma once

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "client/api_client.h"
#include "node/test_support.h"
#include "strata_process.h"

// What the training end-to-end tests share: a real `strata up` on a temporary data dir with
// simulated GPUs, a client for its API, and the jobs' worker processes and logs as the node
// agent left them. Each test owns its fixture; not thread-safe.
namespace strata::platform_test {

inline constexpr char kNoNvml[] = "--nvml-library=/nonexistent/libnvidia-ml.so.1";
inline constexpr Duration kJobTimeout = std::chrono::seconds(90);

// The first of 16 free consecutive ports for the jobs' rendezvous (strata up's
// --first-master-port), below the kernel's ephemeral range; 29500 when none is found.
int FreeMasterPorts();

class TrainingJobTest : public ::testing::Test {
 protected:
  using Json = nlohmann::json;

  void TearDown() override {
    // Whatever a test leaves running (a job it did not wait for) goes with it.
    for (pid_t pid : Workers("")) kill(pid, SIGKILL);
  }

  std::vector<std::string> UpArgs(const std::string& simulate) const {
    return {"--data-dir",
            data_.path(),
            "--listen",
            "127.0.0.1:0",
            kNoNvml,
            "--simulate",
            simulate,
            "--first-master-port",
            std::to_string(master_port_),
            "--stop-grace",
            "5"};
  }

  void StartUp(const std::string& simulate, const std::vector<std::string>& more_args = {}) {
    std::vector<std::string> args = UpArgs(simulate);
    args.insert(args.end(), more_args.begin(), more_args.end());
    ASSERT_TRUE(up_.Start(args)) << up_.output();
    Connect(up_);
  }

  void Connect(const UpProcess& up) {
    auto client = client::ApiClient::Create(up.url(), AdminTokenFor(up.url()));
    ASSERT_TRUE(client);
    client_ = std::move(*client);
  }

  void Apply(const std::string& manifest) {
    auto applied =
        client_->Call("POST", "/apis/strata.dev/v1alpha1/apply", manifest, "application/yaml");
    ASSERT_TRUE(applied) << applied.error().ToString() << "\n" << manifest;
  }

  Json JobStatus(const std::string& name) {
    auto job = client_->Get("/apis/strata.dev/v1alpha1/namespaces/default/jobs/" + name);
    if (!job) return Json::object();
    return (*job).value("status", Json::object());
  }

  size_t PodCount(const std::string& job) {
    auto pods = client_->Get("/api/v1/namespaces/default/pods");
    if (!pods) return 0;
    size_t count = 0;
    for (const Json& pod : (*pods)["items"]) {
      if (pod["metadata"].value("labels", Json::object()).value("strata.dev/job-name", "") == job) {
        ++count;
      }
    }
    return count;
  }

  // Polls until `done` holds, at most `timeout`; returns whether it did.
  template <typename Predicate>
  bool WaitFor(Predicate done, Duration timeout = kJobTimeout,
               Duration poll = std::chrono::milliseconds(100)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      if (done()) return true;
      std::this_thread::sleep_for(poll);
    }
    return done();
  }

  bool WaitForPhase(const std::string& job, const std::string& phase) {
    return WaitFor([&] { return JobStatus(job).value("phase", "") == phase; });
  }

  // Live worker processes of `job` (every job of this test when empty), optionally of one
  // global rank, found by the checkpoint dir in their environment.
  std::vector<pid_t> Workers(const std::string& job, int rank = -1) const {
    std::string marker = "STRATA_CHECKPOINT_DIR=" + data_.path() + "/checkpoints/default/" + job;
    std::vector<pid_t> pids;
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
      std::string name = entry.path().filename();
      if (name.find_first_not_of("0123456789") != std::string::npos) continue;
      std::string stat = node::testing::ReadFileOrEmpty(entry.path() / "stat");
      size_t state = stat.rfind(')');
      if (state == std::string::npos || stat.size() < state + 3 || stat[state + 2] == 'Z') {
        continue;
      }
      std::string environ = node::testing::ReadFileOrEmpty(entry.path() / "environ");
      bool ours = false;
      bool rank_matches = rank < 0;
      std::istringstream vars(environ);
      std::string var;
      while (std::getline(vars, var, '\0')) {
        if (var.rfind(marker, 0) == 0) ours = true;
        if (var == "RANK=" + std::to_string(rank)) rank_matches = true;
      }
      if (ours && rank_matches) pids.push_back(std::stoi(name));
    }
    return pids;
  }

  // Everything the workers of every pod printed.
  std::string WorkerLogs() const {
    std::string logs;
    std::error_code error;
    for (const auto& pod : std::filesystem::directory_iterator(data_.path() + "/pods", error)) {
      for (const auto& log : std::filesystem::directory_iterator(pod.path() / "logs", error)) {
        logs += node::testing::ReadFileOrEmpty(log.path());
      }
    }
    return logs;
  }

  static size_t Count(const std::string& text, const std::string& needle) {
    size_t count = 0;
    for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
      ++count;
    }
    return count;
  }

  node::testing::TempDir data_;
  int master_port_ = FreeMasterPorts();
  UpProcess up_;
  std::unique_ptr<client::ApiClient> client_;
};

}  // namespace strata::platform_test
