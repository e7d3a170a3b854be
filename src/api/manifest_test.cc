#include "api/manifest.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace strata::api {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Result<std::vector<Object>> Decode(const std::string& text, const std::string& name = "job.yaml") {
  return DecodeManifests({{name, text}});
}

std::string ErrorOf(const std::string& text) {
  Result<std::vector<Object>> r = Decode(text);
  return r.has_value() ? "<decoded>" : r.error().message();
}

constexpr const char* kNativeJob = R"(
apiVersion: strata.dev/v1alpha1
kind: Job
metadata:
  name: bert
spec:
  replicas: 2
  procPerNode: 4
  resources: {cpu: 16, memory: 64Gi, gpu: 4}
  topology: {level: topology.strata.dev/rack}
  checkpoint: {dir: /ckpt, interval: 30m}
  runtimeLimit: 2h
  template:
    command: [python, train.py]
    env: [{name: EPOCHS, value: "3"}]
)";

TEST(ManifestTest, DecodesANativeJobWithDefaults) {
  Result<std::vector<Object>> objects = Decode(kNativeJob);
  ASSERT_TRUE(objects.has_value()) << objects.error().message();
  ASSERT_EQ(objects->size(), 1u);
  const Job* job = objects->front().As<Job>();
  ASSERT_NE(job, nullptr);
  EXPECT_EQ(objects->front().kind(), "Job");
  EXPECT_EQ(job->metadata.namespace_name, "default");
  EXPECT_EQ(job->spec.replicas, 2);
  EXPECT_EQ(job->spec.proc_per_node, 4);
  EXPECT_EQ(job->spec.resources.gpu, Quantity::FromUnits(4));
  EXPECT_EQ(job->spec.resources.memory.milli(), 64LL * 1024 * 1024 * 1024 * 1000);
  EXPECT_EQ(job->spec.topology.mode, "Required");
  EXPECT_EQ(job->spec.checkpoint.interval, std::chrono::minutes(30));
  EXPECT_EQ(job->spec.runtime_limit, std::chrono::hours(2));
  EXPECT_EQ(job->spec.clean_pod_policy, "Running");
  EXPECT_THAT(job->spec.template_.env, ElementsAre(EnvVar{"EPOCHS", "3"}));
}

TEST(ManifestTest, ErrorNamesFileDocumentKindNameAndFieldPath) {
  std::string text = std::string(kNativeJob) + R"(---
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: resnet50-train}
spec:
  pytorchReplicaSpecs:
    Worker:
      replicas: three
      template: {spec: {containers: [{name: pytorch, command: [python]}]}}
)";
  EXPECT_EQ(ErrorOf(text),
            "job.yaml: document 2 (PyTorchJob resnet50-train): "
            "spec.pytorchReplicaSpecs.Worker.replicas: expected a non-negative integer, got "
            "\"three\"");
}

TEST(ManifestTest, ReportsEveryErrorAndAppliesNothing) {
  std::string text = R"(
apiVersion: strata.dev/v1alpha1
kind: Job
metadata: {name: a}
spec:
  replcas: 2
  template:
    command: [x]
    env: [{name: RANK, value: "0"}]
---
apiVersion: strata.dev/v1alpha1
kind: Tenant
metadata: {name: ok-tenant}
---
apiVersion: strata.dev/v1alpha1
kind: Queue
metadata: {name: q, namespace: team}
)";
  Result<std::vector<Object>> r = Decode(text);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.error().message(),
            "job.yaml: document 1 (Job a): spec.replcas: unknown field; did you mean "
            "\"replicas\"?\n"
            "job.yaml: document 3 (Queue q): metadata.namespace: this kind is cluster-scoped and "
            "has no namespace; remove the field");
}

