#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/job_roles.h"
#include "api/manifest.h"

namespace strata::api {
namespace {

using ::testing::HasSubstr;

// JobSet's exclusive-placement shape, with one child Job: four pods in one rack, in a queue.
constexpr const char* kTrainingJobSet = R"yaml(
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: trainer
  namespace: team-a
  labels:
    kueue.x-k8s.io/queue-name: user-queue
  annotations:
    alpha.jobset.sigs.k8s.io/exclusive-topology: topology.strata.dev/rack
spec:
  suspend: true
  failurePolicy:
    maxRestarts: 3
  successPolicy:
    operator: All
  startupPolicy:
    startupPolicyOrder: AnyOrder
  replicatedJobs:
    - name: workers
      replicas: 1
      template:
        spec:
          parallelism: 4
          completions: 4
          backoffLimit: 0
          completionMode: Indexed
          activeDeadlineSeconds: 600
          template:
            spec:
              restartPolicy: Never
              priorityClassName: critical
              containers:
                - name: w
                  image: python:3.11
                  command: [python3, -c, "print(1)"]
                  resources:
                    limits: {nvidia.com/gpu: 2}
)yaml";

TEST(JobSetTest, OneReplicatedJobBecomesOneGangWithTheSetsPolicies) {
  std::vector<std::string> warnings;
  Result<std::vector<Object>> r = DecodeManifests({{"js.yaml", kTrainingJobSet}}, &warnings);
  ASSERT_TRUE(r.has_value()) << r.error().message();
  ASSERT_EQ(r->size(), 1u);
  const Job& job = *r->front().As<Job>();
  EXPECT_EQ(job.metadata.name, "trainer");
  EXPECT_EQ(job.metadata.namespace_name, "team-a");
  EXPECT_EQ(job.metadata.annotations.count("alpha.jobset.sigs.k8s.io/exclusive-topology"), 0u);
  EXPECT_EQ(job.spec.queue, "user-queue");
  EXPECT_EQ(job.spec.replicas, 4);
  EXPECT_EQ(job.spec.max_restarts, 3);
  EXPECT_EQ(job.spec.runtime_limit, std::chrono::seconds(600));
  EXPECT_EQ(job.spec.priority, 1000);
  EXPECT_EQ(job.spec.topology.level, "topology.strata.dev/rack");
  EXPECT_EQ(job.spec.topology.mode, "Required");
  EXPECT_EQ(job.spec.resources.gpu, Quantity::FromUnits(2));
  EXPECT_EQ(job.spec.template_.command, (std::vector<std::string>{"python3", "-c", "print(1)"}));
  EXPECT_TRUE(warnings.empty());
}

TEST(JobSetTest, ReplicatedJobsAreRolesAndChildRetriesJoinTheRestartBudget) {
  std::vector<std::string> warnings;
  Result<std::vector<Object>> r = DecodeManifests({{"js.yaml", R"(
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: sleep}
spec:
  failurePolicy: {maxRestarts: 1}
  network: {enableDNSHostnames: true, subdomain: sleep}
  startupPolicy: {startupPolicyOrder: InOrder}
  replicatedJobs:
    - name: a
      replicas: 2
      template:
        spec:
          parallelism: 2
          completions: 2
          backoffLimit: 2
          template:
            spec:
              restartPolicy: Never
              containers: [{name: c, command: [sleep, "1"]}]
    - name: b
      template:
        spec:
          parallelism: 3
          completions: 3
          backoffLimit: 2
          template:
            spec:
              restartPolicy: Never
              containers: [{name: c, command: [sleep, "1"]}]
)"}},
                                                  &warnings);
  ASSERT_TRUE(r.has_value()) << r.error().message();
  const Job& job = *r->front().As<Job>();
  ASSERT_EQ(job.spec.roles.size(), 2u);
  EXPECT_EQ(job.spec.roles[0].replicas, 2 * 2);
  EXPECT_EQ(job.spec.roles[1].replicas, 3);
  EXPECT_EQ(JobPodCount(job.spec), 2 * 2 + 3);
  // InOrder: b starts once a runs.
  EXPECT_EQ(job.spec.roles[1].depends_on, (std::vector<RoleDependency>{{"a", "Ready"}}));
  // Each child Job absorbs 2 pod failures and the set restarts once: (2 + 1) x (1 + 1) - 1.
  EXPECT_EQ(job.spec.max_restarts, 5);
  std::string all;
  for (const std::string& w : warnings) all += w + "\n";
  EXPECT_THAT(all, HasSubstr("spec.network.enableDNSHostnames: ignored: strata gives every pod "
                             "MASTER_ADDR and MASTER_PORT"));
  EXPECT_THAT(all, HasSubstr("spec.network.subdomain: ignored"));
  EXPECT_THAT(all, HasSubstr("spec.replicatedJobs[0].replicas: child Jobs are Indexed by "
                             "default, but strata numbers the replicated job's pods 0..3 in "
                             "JOB_COMPLETION_INDEX across its 2 child Jobs"));
  EXPECT_EQ(warnings.size(), 3u) << all;
}

TEST(JobSetTest, AReplicatedJobsExclusiveTopologyPlacesItsOneChildJobInOneDomain) {
  std::vector<std::string> warnings;
  Result<std::vector<Object>> r = DecodeManifests({{"js.yaml", R"(
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: ex}
spec:
  replicatedJobs:
    - name: w
      template:
        metadata:
          annotations:
            alpha.jobset.sigs.k8s.io/exclusive-topology: topology.strata.dev/rack
            note: hello
        spec:
          parallelism: 2
          completions: 2
          template:
            spec:
              containers: [{name: c, command: ["true"]}]
)"}},
                                                  &warnings);
  ASSERT_TRUE(r.has_value()) << r.error().message();
  const Job& job = *r->front().As<Job>();
  EXPECT_EQ(job.spec.topology.level, "topology.strata.dev/rack");
  EXPECT_EQ(job.spec.topology.mode, "Required");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0], HasSubstr("spec.replicatedJobs[0].template.metadata.annotations[note]: "
                                     "ignored"));
}

