// The scenario driver: every testdata/scheduler/*.yaml is a cluster, queues, workloads and steps
// (advance time, submit, finish, checkpoint, run a cycle) with the decisions each cycle must
// make. Each scenario runs twice and both runs must decide identically (determinism).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "common/yaml_json.h"
#include "scheduler/model_json.h"
#include "scheduler/scheduler.h"

namespace strata::scheduler {
namespace {

using nlohmann::json;

std::filesystem::path ScenarioDir() {
  const char* root = std::getenv("STRATA_SOURCE_DIR");
  return std::filesystem::path(root != nullptr ? root : ".") / "testdata" / "scheduler";
}

std::vector<std::string> SortedStrings(const json& list) {
  std::vector<std::string> out;
  for (const json& v : list) out.push_back(v.get<std::string>());
  std::sort(out.begin(), out.end());
  return out;
}

// Runs one scenario; failures are reported through gtest with the step number. Returns a
// transcript of every decision, for the determinism check.
class ScenarioRun {
 public:
  explicit ScenarioRun(const json& doc) : doc_(doc) {}

  std::string Run() {
    auto cluster = DecodeCluster(doc_["cluster"], "cluster");
    if (!cluster) {
      ADD_FAILURE() << cluster.error().ToString();
      return "";
    }
    cluster_ = std::make_shared<const Cluster>(std::move(*cluster));
    SchedulerOptions options;
    options.seed = doc_.value("seed", 0);
    options.max_preemptions_per_workload = doc_.value("maxPreemptions", 3);
    scheduler_ = Scheduler(options);
    for (size_t i = 0; i < doc_["workloads"].size(); ++i) {
      json spec = doc_["workloads"][i];
      const bool deferred = spec.value("deferred", false);
      spec.erase("deferred");
      auto w = DecodeWorkload(spec, "workloads[" + std::to_string(i) + "]", clock_.Now());
      if (!w) {
        ADD_FAILURE() << w.error().ToString();
        return "";
      }
      definitions_[w->name] = *w;
      if (!deferred) pending_.push_back(*w);
    }
    const json& steps = doc_["steps"];
    for (size_t s = 0; s < steps.size(); ++s) {
      SCOPED_TRACE("step " + std::to_string(s));
      RunStep(steps[s]);
    }
    return transcript_.str();
  }

 private:
  void RunStep(const json& step) {
    if (step.contains("advance")) {
      clock_.Advance(std::chrono::duration_cast<Duration>(
          std::chrono::duration<double>(step["advance"].get<double>())));
    }
    for (const json& name : step.value("submit", json::array())) {
      ASSERT_TRUE(definitions_.count(name.get<std::string>())) << name;
      Workload w = definitions_[name.get<std::string>()];
      w.submitted = clock_.Now();
      pending_.push_back(std::move(w));
    }
    for (const json& name : step.value("finish", json::array())) {
      auto it = std::find_if(running_.begin(), running_.end(), [&](const RunningWorkload& r) {
        return r.workload.name == name.get<std::string>();
      });
      ASSERT_NE(it, running_.end()) << "finish: " << name << " is not running";
      running_.erase(it);
    }
    for (const json& name : step.value("checkpoint", json::array())) {
      for (RunningWorkload& r : running_) {
        if (r.workload.name == name.get<std::string>()) r.last_checkpoint = clock_.Now();
      }
    }
    if (step.value("cycle", false)) Cycle();
    if (step.contains("expect")) Check(step["expect"]);
  }

  void Cycle() {
    Snapshot snapshot{cluster_, running_, clock_.Now()};
    last_ = scheduler_.Cycle(snapshot, pending_);
    for (const Binding& b : last_.bindings) {
      auto it = std::find_if(pending_.begin(), pending_.end(),
                             [&](const Workload& w) { return w.name == b.workload; });
      ASSERT_NE(it, pending_.end());
      RunningWorkload r{*it,          b.flavor,     b.pods,
                        clock_.Now(), clock_.Now(), times_preempted_[b.workload]};
      r.workload.nominated = false;
      running_.push_back(std::move(r));
      pending_.erase(it);
      transcript_ << "bind " << b.workload << ":";
      for (const PodPlacement& p : b.pods) transcript_ << " " << Describe(p);
      transcript_ << "\n";
    }
    for (const Preemption& p : last_.preemptions) {
      auto it = std::find_if(running_.begin(), running_.end(),
                             [&](const RunningWorkload& r) { return r.workload.name == p.victim; });
      ASSERT_NE(it, running_.end());
      ++times_preempted_[p.victim];
      for (Workload& w : pending_) w.nominated = w.nominated || w.name == p.preemptor;
      pending_.push_back(it->workload);
      running_.erase(it);
      transcript_ << "preempt " << p.victim << " for " << p.preemptor << "\n";
    }
    for (const Pending& p : last_.pending) {
      transcript_ << "pending " << p.workload << " " << PendingTierName(p.tier) << " " << p.message
                  << " | " << p.detail << "\n";
    }
  }

