#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/manifest.h"
#include "api/ray_start.h"

namespace strata::api {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

// KubeRay's quick-start shape: a CPU head with the dashboard open, and one GPU worker group.
constexpr const char* kGpuCluster = R"yaml(
apiVersion: ray.io/v1
kind: RayCluster
metadata:
  name: raycluster-gpu
  labels:
    kueue.x-k8s.io/queue-name: user-queue
spec:
  rayVersion: "2.9.0"
  headGroupSpec:
    rayStartParams:
      dashboard-host: "0.0.0.0"
    template:
      spec:
        containers:
          - name: ray-head
            image: rayproject/ray:2.9.0
            imagePullPolicy: IfNotPresent
            ports:
              - {containerPort: 6379, name: gcs-server}
              - {containerPort: 8265, name: dashboard}
            resources:
              limits: {cpu: "1", memory: 2Gi}
              requests: {cpu: "1", memory: 2Gi}
  workerGroupSpecs:
    - groupName: gpu-group
      replicas: 2
      minReplicas: 1
      maxReplicas: 4
      rayStartParams: {}
      template:
        spec:
          containers:
            - name: ray-worker
              image: rayproject/ray:2.9.0
              lifecycle:
                preStop:
                  exec: {command: ["/bin/sh", "-c", "ray stop"]}
              resources:
                limits: {cpu: "2", memory: 4Gi, nvidia.com/gpu: 1}
)yaml";

Result<Job> DecodeJob(const std::string& text, std::vector<std::string>* warnings = nullptr) {
  Result<std::vector<Object>> r = DecodeManifests({{"ray.yaml", text}}, warnings);
  if (!r.has_value()) return tl::unexpected(r.error());
  if (r->size() != 1 || r->front().As<Job>() == nullptr) {
    return tl::unexpected(InternalError("not one Job"));
  }
  return *r->front().As<Job>();
}

std::string Joined(const std::vector<std::string>& lines) {
  std::string all;
  for (const std::string& l : lines) all += l + "\n";
  return all;
}

TEST(RayClusterTest, HeadAndWorkerGroupsBecomeOneGangStartedWithRayStart) {
  std::vector<std::string> warnings;
  Result<Job> job = DecodeJob(kGpuCluster, &warnings);
  ASSERT_TRUE(job.has_value()) << job.error().message();
  EXPECT_EQ(job->metadata.name, "raycluster-gpu");
  EXPECT_EQ(job->spec.queue, "user-queue");
  EXPECT_EQ(job->spec.replicas, 3);
  EXPECT_EQ(job->spec.proc_per_node, 1);
  EXPECT_EQ(job->spec.resources.gpu, Quantity::FromUnits(1));
  EXPECT_EQ(job->spec.resources.cpu, Quantity::FromUnits(2));
  EXPECT_EQ(job->spec.template_.image, "rayproject/ray:2.9.0");
  ASSERT_EQ(job->spec.template_.command.size(), 3u);
  EXPECT_EQ(job->spec.template_.command[0], "/bin/bash");
  EXPECT_EQ(job->spec.template_.command[1], "-c");
  EXPECT_EQ(job->spec.template_.command[2],
            "if [ \"$GROUP_RANK\" -lt 1 ]; then\n"
            "  export RAY_ADDRESS=\"$MASTER_ADDR:$MASTER_PORT\"\n"
            "  exec ray start --head --port=$MASTER_PORT --dashboard-host=0.0.0.0 "
            "--memory=2147483648 --num-cpus=1 --block\n"
            "elif [ \"$GROUP_RANK\" -lt 3 ]; then\n"
            "  export RAY_ADDRESS=\"$MASTER_ADDR:$MASTER_PORT\"\n"
            "  exec ray start --address=$MASTER_ADDR:$MASTER_PORT --memory=4294967296 "
            "--num-cpus=2 --num-gpus=1 --block\n"
            "else\n"
            "  echo \"strata: no Ray group has rank $GROUP_RANK\" >&2\n"
            "  exit 1\n"
            "fi\n");
  // The head reserves what the largest group asks for, and is told so; the pull policy and the
  // preStop hook mean nothing to local processes.
  const std::string all = Joined(warnings);
  EXPECT_EQ(warnings.size(), 3u) << all;
  EXPECT_THAT(all, HasSubstr("spec.headGroupSpec.template.spec.containers[0].resources: every pod "
                             "of a strata gang reserves the same resources: this group's pods "
                             "reserve cpu 2, memory 4Gi and 1 GPU(s)"));
  EXPECT_THAT(all, HasSubstr("containers[0].imagePullPolicy: ignored"));
  EXPECT_THAT(all, HasSubstr("spec.workerGroupSpecs[0].template.spec.containers[0].lifecycle: "
                             "ignored"));
}