TEST(ManifestTest, RejectsReservedEnvironmentNames) {
  std::string text = R"(
apiVersion: strata.dev/v1alpha1
kind: Job
metadata: {name: a}
spec:
  template:
    command: [x]
    env: [{name: RANK, value: "0"}, {name: STRATA_JOB, value: x}, {name: LWS_GROUP_SIZE}]
)";
  std::string message = ErrorOf(text);
  EXPECT_THAT(message, HasSubstr("spec.template.env[0].name: \"RANK\" is reserved"));
  EXPECT_THAT(message, HasSubstr("spec.template.env[1].name: \"STRATA_JOB\" is reserved"));
  // LeaderWorkerSet's names are reserved for services only.
  EXPECT_THAT(message, ::testing::Not(HasSubstr("LWS_GROUP_SIZE")));
}

TEST(ManifestTest, ServiceDefaultsFollowOtherFields) {
  Result<std::vector<Object>> r = Decode(R"(
apiVersion: strata.dev/v1alpha1
kind: Service
metadata: {name: chat}
spec:
  model: chat
  engine: {command: [vllm, serve, m]}
  resources: {gpu: 4}
  minReplicas: 2
)");
  ASSERT_TRUE(r.has_value()) << r.error().message();
  const Service& s = *r->front().As<Service>();
  EXPECT_EQ(s.spec.tensor_parallel, 4);
  EXPECT_EQ(s.spec.max_replicas, 2);
  ASSERT_EQ(s.spec.versions.size(), 1u);
  EXPECT_EQ(s.spec.versions[0].name, "v1");
  EXPECT_EQ(s.spec.autoscaling.metric, "concurrency");
}

TEST(ManifestTest, PyTorchJobBecomesOneJob) {
  Result<std::vector<Object>> r = Decode(R"(
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: mnist
  labels: {kueue.x-k8s.io/queue-name: research, team: vision}
spec:
  nprocPerNode: gpu
  elasticPolicy: {maxRestarts: 2}
  runPolicy: {activeDeadlineSeconds: 3600, schedulingPolicy: {priorityClass: critical}}
  pytorchReplicaSpecs:
    Master: {replicas: 1, template: {spec: {containers: [{name: pytorch, command: [torchrun, m.py], resources: {limits: {nvidia.com/gpu: 2}}}]}}}
    Worker: {replicas: 1, template: {spec: {containers: [{name: pytorch, command: [torchrun, m.py], resources: {limits: {nvidia.com/gpu: 2}}}]}}}
)");
  ASSERT_TRUE(r.has_value()) << r.error().message();
  const Job& job = *r->front().As<Job>();
  EXPECT_EQ(job.spec.replicas, 2);
  EXPECT_EQ(job.spec.proc_per_node, 2);
  EXPECT_EQ(job.spec.max_restarts, 2);
  EXPECT_EQ(job.spec.queue, "research");
  EXPECT_EQ(job.spec.priority, 1000);
  EXPECT_EQ(job.spec.runtime_limit, std::chrono::hours(1));
  EXPECT_EQ(job.spec.clean_pod_policy, "None");
  EXPECT_EQ(job.metadata.labels, (std::map<std::string, std::string>{{"team", "vision"}}));
}

// Kueue's convention: a job labelled for a queue is created suspended and waits for admission;
// in strata the queue is the admission, so suspend needs one and changes nothing else.
TEST(ManifestTest, PyTorchJobSuspendedWaitsForItsQueue) {
  const std::string job = R"(
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: mnist
spec:
  runPolicy: {suspend: true}
  pytorchReplicaSpecs:
    Master: {replicas: 1, template: {spec: {containers: [{name: pytorch, command: [torchrun, m.py]}]}}}
)";
  std::string labelled = job;
  labelled.replace(labelled.find("spec:"), 0, "  labels: {kueue.x-k8s.io/queue-name: research}\n");
  Result<std::vector<Object>> r = Decode(labelled);
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_EQ(r->front().As<Job>()->spec.queue, "research");
  EXPECT_THAT(ErrorOf(job),
              HasSubstr("spec.runPolicy.suspend: strata holds a PyTorchJob back only in a queue"));
}

TEST(ManifestTest, PyTorchJobTemplatesMustAgree) {
  std::string message = ErrorOf(R"(
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: mnist}
spec:
  pytorchReplicaSpecs:
    Master: {template: {spec: {containers: [{name: pytorch, command: [a]}]}}}
    Worker: {replicas: 2, template: {spec: {containers: [{name: pytorch, command: [b]}]}}}
)");
  EXPECT_EQ(message,
            "job.yaml: document 1 (PyTorchJob mnist): spec.pytorchReplicaSpecs.Worker.template: "
            "must equal spec.pytorchReplicaSpecs.Master.template: strata runs one template on "
            "every node");
}