TEST(JobSetTest, DefaultsAreJobSetsAndKubernetesOnes) {
  Result<std::vector<Object>> r = DecodeManifests({{"js.yaml", R"(
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: one}
spec:
  replicatedJobs:
    - name: w
      template:
        spec:
          template:
            spec:
              containers: [{name: c, command: ["true"]}]
)"}});
  ASSERT_TRUE(r.has_value()) << r.error().message();
  const Job& job = *r->front().As<Job>();
  EXPECT_EQ(job.spec.replicas, 1);
  // No failurePolicy: the set never restarts, but its child Job retries pods 6 times (and
  // JobSet's default restartPolicy is OnFailure, not the pod's Always).
  EXPECT_EQ(job.spec.max_restarts, 6);
  EXPECT_EQ(job.spec.queue, "");
  EXPECT_EQ(job.spec.topology.level, "");
}

// A driver that starts once its workers run, after an initializer completed; the driver decides
// success (JobSet's startup-driver-ready and success-policy shapes, with an initializer).
constexpr const char* kDriverAndWorkers = R"yaml(
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: dw}
spec:
  successPolicy: {operator: All, targetReplicatedJobs: [driver]}
  replicatedJobs:
    - name: init
      template:
        spec:
          template:
            spec:
              restartPolicy: Never
              containers: [{name: c, image: busybox, command: [sh, -c, "echo fetched"]}]
    - name: workers
      replicas: 2
      dependsOn: [{name: init, status: Complete}]
      template:
        spec:
          parallelism: 2
          completions: 2
          completionMode: NonIndexed
          template:
            spec:
              restartPolicy: Never
              nodeSelector: {cloud.google.com/gke-accelerator: nvidia-h100-80gb}
              containers:
                - name: w
                  image: pytorch
                  command: [python3, worker.py]
                  resources: {limits: {nvidia.com/gpu: 8}}
    - name: driver
      dependsOn: [{name: workers, status: Ready}]
      template:
        spec:
          template:
            spec:
              restartPolicy: Never
              containers: [{name: d, image: pytorch, command: [python3, driver.py]}]
)yaml";

TEST(JobSetTest, ReplicatedJobsOfDifferentTemplatesBecomeRolesInOrder) {
  std::vector<std::string> warnings;
  Result<std::vector<Object>> r = DecodeManifests({{"js.yaml", kDriverAndWorkers}}, &warnings);
  ASSERT_TRUE(r.has_value()) << r.error().message();
  const Job& job = *r->front().As<Job>();
  ASSERT_EQ(job.spec.roles.size(), 3u);
  const JobRole& init = job.spec.roles[0];
  const JobRole& workers = job.spec.roles[1];
  const JobRole& driver = job.spec.roles[2];
  EXPECT_EQ(init.name, "init");
  EXPECT_EQ(init.replicas, 1);
  EXPECT_EQ(workers.replicas, 4);
  EXPECT_EQ(workers.resources.gpu, Quantity::FromUnits(8));
  EXPECT_EQ(workers.node_selector.at("cloud.google.com/gke-accelerator"), "nvidia-h100-80gb");
  EXPECT_EQ(workers.depends_on, (std::vector<RoleDependency>{{"init", "Complete"}}));
  EXPECT_EQ(driver.template_.command, (std::vector<std::string>{"python3", "driver.py"}));
  EXPECT_EQ(driver.depends_on, (std::vector<RoleDependency>{{"workers", "Ready"}}));
  EXPECT_EQ(job.spec.success_policy.roles, std::vector<std::string>{"driver"});
  EXPECT_EQ(job.spec.success_policy.op, "All");
  EXPECT_TRUE(warnings.empty());
}