TEST(RayStartTest, ParametersBecomeFlagsInKeyOrderWithTheRequestAsDefaults) {
  RayGroup head;
  head.start_params = {{"port", "6380"},
                       {"num-cpus", "0"},
                       {"disable-usage-stats", "true"},
                       {"no-monitor", "false"},
                       {"resources", "{\"TPU\": 4}"}};
  head.resources.cpu = Quantity::FromMilli(1500);
  head.resources.gpu = Quantity::FromUnits(2);
  EXPECT_EQ(RayHeadPort(head), "6380");
  EXPECT_EQ(RayStartCommand(head, true, RayHeadPort(head)),
            "ray start --head --disable-usage-stats --num-cpus=0 --num-gpus=2 --port=6380 "
            "'--resources={\"TPU\": 4}' --block");
  RayGroup worker;
  worker.resources.cpu = Quantity::FromMilli(1500);
  EXPECT_EQ(RayStartCommand(worker, false, "6380"),
            "ray start --address=$MASTER_ADDR:6380 --num-cpus=2 --block");
  EXPECT_EQ(BashWord("it's"), "'it'\\''s'");
  EXPECT_EQ(BashWord(""), "''");
}

TEST(RayClusterTest, TheContainersCommandRunsBeforeRayStartOrInsteadOfItAsKubeRaySays) {
  const std::string cluster = R"(
apiVersion: ray.io/v1
kind: RayCluster
metadata:
  name: rc
  %s
spec:
  headGroupSpec:
    rayStartParams: {}
    template:
      spec:
        containers:
          - name: head
            image: ray
            command: ["echo 123"]
            args: ["456"]
            env: [{name: GREETING, value: "hello world"}]
            workingDir: /srv
)";
  auto with = [&cluster](const std::string& annotations) {
    std::string text = cluster;
    text.replace(text.find("%s"), 2, annotations);
    return text;
  };
  Result<Job> joined = DecodeJob(with(""));
  ASSERT_TRUE(joined.has_value()) << joined.error().message();
  EXPECT_EQ(joined->spec.template_.command[2],
            "if [ \"$GROUP_RANK\" -lt 1 ]; then\n"
            "  export RAY_ADDRESS=\"$MASTER_ADDR:$MASTER_PORT\"\n"
            "  export GREETING='hello world'\n"
            "  cd /srv || exit 1\n"
            "  echo 123 456 && exec ray start --head --port=$MASTER_PORT --block\n"
            "else\n"
            "  echo \"strata: no Ray group has rank $GROUP_RANK\" >&2\n"
            "  exit 1\n"
            "fi\n");
  Result<Job> own = DecodeJob(with("annotations: {ray.io/overwrite-container-cmd: \"true\"}"));
  ASSERT_TRUE(own.has_value()) << own.error().message();
  EXPECT_THAT(own->spec.template_.command[2],
              HasSubstr("  export KUBERAY_GEN_RAY_START_CMD='ray start --head "
                        "--port=$MASTER_PORT --block'\n"
                        "  exec 'echo 123' 456\n"));
}