TEST(ManifestTest, CorePodExtendedResourceRequestMustEqualLimit) {
  std::string message = ErrorOf(R"(
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
    - name: c
      command: [x]
      resources: {limits: {nvidia.com/gpu: 2}, requests: {nvidia.com/gpu: 1}}
)");
  EXPECT_EQ(message,
            "job.yaml: document 1 (Pod p): spec.containers[0].resources.requests.nvidia.com/gpu: "
            "must equal the limit for an extended resource (Kubernetes' rule), got \"1\" with "
            "limit \"2\"");
}

TEST(ManifestTest, UnsupportedKubernetesFieldIsAnErrorNotDropped) {
  std::string message = ErrorOf(R"(
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  affinity: {}
  containers: [{name: c, command: [x]}]
)");
  EXPECT_EQ(message,
            "job.yaml: document 1 (Pod p): spec.affinity: not supported by strata: use strata's "
            "topology constraint on a Job");
}

TEST(ManifestTest, NodeSelectorsOfPodsAndReplicasAreHonoured) {
  Result<std::vector<Object>> decoded = DecodeManifests({{"pods.yaml", R"(
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  nodeSelector: {disk: ssd}
  containers: [{name: c, command: [x]}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
      containers: [{name: c, command: [serve]}]
)"}});
  ASSERT_TRUE(decoded.has_value()) << decoded.error().ToString();
  ASSERT_EQ(decoded->size(), 2u);
  const Pod* pod = (*decoded)[0].As<Pod>();
  ASSERT_NE(pod, nullptr);
  EXPECT_EQ(pod->spec.node_selector, (std::map<std::string, std::string>{{"disk", "ssd"}}));
  const Service* service = (*decoded)[1].As<Service>();
  ASSERT_NE(service, nullptr);
  EXPECT_EQ(
      service->spec.node_selector,
      (std::map<std::string, std::string>{{"nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"}}));
}

TEST(ManifestTest, LocalQueueLinksToItsClusterQueueAcrossSources) {
  std::string cluster_queue = R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq}
spec:
  resourceGroups:
    - coveredResources: [nvidia.com/gpu]
      flavors: [{name: h100, resources: [{name: nvidia.com/gpu, nominalQuota: 8}]}]
)";
  std::string local_queue = R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: lq, namespace: team}
spec: {clusterQueue: cq}
)";
  Result<std::vector<Object>> r =
      DecodeManifests({{"lq.yaml", local_queue}, {"cq.yaml", cluster_queue}});
  ASSERT_TRUE(r.has_value()) << r.error().message();
  ASSERT_EQ(r->size(), 1u);
  const Queue& q = *r->front().As<Queue>();
  EXPECT_THAT(q.spec.local_queues, ElementsAre(LocalQueueRef{"team", "lq"}));
  ASSERT_EQ(q.spec.flavors.size(), 1u);
  EXPECT_EQ(q.spec.flavors[0].resources[0].resource, "gpu");

  Result<std::vector<Object>> alone = DecodeManifests({{"lq.yaml", local_queue}});
  ASSERT_FALSE(alone.has_value());
  EXPECT_EQ(alone.error().message(),
            "lq.yaml: document 1 (LocalQueue lq): spec.clusterQueue: ClusterQueue \"cq\" is not "
            "among these manifests; apply a LocalQueue together with its ClusterQueue");
}

