#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/manifest.h"

namespace strata::api {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A namespaced runtime in the shape of Kubeflow's torch-distributed: one trainer step "node"
// whose pod template gives the image, command, resources and env a TrainJob starts from.
constexpr const char* kTrainingRuntime = R"yaml(
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata:
  name: team-torch
  namespace: research
spec:
  mlPolicy:
    numNodes: 2
    torch:
      numProcPerNode: 4
      elasticPolicy: {maxRestarts: 3}
  template:
    spec:
      replicatedJobs:
        - name: node
          template:
            metadata:
              labels:
                trainer.kubeflow.org/trainjob-ancestor-step: trainer
            spec:
              template:
                spec:
                  containers:
                    - name: node
                      image: pytorch/pytorch:2.7.1-cuda12.6-cudnn9-runtime
                      command: [python3, -c, "print('runtime')"]
                      args: [--epochs, "1"]
                      env:
                        - {name: LOG_LEVEL, value: info}
                        - {name: DATA_DIR, value: /data}
                      resources:
                        limits: {cpu: "8", memory: 64Gi, nvidia.com/gpu: 4}
)yaml";

constexpr const char* kClusterRuntime = R"yaml(
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: gpu-auto
spec:
  mlPolicy:
    numNodes: 3
    torch: {numProcPerNode: auto}
  template:
    spec:
      failurePolicy: {maxRestarts: 2}
      replicatedJobs:
        - name: node
          template:
            spec:
              template:
                metadata:
                  annotations:
                    kueue.x-k8s.io/podset-required-topology: topology.strata.dev/rack
                spec:
                  priorityClassName: critical
                  containers:
                    - name: node
                      image: python:3.12
                      resources:
                        limits: {nvidia.com/gpu: 2}
)yaml";

std::string TrainJob(const std::string& spec, const std::string& extra_metadata = "") {
  return "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata:\n  name: ft\n"
         "  namespace: research\n" +
         extra_metadata + "spec:\n" + spec;
}

Result<std::vector<Object>> Decode(const std::string& text,
                                   std::vector<std::string>* warnings = nullptr) {
  return DecodeManifests({{"t.yaml", text}}, warnings);
}

Job DecodeJob(const std::string& text) {
  Result<std::vector<Object>> r = Decode(text);
  EXPECT_TRUE(r.has_value()) << r.error().message();
  if (!r || r->size() != 1 || r->front().As<Job>() == nullptr) return Job{};
  return *r->front().As<Job>();
}

std::string ErrorOf(const std::string& text) {
  Result<std::vector<Object>> r = Decode(text);
  return r.has_value() ? "(decoded)" : r.error().message();
}

TEST(TrainJobTest, ResolvesAgainstATrainingRuntimeOfItsNamespace) {
  Job job = DecodeJob(std::string(kTrainingRuntime) + "---\n" +
                      TrainJob("  runtimeRef: {name: team-torch, kind: TrainingRuntime}\n"));
  EXPECT_EQ(job.metadata.name, "ft");
  EXPECT_EQ(job.metadata.namespace_name, "research");
  EXPECT_EQ(job.spec.replicas, 2);
  EXPECT_EQ(job.spec.proc_per_node, 4);
  EXPECT_EQ(job.spec.max_restarts, 3);
  EXPECT_EQ(job.spec.resources.gpu, Quantity::FromUnits(4));
  EXPECT_EQ(job.spec.resources.cpu, Quantity::FromUnits(8));
  EXPECT_EQ(job.spec.template_.image, "pytorch/pytorch:2.7.1-cuda12.6-cudnn9-runtime");
  EXPECT_EQ(job.spec.template_.command,
            (std::vector<std::string>{"python3", "-c", "print('runtime')"}));
  EXPECT_EQ(job.spec.template_.args, (std::vector<std::string>{"--epochs", "1"}));
  ASSERT_EQ(job.spec.template_.env.size(), 2u);
  EXPECT_EQ(job.spec.template_.env[0].value, "info");
}