TEST(RayJobTest, TheHeadRunsTheEntrypointOnceRayIsUpAndTheGangEndsWithIt) {
  std::vector<std::string> warnings;
  Result<Job> job = DecodeJob(R"(
apiVersion: ray.io/v1
kind: RayJob
metadata: {name: rayjob-sample}
spec:
  entrypoint: python /home/ray/samples/sample_code.py
  shutdownAfterJobFinishes: true
  backoffLimit: 2
  activeDeadlineSeconds: 900
  submissionMode: K8sJobMode
  rayClusterSpec:
    rayVersion: "2.9.0"
    headGroupSpec:
      rayStartParams: {}
      template:
        spec:
          containers: [{name: ray-head, image: ray, resources: {limits: {cpu: "1"}}}]
    workerGroupSpecs:
      - groupName: small-group
        replicas: 1
        rayStartParams: {}
        template:
          spec:
            containers: [{name: ray-worker, image: ray, resources: {limits: {cpu: "1"}}}]
)",
                              &warnings);
  ASSERT_TRUE(job.has_value()) << job.error().message();
  EXPECT_TRUE(warnings.empty()) << Joined(warnings);
  // Two roles of one template: the head, whose success is the job's, and the workers.
  ASSERT_EQ(job->spec.roles.size(), 2u);
  EXPECT_EQ(job->spec.roles[0].name, "head");
  EXPECT_EQ(job->spec.roles[0].replicas, 1);
  EXPECT_EQ(job->spec.roles[1].name, "worker");
  EXPECT_EQ(job->spec.roles[1].replicas, 1);
  EXPECT_EQ(job->spec.roles[1].template_, job->spec.roles[0].template_);
  EXPECT_EQ(job->spec.max_restarts, 2);
  EXPECT_EQ(job->spec.runtime_limit, std::chrono::seconds(900));
  EXPECT_EQ(job->spec.clean_pod_policy, "All");
  EXPECT_EQ(job->spec.success_policy.roles, std::vector<std::string>{"head"});
  EXPECT_EQ(job->spec.roles[0].template_.command[2],
            "ray_wait_head() {\n"
            "  for _ in $(seq 600); do\n"
            "    (exec 3<>\"/dev/tcp/$MASTER_ADDR/$MASTER_PORT\") 2>/dev/null && return 0\n"
            "    kill -0 \"$ray_pid\" 2>/dev/null || break\n"
            "    sleep 1\n"
            "  done\n"
            "  echo \"strata: the Ray head did not open $MASTER_ADDR:$MASTER_PORT\" >&2\n"
            "  return 1\n"
            "}\n"
            "if [ \"$GROUP_RANK\" -lt 1 ]; then\n"
            "  export RAY_ADDRESS=\"$MASTER_ADDR:$MASTER_PORT\"\n"
            "  (exec ray start --head --port=$MASTER_PORT --num-cpus=1 --block) &\n"
            "  ray_pid=$!\n"
            "  ray_wait_head || exit 1\n"
            "  bash -c 'python /home/ray/samples/sample_code.py'\n"
            "  status=$?\n"
            "  kill \"$ray_pid\" 2>/dev/null\n"
            "  exit \"$status\"\n"
            "elif [ \"$GROUP_RANK\" -lt 2 ]; then\n"
            "  export RAY_ADDRESS=\"$MASTER_ADDR:$MASTER_PORT\"\n"
            "  exec ray start --address=$MASTER_ADDR:$MASTER_PORT --num-cpus=1 --block\n"
            "else\n"
            "  echo \"strata: no Ray group has rank $GROUP_RANK\" >&2\n"
            "  exit 1\n"
            "fi\n");
}

TEST(RayJobTest, KeepingTheClusterIsWarnedOfAndItsPodsAreKept) {
  std::vector<std::string> warnings;
  Result<Job> job = DecodeJob(R"(
apiVersion: ray.io/v1
kind: RayJob
metadata: {name: keep}
spec:
  entrypoint: echo hi
  rayClusterSpec:
    headGroupSpec:
      rayStartParams: {}
      template: {spec: {containers: [{name: h, image: ray}]}}
)",
                              &warnings);
  ASSERT_TRUE(job.has_value()) << job.error().message();
  EXPECT_EQ(job->spec.max_restarts, 0);
  EXPECT_EQ(job->spec.clean_pod_policy, "None");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0], HasSubstr("spec.shutdownAfterJobFinishes: false (the default): strata "
                                     "ends a RayJob with its entrypoint"));
}