  std::string Describe(const PodPlacement& p) const {
    std::string out = cluster_->nodes[p.node].name + ":";
    for (size_t i = 0; i < p.gpus.size(); ++i) out += (i ? "," : "") + std::to_string(p.gpus[i]);
    return out;
  }

  void Check(const json& expect) {
    if (expect.contains("bound")) {
      std::vector<std::string> bound;
      for (const Binding& b : last_.bindings) bound.push_back(b.workload);
      std::sort(bound.begin(), bound.end());
      EXPECT_EQ(bound, SortedStrings(expect["bound"])) << "bound workloads";
    }
    if (expect.contains("boundCount")) {
      EXPECT_EQ(last_.bindings.size(), expect["boundCount"].get<size_t>()) << "bound count";
    }
    const json placements = expect.value("placements", json::object());
    for (const auto& [name, places] : placements.items()) {
      auto it = std::find_if(last_.bindings.begin(), last_.bindings.end(),
                             [&](const Binding& b) { return b.workload == name; });
      ASSERT_NE(it, last_.bindings.end()) << name << " was not bound";
      std::vector<std::string> want = SortedStrings(places);
      // Expected entries without ":" name only nodes; with it, "node:gpu,gpu".
      const bool nodes_only = std::none_of(want.begin(), want.end(), [](const std::string& w) {
        return w.find(':') != std::string::npos;
      });
      std::vector<std::string> got;
      for (const PodPlacement& p : it->pods) {
        std::string d = Describe(p);
        got.push_back(nodes_only ? d.substr(0, d.find(':')) : d);
      }
      std::sort(got.begin(), got.end());
      EXPECT_EQ(got, want) << "placements of " << name;
    }
    const json pending = expect.value("pending", json::object());
    for (const auto& [name, want] : pending.items()) {
      auto it = std::find_if(last_.pending.begin(), last_.pending.end(),
                             [&](const Pending& p) { return p.workload == name; });
      ASSERT_NE(it, last_.pending.end()) << name << " is not pending";
      if (want.contains("tier")) {
        EXPECT_EQ(PendingTierName(it->tier), want["tier"].get<std::string>()) << name;
      }
      if (want.contains("message")) {
        EXPECT_EQ(it->message, want["message"].get<std::string>()) << name;
      }
      if (want.contains("detail")) {
        EXPECT_EQ(it->detail, want["detail"].get<std::string>()) << name;
      }
    }
    if (expect.contains("preempted")) {
      std::vector<std::string> victims;
      for (const Preemption& p : last_.preemptions) victims.push_back(p.victim);
      std::sort(victims.begin(), victims.end());
      EXPECT_EQ(victims, SortedStrings(expect["preempted"])) << "preempted";
    }
    if (expect.contains("running")) {
      std::vector<std::string> names;
      for (const RunningWorkload& r : running_) names.push_back(r.workload.name);
      std::sort(names.begin(), names.end());
      EXPECT_EQ(names, SortedStrings(expect["running"])) << "running";
    }
    if (expect.contains("reservation")) {
      const std::string holder = last_.reservation ? last_.reservation->workload : "";
      EXPECT_EQ(holder,
                expect["reservation"].is_null() ? "" : expect["reservation"].get<std::string>());
    }
  }

  const json& doc_;
  FakeClock clock_;
  std::shared_ptr<const Cluster> cluster_;
  Scheduler scheduler_;
  std::map<std::string, Workload> definitions_;
  std::map<std::string, int> times_preempted_;
  std::vector<Workload> pending_;
  std::vector<RunningWorkload> running_;
  Decisions last_;
  std::ostringstream transcript_;
};

class ScenarioTest : public testing::TestWithParam<std::string> {};

TEST_P(ScenarioTest, DecidesAsExpectedAndDeterministically) {
  std::ifstream in(ScenarioDir() / GetParam());
  ASSERT_TRUE(in) << "cannot read " << GetParam();
  std::stringstream text;
  text << in.rdbuf();
  auto docs = ParseYamlDocuments(text.str());
  ASSERT_TRUE(docs) << docs.error().ToString();
  ASSERT_EQ(docs->size(), 1u);
  const json& doc = (*docs)[0].value;
  const std::string first = ScenarioRun(doc).Run();
  if (HasFailure()) return;
  const std::string second = ScenarioRun(doc).Run();
  EXPECT_EQ(first, second) << "same seed, different decisions";
}

std::vector<std::string> Scenarios() {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(ScenarioDir())) {
    if (entry.path().extension() == ".yaml") names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

INSTANTIATE_TEST_SUITE_P(Testdata, ScenarioTest, testing::ValuesIn(Scenarios()),
                         [](const testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param.substr(0, info.param.size() - 5);
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace strata::scheduler