TEST(TrainJobTest, ResolvesAgainstAClusterTrainingRuntimeByDefaultKind) {
  Job job = DecodeJob(std::string(kClusterRuntime) + "---\n" +
                      TrainJob("  runtimeRef: {name: gpu-auto}\n"
                               "  trainer: {command: [sh, -c, 'exit 0']}\n"));
  EXPECT_EQ(job.spec.replicas, 3);
  EXPECT_EQ(job.spec.proc_per_node, 2);  // "auto": the runtime's 2 GPUs per node
  EXPECT_EQ(job.spec.max_restarts, 2);   // the JobSet's failurePolicy.maxRestarts
  EXPECT_EQ(job.spec.priority, 1000);
  EXPECT_EQ(job.spec.topology.level, "topology.strata.dev/rack");
  EXPECT_EQ(job.spec.template_.image, "python:3.12");
  EXPECT_EQ(job.spec.template_.command, (std::vector<std::string>{"sh", "-c", "exit 0"}));
}

TEST(TrainJobTest, TrainerFieldsOverrideTheRuntimes) {
  Job job = DecodeJob(std::string(kTrainingRuntime) + "---\n" +
                      TrainJob(R"yaml(  runtimeRef: {name: team-torch, kind: TrainingRuntime}
  trainer:
    numNodes: 1
    numProcPerNode: 2
    image: python:3.12
    command: [python3, train.py]
    args: []
    env:
      - {name: LOG_LEVEL, value: debug}
      - {name: SEED, value: "7"}
    resourcesPerNode:
      limits: {nvidia.com/gpu: 2}
)yaml"));
  EXPECT_EQ(job.spec.replicas, 1);
  EXPECT_EQ(job.spec.proc_per_node, 2);
  EXPECT_EQ(job.spec.template_.image, "python:3.12");
  EXPECT_EQ(job.spec.template_.command, (std::vector<std::string>{"python3", "train.py"}));
  EXPECT_TRUE(job.spec.template_.args.empty());
  // The resources are replaced as a whole: the runtime's cpu and memory go with them.
  EXPECT_EQ(job.spec.resources.gpu, Quantity::FromUnits(2));
  EXPECT_EQ(job.spec.resources.cpu, Quantity());
  // Env merges by name: the TrainJob's value wins, the runtime's others stay, in order.
  ASSERT_EQ(job.spec.template_.env.size(), 3u);
  EXPECT_EQ(job.spec.template_.env[0].name, "LOG_LEVEL");
  EXPECT_EQ(job.spec.template_.env[0].value, "debug");
  EXPECT_EQ(job.spec.template_.env[1].name, "DATA_DIR");
  EXPECT_EQ(job.spec.template_.env[2].name, "SEED");
  // The runtime's restarts stay, since a TrainJob cannot set them.
  EXPECT_EQ(job.spec.max_restarts, 3);
}

TEST(TrainJobTest, AutoProcessesFollowTheTrainJobsResources) {
  // The runtime says "auto"; the TrainJob's resources decide what auto means.
  Job job = DecodeJob(std::string(kClusterRuntime) + "---\n" +
                      TrainJob("  runtimeRef: {name: gpu-auto}\n"
                               "  trainer:\n    command: [sh, -c, 'exit 0']\n"
                               "    resourcesPerNode: {limits: {nvidia.com/gpu: 8}}\n"));
  EXPECT_EQ(job.spec.proc_per_node, 8);
  Job on_cpus =
      DecodeJob(TrainJob("  runtimeRef: {name: torch-distributed}\n"
                         "  trainer:\n    command: [sh, -c, 'exit 0']\n    numProcPerNode: cpu\n"
                         "    resourcesPerNode: {limits: {cpu: \"3\"}}\n"));
  EXPECT_EQ(on_cpus.spec.proc_per_node, 3);
}

TEST(TrainJobTest, TheBuiltInTorchDistributedNeedsNoManifest) {
  Job job =
      DecodeJob(TrainJob("  runtimeRef: {name: torch-distributed}\n"
                         "  trainer:\n    command: [python3, -c, pass]\n    numNodes: 2\n"
                         "    resourcesPerNode: {limits: {nvidia.com/gpu: 4}}\n"));
  EXPECT_EQ(job.spec.replicas, 2);
  EXPECT_EQ(job.spec.proc_per_node, 4);
  EXPECT_EQ(job.spec.max_restarts, 0);
}

TEST(TrainJobTest, AnAppliedTorchDistributedReplacesTheBuiltIn) {
  std::string runtime = std::string(kClusterRuntime);
  runtime.replace(runtime.find("gpu-auto"), 8, "torch-distributed");
  Job job = DecodeJob(runtime + "---\n" +
                      TrainJob("  runtimeRef: {name: torch-distributed}\n"
                               "  trainer: {command: [sh, -c, 'exit 0']}\n"));
  EXPECT_EQ(job.spec.replicas, 3);
  EXPECT_EQ(job.spec.template_.image, "python:3.12");
}

TEST(TrainJobTest, ARuntimeAddsNoObjectAndServesEveryJobThatNamesIt) {
  Result<std::vector<Object>> alone = Decode(kClusterRuntime);
  ASSERT_TRUE(alone.has_value()) << alone.error().message();
  EXPECT_TRUE(alone->empty());
  std::string second_job = TrainJob(
      "  runtimeRef: {name: gpu-auto}\n"
      "  trainer: {command: [sh, -c, 'exit 0']}\n");
  second_job.replace(second_job.find("name: ft"), 8, "name: ft2");
  Result<std::vector<Object>> both = Decode(
      TrainJob("  runtimeRef: {name: gpu-auto}\n  trainer: {command: [sh, -c, 'exit 0']}\n") +
      "---\n" + kClusterRuntime + "---\n" + second_job);
  ASSERT_TRUE(both.has_value()) << both.error().message();
  ASSERT_EQ(both->size(), 2u);
  EXPECT_EQ(both->at(0).name(), "ft");
  EXPECT_EQ(both->at(1).name(), "ft2");
}

TEST(TrainJobTest, SuspendIsHeldByTheQueueOnly) {
  Job job =
      DecodeJob(TrainJob("  suspend: true\n  runtimeRef: {name: torch-distributed}\n"
                         "  trainer: {command: [sh, -c, 'exit 0']}\n",
                         "  labels: {kueue.x-k8s.io/queue-name: team-queue}\n"));
  EXPECT_EQ(job.spec.queue, "team-queue");
  EXPECT_EQ(job.metadata.labels.count("kueue.x-k8s.io/queue-name"), 0u);
  EXPECT_THAT(ErrorOf(TrainJob("  suspend: true\n  runtimeRef: {name: torch-distributed}\n"
                               "  trainer: {command: [sh, -c, 'exit 0']}\n")),
              HasSubstr("spec.suspend: strata holds a TrainJob back only in a queue: add the "
                        "kueue.x-k8s.io/queue-name label"));
  // suspend: false needs no queue.
  DecodeJob(
      TrainJob("  suspend: false\n  runtimeRef: {name: torch-distributed}\n"
               "  trainer: {command: [sh, -c, 'exit 0']}\n"));
}

TEST(TrainJobTest, ActiveDeadlineBecomesTheRuntimeLimit) {
  Job job =
      DecodeJob(TrainJob("  activeDeadlineSeconds: 600\n"
                         "  runtimeRef: {name: torch-distributed}\n"
                         "  trainer: {command: [sh, -c, 'exit 0']}\n"));
  EXPECT_EQ(job.spec.runtime_limit, std::chrono::seconds(600));
  EXPECT_THAT(ErrorOf(TrainJob("  activeDeadlineSeconds: 0\n"
                               "  runtimeRef: {name: torch-distributed}\n"
                               "  trainer: {command: [sh, -c, 'exit 0']}\n")),
              HasSubstr("spec.activeDeadlineSeconds: must be at least 1"));
}

TEST(TrainJobTest, AMissingRuntimeIsNamedWithHowToFixIt) {
  EXPECT_EQ(ErrorOf(TrainJob("  runtimeRef: {name: team-torch, kind: TrainingRuntime}\n"
                             "  trainer: {command: [sh]}\n")),
            "t.yaml: document 1 (TrainJob ft): spec.runtimeRef.name: TrainingRuntime "
            "\"team-torch\" is not among these manifests; apply the runtime together with the "
            "TrainJob (strata has the ClusterTrainingRuntime torch-distributed built in)");
  // The built-in is a ClusterTrainingRuntime: a TrainingRuntime of that name must be applied.
  EXPECT_THAT(ErrorOf(TrainJob("  runtimeRef: {name: torch-distributed, kind: TrainingRuntime}\n"
                               "  trainer: {command: [sh]}\n")),
              HasSubstr("spec.runtimeRef.name: TrainingRuntime \"torch-distributed\" is not"));
  // A ClusterTrainingRuntime does not answer for a TrainingRuntime of the same name.
  std::string cluster = std::string(kClusterRuntime);
  EXPECT_THAT(ErrorOf(cluster + "---\n" +
                      TrainJob("  runtimeRef: {name: gpu-auto, kind: TrainingRuntime}\n"
                               "  trainer: {command: [sh]}\n")),
              HasSubstr("spec.runtimeRef.name: TrainingRuntime \"gpu-auto\" is not among"));
}

TEST(TrainJobTest, ATrainingRuntimeOfAnotherNamespaceIsNotUsed) {
  std::string job = TrainJob("  runtimeRef: {name: team-torch, kind: TrainingRuntime}\n");
  job.replace(job.find("namespace: research"), 19, "namespace: other");
  EXPECT_THAT(ErrorOf(std::string(kTrainingRuntime) + "---\n" + job),
              HasSubstr("spec.runtimeRef.name: TrainingRuntime \"team-torch\" is not among these "
                        "manifests in namespace \"other\" (one is in namespace \"research\"; a "
                        "TrainJob uses a TrainingRuntime of its own namespace)"));
}

TEST(TrainJobTest, ACommandMustComeFromTheJobOrTheRuntime) {
  EXPECT_EQ(ErrorOf(std::string(kClusterRuntime) + "---\n" +
                    TrainJob("  runtimeRef: {name: gpu-auto}\n")),
            "t.yaml: document 2 (TrainJob ft): spec.trainer.command: required: neither the "
            "TrainJob nor ClusterTrainingRuntime \"gpu-auto\" gives a command, and strata cannot "
            "read an image's entrypoint");
  EXPECT_THAT(ErrorOf(TrainJob("  runtimeRef: {name: torch-distributed}\n")),
              HasSubstr("spec.trainer.command: required: neither the TrainJob nor "
                        "ClusterTrainingRuntime \"torch-distributed\" gives a command"));
}

TEST(TrainJobTest, TrainJobFieldsStrataDoesNotHonourAreNamed) {
  const std::string ref = "  runtimeRef: {name: torch-distributed}\n  trainer: {command: [sh]}\n";
  EXPECT_THAT(ErrorOf(TrainJob(ref + "  initializer: {dataset: {storageUri: hf://x}}\n")),
              HasSubstr("spec.initializer: "));
  EXPECT_THAT(ErrorOf(TrainJob(ref + "  runtimePatches: [{manager: me}]\n")),
              HasSubstr("spec.runtimePatches: "));
  EXPECT_THAT(ErrorOf(TrainJob(ref + "  podTemplateOverrides: []\n")),
              HasSubstr("spec.podTemplateOverrides: "));
  EXPECT_THAT(ErrorOf(TrainJob(ref + "  managedBy: kueue.x-k8s.io/multikueue\n")),
              HasSubstr("spec.managedBy: strata manages every TrainJob it admits"));
  DecodeJob(TrainJob(ref + "  managedBy: trainer.kubeflow.org/trainjob-controller\n"));
  EXPECT_THAT(ErrorOf(TrainJob("  runtimeRef: {name: torch-distributed}\n"
                               "  trainer: {command: [sh], numNodes: 0}\n")),
              HasSubstr("spec.trainer.numNodes: must be at least 1"));
  EXPECT_THAT(ErrorOf(TrainJob("  runtimeRef: {name: torch-distributed}\n"
                               "  trainer: {command: [sh], numProcPerNode: 0}\n")),
              HasSubstr("spec.trainer.numProcPerNode: must be at least 1"));
  EXPECT_THAT(ErrorOf(TrainJob("  runtimeRef: {name: torch-distributed}\n"
                               "  trainer: {command: [sh], env: [{name: RANK, value: '1'}]}\n")),
              HasSubstr("spec.trainer.env[0].name: "));
}

TEST(TrainJobTest, DecodedAloneItHasOnlyTheBuiltInRuntime) {
  nlohmann::json job = {{"apiVersion", "trainer.kubeflow.org/v1alpha1"},
                        {"kind", "TrainJob"},
                        {"metadata", {{"name", "ft"}}},
                        {"spec",
                         {{"runtimeRef", {{"name", "torch-distributed"}}},
                          {"trainer", {{"command", {"sh", "-c", "exit 0"}}, {"numNodes", 2}}}}}};
  Result<Object> built_in = DecodeObject(job);
  ASSERT_TRUE(built_in.has_value()) << built_in.error().message();
  EXPECT_EQ(built_in->As<Job>()->spec.replicas, 2);
  job["spec"]["runtimeRef"]["name"] = "gpu-auto";
  Result<Object> other = DecodeObject(job);
  ASSERT_FALSE(other.has_value());
  EXPECT_THAT(other.error().message(),
              HasSubstr("spec.runtimeRef.name: a TrainJob decoded on its own has only the "
                        "built-in torch-distributed runtime"));
}

// A runtime whose spec is `spec` (indented two spaces).
std::string Runtime(const std::string& spec) {
  return "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: ClusterTrainingRuntime\n"
         "metadata: {name: rt}\nspec:\n" +
         spec;
}

// A runtime whose one replicated job is `job` (indented eight spaces, after "- ").
std::string RuntimeWithJob(const std::string& job, const std::string& before = "") {
  return Runtime("  template:\n    spec:\n" + before + "      replicatedJobs:\n        - " + job);
}

constexpr const char* kNodeJob = R"yaml(name: node
          template:
            spec:
              template:
                spec:
                  containers: [{name: node, image: python:3.12, command: [sh, -c, 'exit 0']}]
)yaml";