std::string ErrorOf(const std::string& kind, const std::string& spec) {
  Result<std::vector<Object>> r =
      DecodeManifests({{"r.yaml", "apiVersion: ray.io/v1\nkind: " + kind +
                                      "\nmetadata: {name: r}\nspec:\n" + spec}});
  return r.has_value() ? "<decoded>" : r.error().message();
}

constexpr const char* kHead = R"(
  headGroupSpec:
    rayStartParams: {}
    template: {spec: {containers: [{name: h, image: ray}]}}
)";

TEST(RayClusterTest, WhatStrataCannotHonourIsAnErrorNamingTheField) {
  EXPECT_EQ(ErrorOf("RayCluster", "  enableInTreeAutoscaling: true" + std::string(kHead)),
            "r.yaml: document 1 (RayCluster r): spec.enableInTreeAutoscaling: strata does not run "
            "the Ray autoscaler: it starts each worker group's replicas; leave it out or set "
            "false");
  EXPECT_THAT(ErrorOf("RayCluster", "  autoscalerOptions: {}" + std::string(kHead)),
              HasSubstr("spec.autoscalerOptions: not supported by strata"));
  EXPECT_THAT(ErrorOf("RayCluster", "  suspend: true" + std::string(kHead)),
              HasSubstr("spec.suspend: strata holds a RayCluster back only in a queue"));
  EXPECT_THAT(ErrorOf("RayCluster", R"(
  headGroupSpec:
    rayStartParams: {address: "10.0.0.1:6379", port: "http"}
    template: {spec: {containers: [{name: h, image: ray}]}}
)"),
              AllOf(HasSubstr("spec.headGroupSpec.rayStartParams[address]: set by strata"),
                    HasSubstr("spec.headGroupSpec.rayStartParams[port]: must be a port "
                              "number, got \"http\"")));
  const std::string worker = std::string(kHead) + R"(
  workerGroupSpecs:
    - groupName: w
      replicas: 1
      rayStartParams: {port: "6380"}
      template:
        spec:
          tolerations: [{key: gpu, operator: Exists}]
          containers: [{name: w, image: other}]
)";
  EXPECT_THAT(ErrorOf("RayCluster", worker),
              AllOf(HasSubstr("spec.workerGroupSpecs[0].rayStartParams[port]: only the "
                              "head's port"),
                    HasSubstr("spec.workerGroupSpecs[0].template.spec.containers[0].image: "
                              "differs: strata places a Ray cluster's pods as one gang"),
                    HasSubstr("spec.workerGroupSpecs[0].template.spec.tolerations: differ")));
  EXPECT_THAT(ErrorOf("RayCluster", std::string(kHead) + R"(
  workerGroupSpecs:
    - groupName: w
      minReplicas: 3
      maxReplicas: 2
      template: {spec: {containers: [{name: w, image: ray}]}}
)"),
              HasSubstr("spec.workerGroupSpecs[0].minReplicas: must not be above maxReplicas"));
  EXPECT_THAT(ErrorOf("RayCluster", "  managedBy: kueue.x-k8s.io/multikueue" + std::string(kHead)),
              HasSubstr("spec.managedBy: strata manages every Ray object it admits"));
}

TEST(RayClusterTest, RayAlwaysBlocksInThePod) {
  std::vector<std::string> warnings;
  Result<Job> job = DecodeJob(R"(
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: r}
spec:
  headGroupSpec:
    rayStartParams: {block: "false"}
    template: {spec: {containers: [{name: h, image: ray}]}}
)",
                              &warnings);
  ASSERT_TRUE(job.has_value()) << job.error().message();
  EXPECT_THAT(job->spec.template_.command[2],
              HasSubstr("exec ray start --head --port=$MASTER_PORT --block\n"));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0], HasSubstr("spec.headGroupSpec.rayStartParams[block]: ignored"));
}

