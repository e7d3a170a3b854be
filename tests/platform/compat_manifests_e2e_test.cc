// The manifests of testdata/manifests/compat/ (Kueue's, Kubernetes', Kubeflow Trainer's,
// JobSet's, Volcano's and LeaderWorkerSet's own shapes) applied with the real CLI to a live
// `strata up`, one file at a time as a user would: each is accepted with the warnings its header
// declares, every Job they hold runs to Succeeded, and every Service (from a Deployment,
// StatefulSet or LeaderWorkerSet) gets all its replicas ready. KubeRay's and KServe's shapes go
// through `apply --dry-run`, RayJobs through a live `strata up` to their entrypoint's result,
// LLMInferenceServices to serving, and the Inference Extension's pools to serving their vLLM
// engines' served model names through the gateway.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <thread>

#include "client/api_client.h"
#include "node/test_support.h"
#include "strata_process.h"

namespace strata::platform_test {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

int DeclaredWarnings(const fs::path& file) {
  std::ifstream in(file);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::smatch m;
  return std::regex_search(text, m, std::regex("# warnings: ([0-9]+)")) ? std::stoi(m[1]) : -1;
}

int CountLines(const std::string& text, const std::string& prefix) {
  int n = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) n += line.rfind(prefix, 0) == 0 ? 1 : 0;
  return n;
}