TEST(TrainingRuntimeTest, FieldsStrataDoesNotHonourAreNamed) {
  EXPECT_THAT(ErrorOf(Runtime("  mlPolicy: {mpi: {numProcPerNode: 1}}\n")),
              HasSubstr("spec.mlPolicy.mpi: "));
  EXPECT_THAT(ErrorOf(Runtime("  mlPolicy: {numNodes: 0}\n")),
              HasSubstr("spec.mlPolicy.numNodes: must be at least 1"));
  EXPECT_THAT(ErrorOf(Runtime("  mlPolicy: {torch: {numProcPerNode: lots}}\n")),
              HasSubstr("spec.mlPolicy.torch.numProcPerNode: expected a positive number"));
  EXPECT_THAT(ErrorOf(Runtime("  mlPolicy: {torch: {elasticPolicy: {minNodes: 1}}}\n")),
              HasSubstr("spec.mlPolicy.torch.elasticPolicy.minNodes: "));
  EXPECT_THAT(ErrorOf(Runtime("  podGroupPolicy: {volcano: {networkTopology: {mode: hard}}}\n")),
              HasSubstr("spec.podGroupPolicy.volcano.networkTopology: "));
  EXPECT_THAT(ErrorOf(RuntimeWithJob(kNodeJob, "      successPolicy: {operator: All}\n")),
              HasSubstr("spec.template.spec.successPolicy: "));
  EXPECT_THAT(ErrorOf(RuntimeWithJob(kNodeJob, "      failurePolicy: {rules: []}\n")),
              HasSubstr("spec.template.spec.failurePolicy.rules: "));
  EXPECT_THAT(ErrorOf(Runtime("  mlPolicy: {torch: {elasticPolicy: {maxRestarts: 1}}}\n"
                              "  template:\n    spec:\n      failurePolicy: {maxRestarts: 2}\n"
                              "      replicatedJobs:\n        - " +
                              std::string(kNodeJob))),
              HasSubstr("spec.template.spec.failurePolicy.maxRestarts: contradicts "
                        "spec.mlPolicy.torch.elasticPolicy.maxRestarts"));
}