TEST(JobSetTest, InOrderStartupMakesEachReplicatedJobWaitForTheOneBefore) {
  std::string text = kDriverAndWorkers;
  text.replace(text.find("      dependsOn: [{name: init, status: Complete}]\n"),
               std::string("      dependsOn: [{name: init, status: Complete}]\n").size(), "");
  text.insert(text.find("  replicatedJobs:"), "  startupPolicy: {startupPolicyOrder: InOrder}\n");
  Result<std::vector<Object>> r = DecodeManifests({{"js.yaml", text}});
  ASSERT_TRUE(r.has_value()) << r.error().message();
  const Job& job = *r->front().As<Job>();
  EXPECT_EQ(job.spec.roles[1].depends_on, (std::vector<RoleDependency>{{"init", "Ready"}}));
  EXPECT_EQ(job.spec.roles[2].depends_on, (std::vector<RoleDependency>{{"workers", "Ready"}}));
}

TEST(JobSetTest, AnySuccessPolicyAndOneTargetOfOneReplicatedJob) {
  std::string text = kDriverAndWorkers;
  text.replace(text.find("operator: All"), 13, "operator: Any");
  Result<std::vector<Object>> r = DecodeManifests({{"js.yaml", text}});
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_EQ(r->front().As<Job>()->spec.success_policy.op, "Any");
}

std::string ErrorOf(const std::string& spec, const std::string& annotations = "") {
  std::string text = "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata:\n  name: j\n" +
                     annotations + "spec:\n" + spec;
  Result<std::vector<Object>> r = DecodeManifests({{"j.yaml", text}});
  return r.has_value() ? "<decoded>" : r.error().message();
}

std::string Replicated(const std::string& name, int replicas, const std::string& command,
                       const std::string& extra = "") {
  return "    - name: " + name + "\n      replicas: " + std::to_string(replicas) +
         "\n      template:\n        spec:\n          parallelism: 2\n          completions: 2\n" +
         extra +
         "          template:\n            spec:\n              restartPolicy: Never\n"
         "              containers: [{name: c, command: [" +
         command + "]}]\n";
}

// JobSet's PyTorch tutorials' shape: the pods meet at the first pod's DNS name and a port of the
// manifest's, each with its completion index as RANK.
std::string HandSetRendezvousSet(const std::string& replicas, const std::string& master_addr,
                                 const std::string& network = "") {
  return R"(
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: pytorch}
spec:
)" + network +
         R"(
  replicatedJobs:
  - name: workers
    replicas: )" +
         replicas + R"(
    template:
      spec:
        parallelism: 4
        completions: 4
        backoffLimit: 0
        completionMode: NonIndexed
        template:
          spec:
            restartPolicy: Never
            containers:
            - name: pytorch
              image: pytorch
              env:
              - {name: MASTER_ADDR, value: ")" +
         master_addr + R"("}
              - {name: MASTER_PORT, value: "3389"}
              - name: RANK
                valueFrom:
                  fieldRef:
                    fieldPath: metadata.annotations['batch.kubernetes.io/job-completion-index']
              - {name: PYTHONUNBUFFERED, value: "0"}
              command: [bash, -xc, "torchrun --nnodes=4 --master_addr=$MASTER_ADDR --master_port=$MASTER_PORT --node_rank=$RANK train.py"]
)";
}

// The error of a whole JobSet document, which must not decode.
std::string RefusalOf(const std::string& text) {
  Result<std::vector<Object>> r = DecodeManifests({{"js.yaml", text}});
  EXPECT_FALSE(r.has_value()) << text;
  return r.has_value() ? "" : r.error().message();
}

