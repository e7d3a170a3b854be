#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/manifest.h"

namespace strata::api {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

// Kueue's quick-start shape: a suspended Job in a LocalQueue, three pods at once.
constexpr const char* kSampleJob = R"(
apiVersion: batch/v1
kind: Job
metadata:
  generateName: sample-job-
  namespace: team-a
  labels:
    kueue.x-k8s.io/queue-name: user-queue
spec:
  parallelism: 3
  completions: 3
  completionMode: Indexed
  suspend: true
  backoffLimit: 2
  activeDeadlineSeconds: 600
  template:
    metadata:
      annotations:
        kueue.x-k8s.io/podset-required-topology: topology.strata.dev/rack
    spec:
      restartPolicy: Never
      containers:
        - name: dummy-job
          image: registry.k8s.io/e2e-test-images/agnhost:2.53
          imagePullPolicy: IfNotPresent
          command: [sleep, "30"]
          resources:
            requests: {cpu: "1", memory: 200Mi}
)";

TEST(BatchJobTest, BecomesOneGroupOfParallelismPods) {
  std::vector<std::string> warnings;
  Result<std::vector<Object>> r = DecodeManifests({{"job.yaml", kSampleJob}}, &warnings);
  ASSERT_TRUE(r.has_value()) << r.error().message();
  ASSERT_EQ(r->size(), 1u);
  const Job& job = *r->front().As<Job>();
  EXPECT_THAT(job.metadata.name, StartsWith("sample-job-"));
  EXPECT_EQ(job.metadata.name.size(), std::string("sample-job-").size() + 5);
  EXPECT_EQ(job.metadata.namespace_name, "team-a");
  EXPECT_EQ(job.spec.queue, "user-queue");
  EXPECT_EQ(job.spec.replicas, 3);
  EXPECT_EQ(job.spec.proc_per_node, 1);
  EXPECT_EQ(job.spec.max_restarts, 2);
  EXPECT_EQ(job.spec.runtime_limit, std::chrono::seconds(600));
  EXPECT_EQ(job.spec.clean_pod_policy, "None");
  EXPECT_EQ(job.spec.topology.level, "topology.strata.dev/rack");
  EXPECT_EQ(job.spec.topology.mode, "Required");
  EXPECT_EQ(job.spec.resources.cpu, Quantity::FromUnits(1));
  EXPECT_EQ(job.spec.template_.command, (std::vector<std::string>{"sleep", "30"}));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(
      warnings[0],
      "job.yaml: document 1 (Job sample-job-): spec.template.spec.containers[0].imagePullPolicy: "
      "ignored: pods run as local processes and pull no images");
}

TEST(BatchJobTest, EachApplyOfAGeneratedNameMakesANewName) {
  Result<std::vector<Object>> a = DecodeManifests({{"job.yaml", kSampleJob}});
  Result<std::vector<Object>> b = DecodeManifests({{"job.yaml", kSampleJob}});
  ASSERT_TRUE(a.has_value() && b.has_value());
  EXPECT_NE(a->front().As<Job>()->metadata.name, b->front().As<Job>()->metadata.name);
}

TEST(BatchJobTest, DefaultsAreKubernetesOnes) {
  Result<std::vector<Object>> r = DecodeManifests({{"pi.yaml", R"(
apiVersion: batch/v1
kind: Job
metadata: {name: pi}
spec:
  template:
    spec:
      containers: [{name: pi, image: perl, command: [perl, -e, "print 1"]}]
      restartPolicy: OnFailure
)"}});
  ASSERT_TRUE(r.has_value()) << r.error().message();
  const Job& job = *r->front().As<Job>();
  EXPECT_EQ(job.spec.replicas, 1);
  EXPECT_EQ(job.spec.max_restarts, 6);
  EXPECT_EQ(job.spec.queue, "");
  EXPECT_EQ(job.spec.topology.level, "");
}

std::string ErrorOf(const std::string& spec) {
  std::string text = R"(
apiVersion: batch/v1
kind: Job
metadata: {name: j}
spec:
)" + spec;
  Result<std::vector<Object>> r = DecodeManifests({{"j.yaml", text}});
  return r.has_value() ? "<decoded>" : r.error().message();
}

constexpr const char* kTemplate = R"(
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, command: [x]}]
)";

