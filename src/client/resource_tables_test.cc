#include "client/resource_tables.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "client/resource_description.h"

namespace strata::client {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;

Json Node(const std::string& name, int gpus) {
  Json list = Json::array();
  for (int i = 0; i < gpus; ++i)
    list.push_back({{"index", i}, {"model", "H100-80GB"}, {"memory", "80Gi"}});
  return {{"metadata",
           {{"name", name},
            {"creationTimestamp", "2026-01-01T00:00:00Z"},
            {"labels", {{"topology.strata.dev/rack", "rack-0"}}}}},
          {"status", {{"gpus", list}, {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}};
}

Json Pod(const std::string& name, const std::string& node, std::vector<int> gpus,
         const std::string& phase) {
  Json assigned = Json::array();
  for (int index : gpus) assigned.push_back({{"index", index}});
  return {{"metadata", {{"name", name}, {"namespace", "team-a"}}},
          {"spec", {{"nodeName", node}, {"assignedGpus", assigned}}},
          {"status", {{"phase", phase}}}};
}

TEST(ResourceTablesTest, NodeTableShowsReadinessGpusAndAge) {
  FakeClock clock;
  clock.Advance(std::chrono::hours(3));
  std::string table =
      FormatTable(*api::FindResourceType("nodes"), {Node("sim-node-0", 8)}, false, clock.Now());
  EXPECT_EQ(table,
            "NAME         STATUS   GPUS           RACK     AGE\n"
            "sim-node-0   Ready    8x H100-80GB   rack-0   3h\n");
}

TEST(ResourceTablesTest, NamespaceColumnComesFirstForAllNamespaces) {
  std::string table = FormatTable(*api::FindResourceType("pods"),
                                  {Pod("p", "n", {0, 1}, "Running")}, true, FakeClock().Now());
  EXPECT_THAT(table, HasSubstr("NAMESPACE   NAME   PHASE"));
  EXPECT_THAT(table, HasSubstr("team-a      p      Running   0          n      0-1"));
}

TEST(ResourceTablesTest, GpuHoldersIgnoreFinishedPods) {
  std::string table = FormatGpuHolders(
      {Node("n", 2)}, {Pod("train-0", "n", {0}, "Running"), Pod("old", "n", {1}, "Succeeded")});
  EXPECT_EQ(table,
            "NODE   GPU   MODEL       MEMORY   HELD BY\n"
            "n      0     H100-80GB   80Gi     team-a/train-0\n"
            "n      1     H100-80GB   80Gi     -\n");
}

TEST(ResourceTablesTest, DescriptionShowsThePendingReasonAndEvents) {
  Json job = {{"metadata", {{"name", "big"}, {"namespace", "team-a"}}},
              {"spec", {{"replicas", 8}}},
              {"status",
               {{"phase", "Pending"},
                {"reason", "WaitingForQuota"},
                {"message", "0/4 nodes are available: 4 Insufficient nvidia.com/gpu."}}}};
  Json event = {{"type", "Warning"},
                {"reason", "FailedScheduling"},
                {"count", 3},
                {"message", "0/4 nodes are available"}};
  std::string text =
      FormatDescription(*api::FindResourceType("job"), job, {}, {event}, FakeClock().Now());
  EXPECT_THAT(text, HasSubstr("Namespace:        team-a"));
  EXPECT_THAT(text, HasSubstr("Pending:          WaitingForQuota: 0/4 nodes are available"));
  EXPECT_THAT(text, HasSubstr("Warning   FailedScheduling   3"));
}

TEST(ResourceTablesTest, PodDescriptionShowsWhyItFailed) {
  Json pod = Pod("bad", "n", {}, "Failed");
  pod["status"]["reason"] = "StartError";
  pod["status"]["message"] = "process \"main\": cannot run \"/nonexistent\": No such file";
  std::string text =
      FormatDescription(*api::FindResourceType("pod"), pod, {}, {}, FakeClock().Now());
  EXPECT_THAT(text, HasSubstr("Reason:           StartError"));
  EXPECT_THAT(text, HasSubstr("Message:          process \"main\": cannot run \"/nonexistent\""));
}

TEST(ResourceTablesTest, DescriptionListsEventsOldestFirst) {
  Json job = {{"metadata", {{"name", "train"}, {"namespace", "team-a"}}}, {"spec", Json::object()}};
  auto event = [](const char* reason, const char* at) {
    return Json{{"type", "Normal"}, {"reason", reason}, {"lastTimestamp", at}, {"message", "m"}};
  };
  std::string text = FormatDescription(
      *api::FindResourceType("job"), job, {},
      {event("Restarting", "2026-01-01T00:00:30Z"), event("Scheduled", "2026-01-01T00:00:10Z"),
       event("Running", "2026-01-01T00:00:20Z")},
      FakeClock().Now());
  size_t scheduled = text.find("Scheduled"), running = text.find("Running"),
         restarting = text.find("Restarting");
  ASSERT_NE(restarting, std::string::npos) << text;
  EXPECT_LT(scheduled, running) << text;
  EXPECT_LT(running, restarting) << text;
}

TEST(ResourceTablesTest, JobTableShowsReadyPodsAndRestarts) {
  Json job = {{"apiVersion", "strata.dev/v1alpha1"},
              {"kind", "Job"},
              {"metadata", {{"name", "train"}, {"namespace", "team-a"}}},
              {"spec",
               {{"replicas", 2},
                {"resources", {{"gpu", "8"}}},
                {"queue", "a"},
                {"template", {{"command", {"python3", "train.py"}}}}}},
              {"status", {{"phase", "Running"}, {"restartCount", 1}}}};
  Json running = Pod("train-0", "n", {0}, "Running");
  running["spec"]["owner"] = {{"kind", "Job"}, {"name", "train"}};
  Json pending = Pod("train-1", "", {}, "Pending");
  pending["spec"]["owner"] = {{"kind", "Job"}, {"name", "train"}};
  std::string table = FormatTable(*api::FindResourceType("jobs"), {job}, false, FakeClock().Now(),
                                  {running, pending, Pod("other", "n", {1}, "Running")});
  EXPECT_THAT(table, HasSubstr("NAME    PHASE     READY   RESTARTS   GPUS   QUEUE   AGE"));
  EXPECT_THAT(table, HasSubstr("train   Running   1/2     1          2x8    a"));
  for (size_t start = 0, end; (end = table.find('\n', start)) != std::string::npos;
       start = end + 1) {
    EXPECT_LE(end - start, 80u) << table;
  }
}

TEST(ResourceTablesTest, QueueTableShowsGpuUseNominalAndBorrowed) {
  // The use is the queue's status, as the scheduler adapter writes it.
  Json queue = {
      {"apiVersion", "strata.dev/v1alpha1"},
      {"kind", "Queue"},
      {"metadata", {{"name", "team-a-cq"}}},
      {"spec",
       {{"cohort", "pool"},
        {"flavors", {{{"name", "h100"}, {"resources", {{{"name", "gpu"}, {"nominal", 8}}}}}}}}},
      {"status",
       {{"flavorsUsage",
         {{{"name", "h100"},
           {"resources", {{{"name", "gpu"}, {"nominal", 8}, {"used", 12}, {"borrowed", 4}}}}}}}}}};
  std::string table = FormatTable(*api::FindResourceType("queues"), {queue}, false,
                                  FakeClock().Now(), {}, /*header=*/false);
  EXPECT_THAT(table, HasSubstr("team-a-cq   pool     12/8               4"));
  EXPECT_EQ(table.find("NAME"), std::string::npos);
}

TEST(ResourceTablesTest, JobDescriptionShowsRestartsCheckpointAndConditions) {
  FakeClock clock;
  std::string checkpoint = FormatRfc3339(clock.Now());
  clock.Advance(std::chrono::minutes(5));
  Json job = {{"metadata", {{"name", "train"}, {"namespace", "team-a"}}},
              {"spec", {{"replicas", 2}, {"maxRestarts", 3}}},
              {"status",
               {{"phase", "Running"},
                {"restartCount", 1},
                {"lastCheckpointTime", checkpoint},
                {"conditions",
                 {{{"type", "Scheduled"},
                   {"status", "True"},
                   {"reason", "Admitted"},
                   {"lastTransitionTime", checkpoint}}}}}}};
  std::string text = FormatDescription(*api::FindResourceType("job"), job, {}, {}, clock.Now());
  EXPECT_THAT(text, HasSubstr("Restarts:         1 of at most 3"));
  EXPECT_THAT(text, HasSubstr("Last checkpoint:  " + checkpoint + " (5m ago)"));
  EXPECT_THAT(text, HasSubstr("Scheduled   True     Admitted   5m"));
  EXPECT_THAT(text, HasSubstr("Events:           <none>"));
}

TEST(ResourceTablesTest, ServiceShowsReplicasPerVersionAndScaleDecisions) {
  FakeClock clock;
  std::string decided = FormatRfc3339(clock.Now());
  clock.Advance(std::chrono::seconds(30));
  Json service = {{"metadata", {{"name", "chat"}, {"namespace", "default"}}},
                  {"spec", {{"model", "llama"}, {"minReplicas", 0}, {"maxReplicas", 4}}},
                  {"status",
                   {{"replicas", 3},
                    {"readyReplicas", 2},
                    {"coldStartSeconds", 7.5},
                    {"coldStartsMeasured", 2},
                    {"versions",
                     {{{"name", "v1"},
                       {"desiredReplicas", 3},
                       {"readyReplicas", 2},
                       {"startingReplicas", 1},
                       {"drainingReplicas", 0},
                       {"updatedReplicas", 3},
                       {"reason", "panic: load 30 over target 8"}}}},
                    {"decisions",
                     {{{"time", decided},
                       {"version", "v1"},
                       {"from", 1},
                       {"to", 3},
                       {"reason", "panic: load 30 over target 8"}}}}}}};
  std::string text =
      FormatDescription(*api::FindResourceType("service"), service, {}, {}, clock.Now());
  EXPECT_THAT(text, HasSubstr("VERSION   DESIRED   READY   STARTING"));
  EXPECT_THAT(text, HasSubstr("Cold start:       7.5 s (mean over 2 ready replica(s))"));
  EXPECT_THAT(text, HasSubstr("30s   v1        1 -> 3     panic: load 30 over target 8"));
  std::string table = FormatTable(*api::FindResourceType("services"), {service}, true, clock.Now());
  EXPECT_THAT(table, HasSubstr("2/3"));
}

TEST(ResourceTablesTest, EightGpusAndLongEventMessagesFitEightyColumns) {
  Json pod = Pod("train-worker-0", "sim-node-0", {7, 0, 1, 2, 3, 5, 4, 6}, "Running");
  std::string pods = FormatTable(*api::FindResourceType("pods"), {pod}, true, FakeClock().Now());
  EXPECT_THAT(pods, HasSubstr("   0-7   "));
  Json event = {{"metadata", {{"namespace", "team-a"}}},
                {"type", "Warning"},
                {"reason", "FailedScheduling"},
                {"involvedObject", {{"kind", "Job"}, {"name", "resnet50-train"}}},
                {"message", "0/4 nodes are available: 4 Insufficient nvidia.com/gpu. " +
                                std::string(80, 'x')}};
  std::string events =
      FormatTable(*api::FindResourceType("events"), {event}, false, FakeClock().Now());
  EXPECT_THAT(events, HasSubstr("0/4 nodes are"));
  EXPECT_THAT(events, HasSubstr("..."));
  for (const std::string& table : {pods, events}) {
    for (size_t start = 0, end; (end = table.find('\n', start)) != std::string::npos;
         start = end + 1) {
      EXPECT_LE(end - start, 80u) << table;
    }
  }
}

}  // namespace
}  // namespace strata::client