TEST(JobSetTest, RendezvousVariablesSetByHandToWhatStrataGivesAreWarnedOfAndDropped) {
  for (const std::string addr :
       {"pytorch-workers-0-0.pytorch", "pytorch-workers-0-0.pytorch.default.svc.cluster.local"}) {
    SCOPED_TRACE(addr);
    std::vector<std::string> warnings;
    Result<std::vector<Object>> r =
        DecodeManifests({{"js.yaml", HandSetRendezvousSet("1", addr)}}, &warnings);
    ASSERT_TRUE(r.has_value()) << r.error().message();
    const Job& job = *r->front().As<Job>();
    ASSERT_EQ(job.spec.template_.env.size(), 1u);
    EXPECT_EQ(job.spec.template_.env.front().name, "PYTHONUNBUFFERED");
    const std::string all = ::testing::PrintToString(warnings);
    EXPECT_THAT(all, HasSubstr("env[0]: MASTER_ADDR names the first pod"));
    EXPECT_THAT(all, HasSubstr("env[1]: strata chooses MASTER_PORT"));
    EXPECT_THAT(all, HasSubstr("env[2]: RANK read from the completion index"));
  }
  // A subdomain of the set's own.
  std::vector<std::string> warnings;
  EXPECT_TRUE(DecodeManifests({{"js.yaml", HandSetRendezvousSet("1", "pytorch-workers-0-0.ring",
                                                                "  network: {subdomain: ring}")}},
                              &warnings)
                  .has_value());
}

TEST(JobSetTest, RendezvousVariablesThatMeanSomethingElseStayReserved) {
  // Another pod, another host, a host that only starts like the first pod's.
  for (const std::string addr : {"pytorch-workers-0-1.pytorch", "10.0.0.7",
                                 "pytorch-workers-0-0x.pytorch", "pytorch-workers-0-0.other"}) {
    SCOPED_TRACE(addr);
    EXPECT_THAT(RefusalOf(HandSetRendezvousSet("1", addr)),
                HasSubstr("env[0].name: \"MASTER_ADDR\" is reserved"));
  }
  // No DNS host names: the name resolves to nothing on Kubernetes either.
  EXPECT_THAT(RefusalOf(HandSetRendezvousSet("1", "pytorch-workers-0-0.pytorch",
                                             "  network: {enableDNSHostnames: false}")),
              HasSubstr("\"MASTER_ADDR\" is reserved"));
  // Two child Jobs: each numbers its pods from 0, strata's RANK runs across both.
  const std::string two = RefusalOf(HandSetRendezvousSet("2", "pytorch-workers-0-0.pytorch"));
  EXPECT_THAT(two, HasSubstr("env[2].name: \"RANK\" is reserved"));
  EXPECT_THAT(two, ::testing::Not(HasSubstr("\"MASTER_ADDR\" is reserved")));
  // The launcher form: torchrun gives its workers their ranks; strata sets no RANK to stand in.
  std::string launcher = HandSetRendezvousSet("1", "pytorch-workers-0-0.pytorch");
  const std::string bash =
      R"([bash, -xc, "torchrun --nnodes=4 --master_addr=$MASTER_ADDR --master_port=$MASTER_PORT --node_rank=$RANK train.py"])";
  launcher.replace(launcher.find(bash), bash.size(), "[torchrun, --node_rank=$(RANK), train.py]");
  EXPECT_THAT(RefusalOf(launcher), HasSubstr("env[2].name: \"RANK\" is reserved"));
  // A port that is no port number.
  std::string port = HandSetRendezvousSet("1", "pytorch-workers-0-0.pytorch");
  port.replace(port.find("\"3389\""), 6, "\"http\"");
  EXPECT_THAT(RefusalOf(port), HasSubstr("env[1].name: \"MASTER_PORT\" is reserved"));
}