TEST(ManifestTest, PodGroupBecomesTheGangOfItsPods) {
  std::string pod = R"(
apiVersion: v1
kind: Pod
metadata:
  name: %s
  annotations: {scheduling.k8s.io/group-name: pg}
spec:
  containers: [{name: c, command: [x], resources: {limits: {nvidia.com/gpu: 1}}}]
---
)";
  std::string text;
  for (const char* name : {"w0", "w1"}) {
    std::string doc = pod;
    doc.replace(doc.find("%s"), 2, name);
    text += doc;
  }
  text += R"(
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: pg}
spec: {minMember: 2, queue: research, priorityClassName: sheddable, minResources: {nvidia.com/gpu: 2}}
)";
  Result<std::vector<Object>> r = Decode(text);
  ASSERT_TRUE(r.has_value()) << r.error().message();
  ASSERT_EQ(r->size(), 2u);
  for (const Object& o : *r) {
    const Pod& p = *o.As<Pod>();
    EXPECT_EQ(p.spec.gang.name, "pg");
    EXPECT_EQ(p.spec.gang.min_member, 2);
    EXPECT_EQ(p.spec.queue, "research");
    EXPECT_EQ(p.spec.priority, -1000);
  }
}

TEST(ManifestTest, VolcanoQueueMapsDeservedCapabilityAndGuarantee) {
  Result<std::vector<Object>> r = Decode(R"(
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: research}
spec:
  weight: 3
  deserved: {nvidia.com/gpu: 16}
  capability: {nvidia.com/gpu: 24}
  guarantee: {resource: {nvidia.com/gpu: 4}}
  reclaimable: false
)");
  ASSERT_TRUE(r.has_value()) << r.error().message();
  const Queue& q = *r->front().As<Queue>();
  EXPECT_EQ(q.spec.cohort, "volcano");
  EXPECT_EQ(q.spec.weight, Quantity::FromUnits(3));
  EXPECT_FALSE(q.spec.reclaimable);
  ASSERT_EQ(q.spec.flavors.size(), 1u);
  const ResourceQuota& gpu = q.spec.flavors[0].resources[0];
  EXPECT_EQ(gpu.resource, "gpu");
  EXPECT_EQ(gpu.nominal, Quantity::FromUnits(16));
  EXPECT_EQ(gpu.borrowing_limit, Quantity::FromUnits(8));
  EXPECT_EQ(gpu.lending_limit, Quantity::FromUnits(12));
}

TEST(ManifestTest, UnknownKindAndApiVersionAreNamed) {
  EXPECT_EQ(ErrorOf("apiVersion: strata.dev/v1alpha1\nkind: Jbo\nmetadata: {name: a}\n"),
            "job.yaml: document 1 (Jbo a): kind: unknown kind \"Jbo\" in \"strata.dev/v1alpha1\"; "
            "did you mean \"Job\"? (strata explain lists the kinds it reads)");
  EXPECT_EQ(ErrorOf("apiVersion: kubeflow.org/v2\nkind: PyTorchJob\nmetadata: {name: a}\n"),
            "job.yaml: document 1 (PyTorchJob a): kind: unknown apiVersion \"kubeflow.org/v2\" "
            "for kind PyTorchJob; strata reads kubeflow.org/v1");
}

TEST(ManifestTest, YamlSyntaxErrorNamesTheFileAndLine) {
  Result<std::vector<Object>> r = Decode("kind: Job\n  bad: [\n", "broken.yaml");
  ASSERT_FALSE(r.has_value());
  EXPECT_THAT(r.error().message(), HasSubstr("broken.yaml: line "));
}

TEST(ManifestTest, DecodeObjectReadsOneDocument) {
  nlohmann::json doc = {{"apiVersion", "strata.dev/v1alpha1"},
                        {"kind", "Tenant"},
                        {"metadata", {{"name", "acme"}, {"resourceVersion", "7"}}},
                        {"spec", {{"apiKeys", {"sk-acme-0001"}}, {"tokensPerMinute", 50000}}}};
  Result<Object> o = DecodeObject(doc);
  ASSERT_TRUE(o.has_value()) << o.error().message();
  EXPECT_EQ(o->metadata().resource_version, "7");
  EXPECT_EQ(o->As<Tenant>()->spec.priority_class, "standard");
  doc["spec"]["tokensPerMinute"] = -1;
  Result<Object> bad = DecodeObject(doc);
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().message(), "spec.tokensPerMinute: expected a non-negative integer, got -1");
}

}  // namespace
}  // namespace strata::api