TEST(TrainingRuntimeTest, InitializerStepsRunAsRolesBeforeTheTrainer) {
  std::string node = kNodeJob;
  node.insert(node.find("          template:"),
              "          dependsOn: [{name: model-initializer, status: Complete}]\n");
  const std::string runtime = RuntimeWithJob(R"yaml(name: model-initializer
          template:
            metadata:
              labels: {trainer.kubeflow.org/trainjob-ancestor-step: model-initializer}
            spec:
              template:
                spec:
                  containers:
                    - name: init
                      image: python:3.12
                      command: [python3, -c, "print('model fetched')"]
                      resources: {requests: {cpu: "2"}}
        - )yaml" + node);
  Job job = DecodeJob(runtime + R"yaml(---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: tune}
spec:
  runtimeRef: {name: rt}
  trainer: {numNodes: 2}
)yaml");
  ASSERT_EQ(job.spec.roles.size(), 2u);
  EXPECT_EQ(job.spec.roles[0].name, "node");
  EXPECT_EQ(job.spec.roles[0].replicas, 2);
  EXPECT_EQ(job.spec.roles[0].template_.command, (std::vector<std::string>{"sh", "-c", "exit 0"}));
  EXPECT_EQ(job.spec.roles[0].depends_on,
            (std::vector<RoleDependency>{{"model-initializer", "Complete"}}));
  EXPECT_EQ(job.spec.roles[1].name, "model-initializer");
  EXPECT_EQ(job.spec.roles[1].replicas, 1);
  EXPECT_EQ(job.spec.roles[1].resources.cpu, Quantity::FromUnits(2));
  EXPECT_EQ(job.spec.success_policy.roles, std::vector<std::string>{"node"});
}