TEST(JobSetTest, WhatStrataCannotHonourIsAnErrorNamingTheField) {
  EXPECT_THAT(ErrorOf("  replicatedJobs:\n" + Replicated("w", 2, "a"),
                      "  annotations:\n    alpha.jobset.sigs.k8s.io/exclusive-topology: rack\n"),
              HasSubstr("metadata.annotations[alpha.jobset.sigs.k8s.io/exclusive-topology]: "
                        "strata places a JobSet as one gang and has no per-child-Job domains"));
  EXPECT_THAT(ErrorOf("  replicatedJobs:\n" + Replicated("w", 1, "a"),
                      "  annotations:\n    alpha.jobset.sigs.k8s.io/node-selector: \"true\"\n"),
              HasSubstr("metadata.annotations[alpha.jobset.sigs.k8s.io/node-selector]: not "
                        "supported"));
  EXPECT_THAT(ErrorOf("  failurePolicy:\n    rules: [{name: r, action: FailJobSet}]\n"
                      "  replicatedJobs:\n" +
                      Replicated("w", 1, "a")),
              HasSubstr("spec.failurePolicy.rules: not supported by strata"));
  EXPECT_THAT(ErrorOf("  failurePolicy:\n    restartStrategy: InPlaceRestart\n"
                      "  replicatedJobs:\n" +
                      Replicated("w", 1, "a")),
              HasSubstr("spec.failurePolicy.restartStrategy"));
  EXPECT_THAT(ErrorOf("  successPolicy: {operator: All, targetReplicatedJobs: [x]}\n"
                      "  replicatedJobs:\n" +
                      Replicated("w", 1, "a") + Replicated("v", 1, "a")),
              HasSubstr("spec.successPolicy.targetReplicatedJobs[0]: no role \"x\" in this job"));
  EXPECT_THAT(ErrorOf("  suspend: true\n  replicatedJobs:\n" + Replicated("w", 1, "a")),
              HasSubstr("spec.suspend: strata holds a JobSet back only in a queue"));
  EXPECT_THAT(
      ErrorOf("  coordinator: {replicatedJob: w}\n  replicatedJobs:\n" + Replicated("w", 1, "a")),
      HasSubstr("spec.coordinator: not supported by strata"));
  EXPECT_THAT(
      ErrorOf("  managedBy: example.com/other\n  replicatedJobs:\n" + Replicated("w", 1, "a")),
      HasSubstr("spec.managedBy: strata manages every JobSet it admits"));
  EXPECT_THAT(ErrorOf("  replicatedJobs:\n    - name: w\n      template:\n        spec:\n"
                      "          parallelism: 2\n          completions: 3\n          template:\n"
                      "            spec:\n              restartPolicy: Never\n"
                      "              containers: [{name: c, command: [a]}]\n"),
              HasSubstr("spec.replicatedJobs[0].template.spec.completions: strata runs a Job's "
                        "pods as one group"));
  EXPECT_THAT(ErrorOf("  replicatedJobs:\n" +
                      Replicated("w", 2, "a", "          completionMode: Indexed\n")),
              HasSubstr("spec.replicatedJobs[0].template.spec.completionMode: Indexed with "
                        "several child Jobs: strata numbers the replicated job's pods 0..3"));
  EXPECT_THAT(
      ErrorOf("  replicatedJobs:\n" +
              Replicated("w", 1, "a").replace(Replicated("w", 1, "a").find("Never"), 5, "Always")),
      HasSubstr("spec.replicatedJobs[0].template.spec.template.spec.restartPolicy: a "
                "Job's pods need restartPolicy Never or OnFailure"));
  EXPECT_THAT(ErrorOf("  replicatedJobs:\n" + Replicated("w", 1, "a", "          suspend: true\n")),
              HasSubstr("spec.replicatedJobs[0].template.spec.suspend: not supported by strata: "
                        "the JobSet suspends its child Jobs"));
  EXPECT_THAT(ErrorOf("  replicatedJobs:\n" + Replicated("w", 1, "a") +
                      Replicated("v", 1, "a", "          backoffLimit: 0\n")),
              HasSubstr("spec.replicatedJobs[1].template.spec.backoffLimit: must equal "
                        "spec.replicatedJobs[0].template.spec.backoffLimit"));
  EXPECT_THAT(ErrorOf("  replicatedJobs:\n    - name: w\n      dependsOn: [{name: x, status: "
                      "Ready}]\n      template:\n        spec:\n          template:\n"
                      "            spec:\n              restartPolicy: Never\n"
                      "              containers: [{name: c, command: [a]}]\n"),
              HasSubstr("spec.replicatedJobs[0].dependsOn[0].name: no role \"x\" in this job"));
  std::string tolerant = Replicated("v", 1, "b");
  tolerant.insert(tolerant.find("containers"), "tolerations: [{operator: Exists}]\n              ");
  EXPECT_THAT(ErrorOf("  replicatedJobs:\n" + Replicated("w", 1, "a") + tolerant),
              HasSubstr("spec.replicatedJobs[1].template.spec.template.spec.tolerations: must "
                        "equal spec.replicatedJobs[0].template.spec.template.spec.tolerations"));
  EXPECT_THAT(ErrorOf("  volumeClaimPolicies: []\n  replicatedJobs:\n" + Replicated("w", 1, "a")),
              HasSubstr("spec.volumeClaimPolicies: not supported by strata"));
}

}  // namespace
}  // namespace strata::api