// The files of testdata/manifests/compat/PROJECT for each of `projects`, in name order.
std::vector<fs::path> CompatFiles(std::initializer_list<const char*> projects) {
  std::vector<fs::path> files;
  for (const char* project : projects) {
    for (const fs::directory_entry& e :
         fs::directory_iterator(fs::path(SourceDir()) / "testdata/manifests/compat" / project)) {
      files.push_back(e.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Applies each of `files` with the real CLI to `up`, one at a time as a user would: each is
// accepted with the warnings its header declares.
void ApplyEach(const std::vector<fs::path>& files, UpProcess& up) {
  for (const fs::path& file : files) {
    CommandResult applied = RunStrata({"apply", "-f", file.string(), "--server", up.url()});
    ASSERT_EQ(applied.exit_code, 0) << file << "\n" << applied.err;
    EXPECT_EQ(CountLines(applied.err, "Warning: "), DeclaredWarnings(file)) << file << "\n"
                                                                            << applied.err;
  }
}

TEST(CompatManifestsE2eTest, EveryFileAppliesWithItsWarningsAndEveryJobSucceeds) {
  node::testing::TempDir data;
  UpProcess up;
  ASSERT_TRUE(up.Start({"--data-dir", data.path(), "--listen", "127.0.0.1:0",
                        "--nvml-library=/nonexistent/libnvidia-ml.so.1", "--simulate",
                        "4x8:H100-80GB,racks=2"}))
      << up.output();
  const std::vector<fs::path> files =
      CompatFiles({"kueue", "batch", "trainer", "jobset", "volcano"});
  ASSERT_GE(files.size(), 27u);
  ASSERT_NO_FATAL_FAILURE(ApplyEach(files, up));

  auto client = client::ApiClient::Create(up.url(), AdminTokenFor(up.url()));
  ASSERT_TRUE(client);
  // Every Job of every file, however it was named (several use generateName), ends Succeeded.
  Json jobs;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(180);
  std::string pending;
  while (std::chrono::steady_clock::now() < deadline) {
    auto listed = (*client)->Get("/apis/strata.dev/v1alpha1/jobs");
    ASSERT_TRUE(listed) << listed.error().ToString();
    jobs = (*listed)["items"];
    pending.clear();
    for (const Json& job : jobs) {
      std::string phase = job.value(Json::json_pointer("/status/phase"), std::string());
      if (phase == "Failed") FAIL() << job.dump(2);
      if (phase != "Succeeded") pending += job["metadata"].value("name", "") + " (" + phase + ") ";
    }
    if (pending.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  EXPECT_EQ(pending, "") << "still not Succeeded after 180 s";
  EXPECT_EQ(jobs.size(), 49u);
  // A Kueue WorkloadPriorityClass applied with its Jobs gave them their priority.
  auto high = (*client)->Get("/apis/strata.dev/v1alpha1/namespaces/default/jobs/pr-high-priority");
  ASSERT_TRUE(high) << high.error().ToString();
  EXPECT_EQ((*high)["spec"].value("priority", 0), 10000) << high->dump();
  CommandResult logs = RunStrata({"logs", "pod", "indexed-job-worker-2", "--server", up.url()});
  EXPECT_EQ(logs.out, "item 2\n") << logs.err;
  // A TrainJob without a trainer runs its runtime's command; restarts come from the runtime
  // (a JobSet failurePolicy, a torch elasticPolicy), a JobSet's failurePolicy and a Volcano
  // Job's RestartJob policy: each of the four jobs checked below failed once, then succeeded.
  CommandResult hello = RunStrata({"logs", "pod", "tj-hello-worker-0", "--server", up.url()});
  EXPECT_THAT(hello.out, ::testing::StartsWith("torch-distributed: node 0 of 1\n")) << hello.err;
  // Volcano's env plugin: each pod of a one-task job reads its index in VK_TASK_INDEX.
  CommandResult task = RunStrata({"logs", "pod", "vc-job-plugin-worker-2", "--server", up.url()});
  EXPECT_EQ(task.out, "task 2\n") << task.err;
  // A JobSet's rendezvous set by hand: strata's MASTER_ADDR, MASTER_PORT and RANK stood in.
  CommandResult met = RunStrata({"logs", "pod", "js-meet-worker-0", "--server", up.url()});
  EXPECT_EQ(met.out, "rank 0 met rank 1\n") << met.err;
  for (const Json& job : jobs) {
    std::string name = job["metadata"].value("name", "");
    if (name == "tj-restart" || name == "tj-elastic" || name == "js-failurepolicy" ||
        name == "vc-restart") {
      EXPECT_EQ(job.value(Json::json_pointer("/status/restartCount"), -1), 1) << job.dump(2);
    }
  }
}

// Where a job stands: its phase and restart count ("" and -1 while it is not there).
std::pair<std::string, int> JobState(client::ApiClient& client, const std::string& name) {
  auto job = client.Get("/apis/strata.dev/v1alpha1/namespaces/default/jobs/" + name);
  if (!job) return {"", -1};
  return {job->value(Json::json_pointer("/status/phase"), std::string()),
          job->value(Json::json_pointer("/status/restartCount"), -1)};
}

// The job's state once it has ended (Succeeded or Failed), or as it stands after `timeout`.
std::pair<std::string, int> WaitForJobEnd(client::ApiClient& client, const std::string& name,
                                          std::chrono::seconds timeout,
                                          std::chrono::milliseconds poll) {
  std::pair<std::string, int> state;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    state = JobState(client, name);
    if (state.first == "Succeeded" || state.first == "Failed") break;
    std::this_thread::sleep_for(poll);
  }
  return state;
}

// A JobSet of three replicated jobs of their own templates, in order: an initializer that must
// Complete, two workers, and a driver that starts once the workers are Ready and alone decides
// success. Each leaves a mark in `marks`; a pod that starts before what it waits for fails (the
// initializer marks only after 2 s, so a worker or driver started with it finds no mark), and
// the driver waits (bounded) for the workers' marks, which they leave first thing.
std::string OrderedJobSet(const std::string& marks) {
  return R"yaml(apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: ordered
spec:
  successPolicy:
    operator: All
    targetReplicatedJobs: [driver]
  replicatedJobs:
    - name: initializer
      template:
        spec:
          backoffLimit: 0
          template:
            spec:
              restartPolicy: Never
              containers:
                - name: init
                  command: [python3, -c, "import os, time; time.sleep(2); open(os.environ['MARKS'] + '/init', 'w').close()"]
                  env: [{
  name:
    MARKS, value : ")yaml" +
         marks + R"yaml("}]
    - name: workers
      dependsOn: [{name: initializer, status: Complete}]
      template:
        spec:
          parallelism: 2
          completions: 2
          backoffLimit: 0
          template:
            spec:
              restartPolicy: Never
              containers:
                - name: worker
                  command:
                    - python3
                    - -c
                    - |
                      import os, sys, time
                      marks = os.environ['MARKS']
                      if not os.path.exists(marks + '/init'):
                          sys.exit('worker started before the initializer completed')
                      open(marks + '/worker-' + os.environ['JOB_COMPLETION_INDEX'], 'w').close()
                      time.sleep(600)
                  resources: {limits: {nvidia.com/gpu: 8}}
                  env: [{name: MARKS, value: ")yaml" +
         marks + R"yaml("}]
    - name: driver
      dependsOn: [{name: workers, status: Ready}]
      template:
        spec:
          backoffLimit: 0
          template:
            spec:
              restartPolicy: Never
              containers:
                - name: driver
                  command:
                    - python3
                    - -c
                    - |
                      import os, sys, time
                      marks = os.environ['MARKS']
                      if not os.path.exists(marks + '/init'):
                          sys.exit('driver started before the initializer completed')
                      for _ in range(200):
                          if all(os.path.exists(f'{marks}/worker-{i}') for i in range(2)):
                              print('driver saw the initializer and 2 workers', flush=True)
                              sys.exit(0)
                          time.sleep(0.1)
                      sys.exit('no workers')
                  env: [{name: MARKS, value: ")yaml" +
         marks + R"yaml("}]
)yaml";
}

TEST(CompatManifestsE2eTest, AJobSetsRolesStartInDependencyOrderAndItsDriverDecidesSuccess) {
  node::testing::TempDir data;
  node::testing::TempDir marks;
  // Pods may run as an unprivileged user: the marks directory is theirs too.
  fs::permissions(marks.path(), fs::perms::all);
  UpProcess up;
  ASSERT_TRUE(
      up.Start({"--data-dir", data.path(), "--listen", "127.0.0.1:0",
                "--nvml-library=/nonexistent/libnvidia-ml.so.1", "--simulate", "2x8:H100-80GB"}))
      << up.output();
  const fs::path manifest = fs::path(data.path()) / "ordered.yaml";
  std::ofstream(manifest) << OrderedJobSet(marks.path());
  CommandResult applied = RunStrata({"apply", "-f", manifest.string(), "--server", up.url()});
  ASSERT_EQ(applied.exit_code, 0) << applied.err;
  auto client = client::ApiClient::Create(up.url(), AdminTokenFor(up.url()));
  ASSERT_TRUE(client);
  std::pair<std::string, int> state =
      WaitForJobEnd(**client, "ordered", std::chrono::seconds(90), std::chrono::milliseconds(300));
  auto pods = (*client)->Get("/api/v1/namespaces/default/pods");
  ASSERT_TRUE(pods) << pods.error().ToString();
  ASSERT_EQ(state.first, "Succeeded") << pods->dump(2);
  // Ranks across roles: the initializer 0, the workers 1 and 2, the driver 3.
  CommandResult driver = RunStrata({"logs", "pod", "ordered-worker-3", "--server", up.url()});
  EXPECT_EQ(driver.out, "driver saw the initializer and 2 workers\n") << driver.err;
  EXPECT_TRUE(fs::exists(fs::path(marks.path()) / "worker-1"));
  // The workers, still running when the driver succeeded, were stopped.
  for (const Json& pod : (*pods)["items"]) {
    const std::string name = pod["metadata"].value("name", "");
    if (name == "ordered-worker-1" || name == "ordered-worker-2") {
      EXPECT_EQ(pod.value(Json::json_pointer("/metadata/annotations/strata.dev~1stop-requested"),
                          std::string()),
                "JobFinished")
          << pod.dump(2);
    }
  }
}

// KubeRay's and KServe's shapes through `strata apply --dry-run`, each with the warnings its
// header declares; then RayJobs through a live `strata up`. `ray` is not installed here, so the
// live RayJobs are those whose pods run their own commands (ray.io/overwrite-container-cmd; the
// `ray start` commands strata generates otherwise are checked word for word in
// src/api/decode_ray_test.cc): each job ends with its entrypoint's exit status.
TEST(CompatManifestsE2eTest, RayAndKServeShapesDryRunAndARayJobEndsWithItsEntrypoint) {
  int files = 0;
  for (const char* project : {"ray", "kserve"}) {
    for (const fs::directory_entry& e :
         fs::directory_iterator(fs::path(SourceDir()) / "testdata/manifests/compat" / project)) {
      ++files;
      CommandResult applied = RunStrata({"apply", "--dry-run", "-f", e.path().string()});
      ASSERT_EQ(applied.exit_code, 0) << e.path() << "\n" << applied.err;
      EXPECT_EQ(CountLines(applied.err, "Warning: "), DeclaredWarnings(e.path()))
          << e.path() << "\n"
          << applied.err;
      EXPECT_THAT(applied.out, ::testing::HasSubstr("kind: ")) << e.path();
    }
  }
  EXPECT_GE(files, 18);

  node::testing::TempDir data;
  UpProcess up;
  ASSERT_TRUE(
      up.Start({"--data-dir", data.path(), "--listen", "127.0.0.1:0",
                "--nvml-library=/nonexistent/libnvidia-ml.so.1", "--simulate", "2x8:H100-80GB"}))
      << up.output();
  const fs::path ray = fs::path(SourceDir()) / "testdata/manifests/compat/ray";
  for (const char* file : {"11-rayjob-own-commands.yaml", "12-rayjob-failing-entrypoint.yaml"}) {
    CommandResult applied = RunStrata({"apply", "-f", (ray / file).string(), "--server", up.url()});
    ASSERT_EQ(applied.exit_code, 0) << file << "\n" << applied.err;
  }
  auto client = client::ApiClient::Create(up.url(), AdminTokenFor(up.url()));
  ASSERT_TRUE(client);
  std::pair<std::string, int> passing, failing;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (std::chrono::steady_clock::now() < deadline) {
    passing = JobState(**client, "rayjob-own-commands");
    failing = JobState(**client, "rayjob-failing");
    if (passing.first == "Succeeded" && failing.first == "Failed") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  // The entrypoint ran on the head (rank 0) once its port was open, with the head's address; the
  // workers left when the head closed its port, so the gang succeeded.
  EXPECT_EQ(passing.first, "Succeeded");
  CommandResult logs =
      RunStrata({"logs", "pod", "rayjob-own-commands-worker-0", "--server", up.url()});
  EXPECT_THAT(logs.out, ::testing::MatchesRegex(
                            "(.|\n)*entrypoint ran with RAY_ADDRESS [^ :]+:[0-9]+\n(.|\n)*"))
      << logs.err;
  // The failing entrypoint's status failed the job, after the one retry backoffLimit allows.
  EXPECT_EQ(failing.first, "Failed");
  EXPECT_EQ(failing.second, 1);
}

// KServe's LLMInferenceServices through a live `strata up` to serving: one on a single GPU, and
// one whose replica spans two 8-GPU nodes (a worker, tensor 8 x pipeline 2). On simulated GPUs
// strata runs its engine simulator in vLLM's place; a replica counts as ready once every pod's
// engine passed its readiness probe.
TEST(CompatManifestsE2eTest, LLMInferenceServicesServe) {
  node::testing::TempDir data;
  UpProcess up;
  ASSERT_TRUE(up.Start({"--data-dir", data.path(), "--listen", "127.0.0.1:0",
                        "--nvml-library=/nonexistent/libnvidia-ml.so.1", "--simulate",
                        "3x8:H100-80GB", "--gateway-listen", "127.0.0.1:0"}))
      << up.output();
  const fs::path kserve = fs::path(SourceDir()) / "testdata/manifests/compat/kserve";
  for (const char* file : {"01-llmisvc-single-gpu.yaml", "03-llmisvc-multi-node-pipeline.yaml"}) {
    CommandResult applied =
        RunStrata({"apply", "-f", (kserve / file).string(), "--server", up.url()});
    ASSERT_EQ(applied.exit_code, 0) << file << "\n" << applied.err;
  }
  auto client = client::ApiClient::Create(up.url(), AdminTokenFor(up.url()));
  ASSERT_TRUE(client);
  auto ready = [&client](const std::string& name) {
    auto service = (*client)->Get("/apis/strata.dev/v1alpha1/namespaces/default/services/" + name);
    return service ? service->value(Json::json_pointer("/status/readyReplicas"), 0) : 0;
  };
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
  while (std::chrono::steady_clock::now() < deadline &&
         (ready("qwen2-7b-instruct") < 1 || ready("llama-70b-multinode") < 1)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  EXPECT_EQ(ready("qwen2-7b-instruct"), 1);
  EXPECT_EQ(ready("llama-70b-multinode"), 1);
  auto pods = (*client)->Get("/api/v1/namespaces/default/pods");
  ASSERT_TRUE(pods) << pods.error().ToString();
  std::set<std::string> nodes;
  for (const Json& pod : (*pods)["items"]) {
    if (pod["metadata"].value("name", "").starts_with("llama-70b-multinode-")) {
      nodes.insert(pod["spec"].value("nodeName", ""));
    }
  }
  EXPECT_EQ(nodes.size(), 2u) << pods->dump(2);
}

// A RayJob of KubeRay's usual shape (no container commands: strata starts the pods with the
// `ray start` KubeRay would) run with real Ray, installed by `make py-deps` into
// ~/.cache/strata-ray: the head and the worker form one Ray cluster, the entrypoint runs on it
// once the head is up, and the job succeeds with it. Pods find `ray` on the PATH `strata up`
// passes them; as root, they run as root (the venv is under root's home, which nobody cannot
// read), the manifest asking for it and `strata up` allowing it.
TEST(CompatManifestsE2eTest, ARayJobRunsOnRealRay) {
  const char* home = std::getenv("HOME");
  const fs::path ray_bin =
      fs::path(home != nullptr ? home : "/nonexistent") / ".cache/strata-ray/bin";
  if (!fs::exists(ray_bin / "ray")) {
    GTEST_SKIP() << "no Ray in " << ray_bin << ": `make py-deps` installs it";
  }
  const bool root = geteuid() == 0;
  // A Ray pod template whose keys start at `indent`.
  auto container = [root](const std::string& indent) {
    std::string text = "\n" + indent + "spec:\n" + indent + "  containers:\n" + indent +
                       "    - name: ray\n" + indent + "      image: rayproject/ray:2.60.0\n" +
                       indent + "      resources: {limits: {cpu: \"1\", memory: 1Gi}}";
    if (root) text += "\n" + indent + "      securityContext: {runAsUser: 0}";
    return text;
  };
  node::testing::TempDir data;
  const std::string manifest = data.path() + "/rayjob.yaml";
  std::ofstream(manifest) << R"(apiVersion: ray.io/v1
kind: RayJob
metadata: {name: rayjob-real}
spec:
  shutdownAfterJobFinishes: false
  entrypoint: |
    python - <<'PY'
    import time
    import ray
    ray.init()
    deadline = time.time() + 60
    while len([n for n in ray.nodes() if n["Alive"]]) < 2 and time.time() < deadline:
        time.sleep(0.5)
    @ray.remote
    def square(x):
        return x * x
    print("alive nodes", len([n for n in ray.nodes() if n["Alive"]]))
    print("sum of squares", sum(ray.get([square.remote(i) for i in range(4)])))
    PY
  rayClusterSpec:
    headGroupSpec:
      rayStartParams: {disable-usage-stats: "true", include-dashboard: "false",
                       object-store-memory: "100000000"}
      template:)" + container("        ") +
                                 R"(
    workerGroupSpecs:
      - groupName: workers
        replicas: 1
        rayStartParams: {disable-usage-stats: "true", object-store-memory: "100000000"}
        template:)" + container("          ") +
                                 "\n";

  const std::string path = std::getenv("PATH") != nullptr ? std::getenv("PATH") : "/usr/bin:/bin";
  setenv("PATH", (ray_bin.string() + ":" + path).c_str(), 1);
  UpProcess up;
  std::vector<std::string> args = {"--data-dir",
                                   data.path(),
                                   "--listen",
                                   "127.0.0.1:0",
                                   "--nvml-library=/nonexistent/libnvidia-ml.so.1",
                                   "--simulate",
                                   "2x8:H100-80GB"};
  if (root) args.push_back("--allow-root-pods");
  const bool started = up.Start(args);
  setenv("PATH", path.c_str(), 1);
  ASSERT_TRUE(started) << up.output();
  CommandResult applied = RunStrata({"apply", "-f", manifest, "--server", up.url()});
  ASSERT_EQ(applied.exit_code, 0) << applied.err;
  auto client = client::ApiClient::Create(up.url(), AdminTokenFor(up.url()));
  ASSERT_TRUE(client);
  std::pair<std::string, int> state = WaitForJobEnd(
      **client, "rayjob-real", std::chrono::seconds(120), std::chrono::milliseconds(500));
  CommandResult logs = RunStrata({"logs", "pod", "rayjob-real-worker-0", "--server", up.url()});
  EXPECT_EQ(state.first, "Succeeded") << logs.out << logs.err;
  EXPECT_THAT(logs.out, ::testing::HasSubstr("alive nodes 2\nsum of squares 14\n")) << logs.err;
}

// Deployments, StatefulSets and LeaderWorkerSets (testdata/manifests/compat/apps and lws) become
// Services: every file applies with the warnings its header declares, and every Service ends
// with all its replicas ready (engine-sim stands in for the engines of pods on simulated GPUs)
// or, without GPUs, running their own commands; its pods under the names and with the labels
// their kind gives them.
TEST(CompatManifestsE2eTest, ServingKindsApplyAndEveryReplicaRuns) {
  node::testing::TempDir data;
  UpProcess up;
  ASSERT_TRUE(up.Start({"--data-dir", data.path(), "--listen", "127.0.0.1:0",
                        "--nvml-library=/nonexistent/libnvidia-ml.so.1", "--simulate",
                        "4x8:H100-80GB,racks=2", "--sim-startup-delay", "1"}))
      << up.output();
  const std::vector<fs::path> files = CompatFiles({"apps", "lws"});
  ASSERT_GE(files.size(), 15u);
  ASSERT_NO_FATAL_FAILURE(ApplyEach(files, up));

  auto client = client::ApiClient::Create(up.url(), AdminTokenFor(up.url()));
  ASSERT_TRUE(client);
  // A Service whose pods have GPUs is ready when every replica is (engine-sim answers /health);
  // one without GPUs runs its own command, which serves nothing: ready when every pod runs.
  Json services;
  std::map<std::string, Json> by_name;
  std::string waiting;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (std::chrono::steady_clock::now() < deadline) {
    auto listed = (*client)->Get("/apis/strata.dev/v1alpha1/services");
    ASSERT_TRUE(listed) << listed.error().ToString();
    services = (*listed)["items"];
    auto pods = (*client)->Get("/api/v1/namespaces/default/pods");
    ASSERT_TRUE(pods) << pods.error().ToString();
    by_name.clear();
    std::map<std::string, int64_t> running;
    for (const Json& pod : (*pods)["items"]) {
      by_name[pod["metadata"].value("name", "")] = pod;
      if (pod.value(Json::json_pointer("/status/phase"), std::string()) == "Running") {
        ++running[pod["metadata"]["labels"].value("strata.dev/service", "")];
      }
    }
    waiting.clear();
    for (const Json& service : services) {
      const std::string name = service["metadata"].value("name", "");
      const Json& spec = service["spec"];
      int64_t want = spec.value("minReplicas", 0);
      int64_t have = spec.contains("resources") && spec["resources"].contains("gpu")
                         ? service.value(Json::json_pointer("/status/versions/0/readyReplicas"), 0)
                         : running[name] / spec.value("nodesPerReplica", 1);
      if (have != want) {
        waiting += name + " (" + std::to_string(have) + "/" + std::to_string(want) + ") ";
      }
    }
    if (waiting.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  EXPECT_EQ(waiting, "") << "replicas still not ready (or running) after 120 s";
  EXPECT_EQ(services.size(), 17u);

  // Pods without GPUs ran their own commands, with the port and LWS's environment (a running
  // pod's first line may reach its log a moment later).
  auto log_of = [&](const std::string& pod, const std::string& pattern) {
    CommandResult logs;
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    do {
      logs = RunStrata({"logs", "pod", pod, "--server", up.url()});
      if (std::regex_match(logs.out, std::regex(pattern))) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    } while (std::chrono::steady_clock::now() < until);
    return logs.out + logs.err;
  };
  EXPECT_THAT(log_of("web-frontend-v1-0", "serving on [0-9]+\n"),
              ::testing::MatchesRegex("serving on [0-9]+\n"));
  EXPECT_EQ(log_of("lws-sample-v1-0-0", "leader of 3\n"), "leader of 3\n");
  EXPECT_THAT(log_of("lws-sample-v1-0-2", "worker 2 of [0-9a-z.:-]+\n"),
              ::testing::MatchesRegex("worker 2 of [0-9a-z.:-]+\n"));
  // A StatefulSet's pods are <name>-<ordinal>; a Deployment's carry its template's labels.
  for (const char* name : {"web-0", "web-1", "shard-0", "shard-1", "llm-0", "single-0"}) {
    EXPECT_EQ(by_name.count(name), 1u) << name;
  }
  ASSERT_EQ(by_name.count("web-frontend-v1-1"), 1u);
  EXPECT_EQ(by_name["web-frontend-v1-1"]["metadata"]["labels"].value("app", ""), "web-frontend");
  // A LeaderWorkerSet's group spans its pods, labelled as LWS labels them.
  ASSERT_EQ(by_name.count("lws-sample-v1-1-2"), 1u);
  const Json& labels = by_name["lws-sample-v1-1-2"]["metadata"]["labels"];
  EXPECT_EQ(labels.value("leaderworkerset.sigs.k8s.io/name", ""), "lws-sample");
  EXPECT_EQ(labels.value("leaderworkerset.sigs.k8s.io/group-index", ""), "1");
  EXPECT_EQ(labels.value("leaderworkerset.sigs.k8s.io/worker-index", ""), "2");
  // Exclusive placement: the group's two pods share a rack.
  std::set<std::string> racks;
  for (const char* name : {"lws-exclusive-v1-0-0", "lws-exclusive-v1-0-1"}) {
    ASSERT_EQ(by_name.count(name), 1u) << name;
    std::string node = by_name[name]["spec"].value("nodeName", "");
    auto found = (*client)->Get("/api/v1/nodes/" + node);
    ASSERT_TRUE(found) << node << ": " << found.error().ToString();
    racks.insert((*found)["metadata"]["labels"].value("topology.strata.dev/rack", ""));
  }
  EXPECT_EQ(racks.size(), 1u);
}

}  // namespace
}  // namespace strata::platform_test

namespace strata::platform_test {
namespace {

// The Gateway API Inference Extension's shapes (testdata/manifests/compat/gaie): each file goes
// through `apply --dry-run` and then a live `strata up` with the warnings its header declares;
// every pooled Service gets its replicas ready (engine-sim in vLLM's place) and answers through
// the gateway under the model name its vLLM command serves, which is what GAIE's clients send.
TEST(CompatManifestsE2eTest, InferencePoolsServeTheirServedModelNames) {
  const std::vector<fs::path> files = CompatFiles({"gaie"});
  ASSERT_GE(files.size(), 5u);
  for (const fs::path& file : files) {
    CommandResult applied = RunStrata({"apply", "--dry-run", "-f", file.string()});
    ASSERT_EQ(applied.exit_code, 0) << file << "\n" << applied.err;
    EXPECT_EQ(CountLines(applied.err, "Warning: "), DeclaredWarnings(file)) << file << "\n"
                                                                            << applied.err;
  }
  node::testing::TempDir data;
  UpProcess up;
  ASSERT_TRUE(
      up.Start({"--data-dir", data.path(), "--listen", "127.0.0.1:0",
                "--nvml-library=/nonexistent/libnvidia-ml.so.1", "--simulate", "4x8:H100-80GB",
                "--sim-startup-delay", "1", "--gateway-listen", "127.0.0.1:0"}))
      << up.output();
  ASSERT_NO_FATAL_FAILURE(ApplyEach(files, up));
  std::optional<std::string> gateway_address = up.WaitForLine("gateway listening on http://");
  ASSERT_TRUE(gateway_address) << up.output();
  auto client = client::ApiClient::Create(up.url(), AdminTokenFor(up.url()));
  auto gateway = client::ApiClient::Create(
      "http://" + gateway_address->substr(0, gateway_address->find_first_of(" \t")), "");
  ASSERT_TRUE(client && gateway);

  // Service (namespace/name) -> the model its clients call.
  const std::map<std::string, std::string> served = {
      {"default/vllm-llama3-8b-instruct", "meta-llama/Llama-3.1-8B-Instruct"},
      {"llm-d/qwen-decode", "qwen3-0.6b"},
      {"default/mistral", "mistral-7b"},
      {"default/llama-70b", "meta-llama/Llama-3.3-70B-Instruct"},
      {"default/llama-1b", "meta-llama/Llama-3.2-1B-Instruct"},
      {"default/deepseek", "deepseek-v3"}};
  std::string waiting;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  do {
    waiting.clear();
    for (const auto& [key, model] : served) {
      const size_t slash = key.find('/');
      auto service = (*client)->Get("/apis/strata.dev/v1alpha1/namespaces/" + key.substr(0, slash) +
                                    "/services/" + key.substr(slash + 1));
      ASSERT_TRUE(service) << key << ": " << service.error().ToString();
      EXPECT_EQ((*service)["spec"].value("model", ""), model) << key;
      if (service->value(Json::json_pointer("/status/readyReplicas"), 0) <
          (*service)["spec"].value("minReplicas", 1)) {
        waiting += key + " ";
      }
    }
    if (!waiting.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(500));
  } while (!waiting.empty() && std::chrono::steady_clock::now() < deadline);
  ASSERT_EQ(waiting, "") << "replicas still not ready after 120 s";

  for (const auto& [key, model] : served) {
    const std::string body =
        Json{{"model", model},
             {"max_tokens", 4},
             {"messages", Json::array({{{"role", "user"}, {"content", "Hello"}}})}}
            .dump();
    // The gateway routes a Service once its ready replicas reach the routing table: retry,
    // bounded, while the model is not yet known there.
    std::optional<Json> answer;
    std::string last_error;
    for (int i = 0; i < 60 && !answer; ++i) {
      auto called = (*gateway)->Call("POST", "/v1/chat/completions", body, "application/json");
      if (called) {
        answer = std::move(*called);
      } else {
        last_error = called.error().ToString();
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
      }
    }
    ASSERT_TRUE(answer) << model << ": " << last_error;
    EXPECT_EQ(answer->value("model", ""), model) << answer->dump();
  }
}

}  // namespace
}  // namespace strata::platform_test