TEST(TrainingRuntimeTest, TheRuntimesStepsAreRules) {
  std::string initializer = R"yaml(name: dataset-initializer
          template:
            metadata:
              labels: {trainer.kubeflow.org/trainjob-ancestor-step: dataset-initializer}
            spec:
              template:
                spec:
                  containers: [{name: init, image: x, command: [sh]}]
        - )yaml" + std::string(kNodeJob);
  std::string always = initializer;
  always.insert(always.find("                  containers"),
                "                  restartPolicy: Always\n");
  EXPECT_THAT(ErrorOf(RuntimeWithJob(always)),
              HasSubstr("spec.template.spec.replicatedJobs[0].template.spec.template.spec."
                        "restartPolicy: Always is not for an initializer"));
  std::string depends = std::string(kNodeJob);
  depends.insert(depends.find("          template:"), "          dependsOn: [{name: x}]\n");
  EXPECT_THAT(ErrorOf(RuntimeWithJob(depends)),
              HasSubstr("spec.template.spec.replicatedJobs[0].dependsOn[0].status: "));
  std::string replicas = std::string(kNodeJob);
  replicas.insert(replicas.find("          template:"), "          replicas: 2\n");
  EXPECT_THAT(ErrorOf(RuntimeWithJob(replicas)),
              HasSubstr("spec.template.spec.replicatedJobs[0].replicas: must be 1"));
  std::string parallel = std::string(kNodeJob);
  parallel.insert(parallel.find("              template:"), "              parallelism: 2\n");
  EXPECT_THAT(ErrorOf(RuntimeWithJob(parallel)),
              HasSubstr("spec.template.spec.replicatedJobs[0].template.spec.parallelism: "));
  std::string volume = std::string(kNodeJob);
  volume.insert(volume.find("                  containers:"),
                "                  volumes: [{name: d, persistentVolumeClaim: {claimName: d}}]\n");
  EXPECT_THAT(ErrorOf(RuntimeWithJob(volume)),
              HasSubstr("spec.template.spec.replicatedJobs[0].template.spec.template.spec."
                        "volumes[0].persistentVolumeClaim: "));
}