TEST(RayClusterTest, OwnCommandsNeedACommandInEveryGroup) {
  Result<std::vector<Object>> r = DecodeManifests({{"r.yaml", R"(
apiVersion: ray.io/v1
kind: RayCluster
metadata:
  name: r
  annotations: {ray.io/overwrite-container-cmd: "true"}
spec:
  headGroupSpec:
    template: {spec: {containers: [{name: h, image: ray}]}}
)"}});
  ASSERT_FALSE(r.has_value());
  EXPECT_THAT(r.error().message(),
              HasSubstr("spec.headGroupSpec.template.spec.containers[0].command: required"));
}

TEST(RayClusterTest, ReplicasStayWithinMinAndMaxAndHostsMultiplyThem) {
  Result<Job> job = DecodeJob(std::string(R"(
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: r}
spec:)") + kHead + R"(
  workerGroupSpecs:
    - groupName: at-least-two
      replicas: 1
      minReplicas: 2
      template: {spec: {containers: [{name: w, image: ray}]}}
    - groupName: multi-host
      replicas: 2
      numOfHosts: 2
      template: {spec: {containers: [{name: w, image: ray}]}}
    - groupName: none
      template: {spec: {containers: [{name: w, image: ray}]}}
)");
  ASSERT_TRUE(job.has_value()) << job.error().message();
  EXPECT_EQ(job->spec.replicas, 1 + 2 + 4);
  EXPECT_THAT(job->spec.template_.command[2], HasSubstr("elif [ \"$GROUP_RANK\" -lt 7 ]"));
  EXPECT_THAT(job->spec.template_.command[2], Not(HasSubstr("-lt 8")));
}

TEST(RayJobTest, WhatStrataCannotHonourIsAnErrorNamingTheField) {
  auto spec = [](const std::string& fields) {
    return fields + R"(
  rayClusterSpec:
    headGroupSpec:
      rayStartParams: {}
      template: {spec: {containers: [{name: h, image: ray}]}}
)";
  };
  EXPECT_THAT(ErrorOf("RayJob", spec("  entrypoint: x\n  runtimeEnvYAML: |\n    pip: [emoji]")),
              HasSubstr("spec.runtimeEnvYAML: not supported by strata: strata does not build Ray "
                        "runtime environments"));
  EXPECT_THAT(ErrorOf("RayJob", spec("  entrypoint: x\n  submissionMode: InteractiveMode")),
              HasSubstr("spec.submissionMode: strata runs the entrypoint itself"));
  EXPECT_THAT(ErrorOf("RayJob", spec("  entrypoint: \"\"")),
              HasSubstr("spec.entrypoint: must not be empty"));
  EXPECT_THAT(ErrorOf("RayJob", spec("  entrypoint: x\n  entrypointNumGpus: 1")),
              HasSubstr("spec.entrypointNumGpus: not supported by strata"));
  EXPECT_THAT(ErrorOf("RayJob", "  entrypoint: x\n  clusterSelector: {ray.io/cluster: c}\n"),
              HasSubstr("spec.clusterSelector: not supported by strata"));
  EXPECT_THAT(ErrorOf("RayJob", spec("  entrypoint: x\n  suspend: true")),
              HasSubstr("spec.suspend: strata holds a RayJob back only in a queue"));
  EXPECT_THAT(ErrorOf("RayJob", R"(  entrypoint: x
  rayClusterSpec:
    enableInTreeAutoscaling: true
    headGroupSpec:
      template: {spec: {containers: [{name: h, image: ray}]}}
)"),
              HasSubstr("spec.rayClusterSpec.enableInTreeAutoscaling: strata does not run the Ray "
                        "autoscaler"));
}

}  // namespace
}  // namespace strata::api