TEST(BatchJobTest, WhatStrataCannotHonourIsAnErrorNamingTheField) {
  EXPECT_EQ(ErrorOf("  parallelism: 4\n  completions: 10" + std::string(kTemplate)),
            "j.yaml: document 1 (Job j): spec.completions: strata runs a Job's pods as one group "
            "that succeeds when all of them succeed: must equal parallelism (4)");
  EXPECT_THAT(ErrorOf("  parallelism: 2" + std::string(kTemplate)),
              HasSubstr("spec.completions: required when parallelism is above 1"));
  EXPECT_THAT(ErrorOf("  suspend: true" + std::string(kTemplate)),
              HasSubstr("spec.suspend: strata holds a Job back only in a queue"));
  EXPECT_THAT(ErrorOf("  ttlSecondsAfterFinished: 100" + std::string(kTemplate)),
              HasSubstr("spec.ttlSecondsAfterFinished: not supported by strata"));
  EXPECT_THAT(ErrorOf(R"(  template:
    spec:
      containers: [{name: c, command: [x]}]
)"),
              HasSubstr("spec.template.spec.restartPolicy: a Job's pods need restartPolicy Never "
                        "or OnFailure"));
  EXPECT_THAT(ErrorOf(R"(  template:
    spec:
      restartPolicy: Never
      volumes: [{name: data, persistentVolumeClaim: {claimName: d}}]
      containers: [{name: c, command: [x]}]
)"),
              HasSubstr("spec.template.spec.volumes[0].persistentVolumeClaim: not supported"));
  EXPECT_THAT(ErrorOf(R"(  template:
    metadata:
      annotations:
        kueue.x-k8s.io/podset-required-topology: a
        kueue.x-k8s.io/podset-preferred-topology: b
    spec:
      restartPolicy: Never
      containers: [{name: c, command: [x]}]
)"),
              HasSubstr("give a required or a preferred topology, not both"));
}

TEST(BatchJobTest, ConfigurationOnlyFieldsAreWarnedOfNotRefused) {
  std::vector<std::string> warnings;
  Result<std::vector<Object>> r = DecodeManifests({{"j.yaml", R"(
apiVersion: batch/v1
kind: Job
metadata:
  name: j
  generation: 3
  managedFields: []
spec:
  template:
    metadata:
      labels: {app: j}
    spec:
      restartPolicy: Never
      serviceAccountName: trainer
      securityContext: {runAsNonRoot: true}
      volumes: [{name: cfg, configMap: {name: cfg}}]
      containers:
        - name: c
          command: [x]
          volumeMounts: [{name: cfg, mountPath: /etc/cfg}]
          ports: [{containerPort: 8080}]
status:
  active: 1
)"}},
                                                  &warnings);
  ASSERT_TRUE(r.has_value()) << r.error().message();
  std::string all;
  for (const std::string& w : warnings) all += w + "\n";
  for (const char* path :
       {"metadata.generation: ignored: set by the server", "metadata.managedFields: ignored",
        "spec.template.metadata.labels: ignored", "spec.template.spec.serviceAccountName: ignored",
        "spec.template.spec.volumes[0].configMap: ignored",
        "spec.template.spec.containers[0].volumeMounts: ignored",
        "status: ignored: status is set by strata"}) {
    EXPECT_THAT(all, HasSubstr(path));
  }
  EXPECT_EQ(warnings.size(), 7u) << all;
  EXPECT_THAT(all, Not(HasSubstr("securityContext"))) << "honoured, not ignored";
}

TEST(BatchJobTest, TakesWhoThePodRunsAsFromThePodAndTheContainerTheContainerWinning) {
  auto job_with = [](const std::string& pod_context, const std::string& container_context) {
    return "apiVersion: batch/v1\nkind: Job\nmetadata: {name: who}\nspec:\n  template:\n"
           "    spec:\n      restartPolicy: Never\n      securityContext: " +
           pod_context + "\n      containers:\n        - name: c\n          command: [x]\n" +
           "          securityContext: " + container_context + "\n";
  };
  Result<std::vector<Object>> r = DecodeManifests(
      {{"job.yaml", job_with("{runAsUser: 1000, runAsGroup: 1000}", "{runAsGroup: 2000}")}},
      nullptr);
  ASSERT_TRUE(r.has_value()) << r.error().message();
  const SecurityContext& security = r->front().As<Job>()->spec.template_.security_context;
  EXPECT_EQ(security.run_as_user, 1000);
  EXPECT_EQ(security.run_as_group, 2000);
  EXPECT_FALSE(security.run_as_non_root.has_value());

  r = DecodeManifests({{"job.yaml", job_with("{runAsNonRoot: true}", "{runAsUser: 0}")}}, nullptr);
  ASSERT_FALSE(r.has_value());
  EXPECT_THAT(r.error().message(),
              HasSubstr("securityContext: runAsUser is 0 (root) but runAsNonRoot is true"));
  r = DecodeManifests({{"job.yaml", job_with("{}", "{runAsUser: -1}")}}, nullptr);
  ASSERT_FALSE(r.has_value());
  EXPECT_THAT(r.error().message(),
              HasSubstr("containers[0].securityContext.runAsUser: must be between 0 and"));
}

}  // namespace
}  // namespace strata::api