TEST(TrainingRuntimeTest, IgnoredFieldsAreWarnedOf) {
  std::string labelled = std::string(kNodeJob);
  labelled.insert(labelled.find("            spec:"),
                  "            metadata:\n              labels: {team: nlp}\n");
  std::vector<std::string> warnings;
  Result<std::vector<Object>> r =
      Decode(RuntimeWithJob(labelled, "      network: {enableDNSHostnames: true}\n") +
                 "  podGroupPolicy: {coscheduling: {scheduleTimeoutSeconds: 120}}\n",
             &warnings);
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_THAT(
      warnings,
      ElementsAre(HasSubstr("spec.podGroupPolicy.coscheduling.scheduleTimeoutSeconds: ignored: "),
                  HasSubstr("spec.template.spec.network: ignored: "),
                  HasSubstr("spec.template.spec.replicatedJobs[0].template.metadata.labels[team]: "
                            "ignored: ")));
}

TEST(TrainingRuntimeTest, TwoRuntimesOfOneNameAreAnError) {
  EXPECT_THAT(ErrorOf(std::string(kClusterRuntime) + "---\n" + kClusterRuntime),
              HasSubstr("document 2 (ClusterTrainingRuntime gpu-auto): metadata.name: a second "
                        "ClusterTrainingRuntime \"gpu-auto\" among these manifests"));
}

TEST(TrainingRuntimeTest, AClusterRuntimeHasNoNamespace) {
  EXPECT_THAT(ErrorOf("apiVersion: trainer.kubeflow.org/v1alpha1\nkind: ClusterTrainingRuntime\n"
                      "metadata: {name: rt, namespace: default}\nspec: {}\n"),
              HasSubstr("metadata.namespace"));
}

}  // namespace
}  // namespace strata::api
