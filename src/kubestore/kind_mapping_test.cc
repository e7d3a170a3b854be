// The translations between strata's bodies and the Kubernetes API's objects, without a server:
// what a server would store is simulated by stamping metadata on what to_kube produced.
#include "kubestore/kind_mapping.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/annotations.h"
#include "api/encode.h"
#include "api/manifest.h"
#include "api/object.h"

namespace strata::kubestore {
namespace {

using ::testing::HasSubstr;

store::Object StoreObjectOf(const api::Object& value) {
  store::Object object;
  object.key = {std::string(value.kind()), value.namespace_name(), value.name()};
  object.labels = value.metadata().labels;
  object.body = api::EncodeObject(value);
  return object;
}

// What a server answers for a created object: its metadata stamped.
Json AsStored(Json object, int version) {
  object["metadata"]["uid"] = "uid-1";
  object["metadata"]["resourceVersion"] = std::to_string(version);
  object["metadata"]["creationTimestamp"] = "2026-12-02T07:00:00Z";
  object["metadata"]["managedFields"] = Json::array();
  return object;
}

const KindMapping& Mapping(std::string_view kind) {
  Result<const KindMapping*> mapping = FindKindMapping(kind);
  EXPECT_TRUE(mapping.has_value()) << kind;
  return **mapping;
}

api::Object Decoded(const store::Object& object) {
  Result<api::Object> decoded = api::DecodeObject(object.body);
  EXPECT_TRUE(decoded.has_value()) << decoded.error().ToString() << "\n" << object.body.dump(2);
  return decoded ? *decoded : api::Object();
}

api::Pod TrainingPod() {
  api::Pod pod;
  pod.metadata.name = "train-0";
  pod.metadata.namespace_name = "team-a";
  pod.metadata.labels = {{"strata.dev/job-name", "train"}};
  pod.metadata.annotations = {{"strata.dev/run-id", "3"}};
  pod.spec.owner = {"Job", "train", 0, 0};
  pod.spec.queue = "research";
  pod.spec.restart_policy = "Never";
  pod.spec.resources.gpu = Quantity::FromUnits(2);
  pod.spec.resources.cpu = Quantity::FromMilli(1500);
  pod.spec.tolerations = {{"kwok.x-k8s.io/node", "Exists", "", "NoSchedule"}};
  pod.spec.template_.command = {"python3", "train.py"};
  pod.spec.template_.env = {{"EPOCHS", "3"}};
  return pod;
}

TEST(KindMappingTest, APodIsAV1PodWithItsProcessAsTheContainer) {
  store::Object object = StoreObjectOf(TrainingPod());
  const KindMapping& mapping = Mapping("Pod");
  EXPECT_EQ(mapping.resource.ToString(), "pods");
  Result<Json> kube = mapping.to_kube(object, nullptr);
  ASSERT_TRUE(kube.has_value()) << kube.error().ToString();
  EXPECT_EQ((*kube)["apiVersion"], "v1");
  EXPECT_EQ((*kube)["spec"]["schedulerName"], "strata");
  EXPECT_EQ((*kube)["spec"]["restartPolicy"], "Never");
  EXPECT_EQ((*kube)["spec"]["securityContext"]["runAsNonRoot"], true);
  const Json& container = (*kube)["spec"]["containers"][0];
  EXPECT_EQ(container["name"], "main");
  EXPECT_EQ(container["command"], Json::array({"python3", "train.py"}));
  EXPECT_EQ(container["resources"]["limits"]["nvidia.com/gpu"], "2");
  EXPECT_EQ(container["resources"]["limits"]["cpu"], "1500m");
  EXPECT_EQ((*kube)["metadata"]["labels"][api::kManagedByLabel], "strata");
  EXPECT_TRUE((*kube)["metadata"]["annotations"].contains(api::kPodSpecAnnotation));
  EXPECT_FALSE((*kube)["metadata"].contains("resourceVersion")) << "a create names none";
}

TEST(KindMappingTest, APodRoundTripsThroughTheServersShape) {
  api::Pod pod = TrainingPod();
  const KindMapping& mapping = Mapping("Pod");
  Result<Json> kube = mapping.to_kube(StoreObjectOf(pod), nullptr);
  ASSERT_TRUE(kube.has_value());
  Json stored = AsStored(*kube, 7);
  // The server binds it and its node agent reports it running after one restart.
  stored["spec"]["nodeName"] = "gpu-1";
  stored["status"] = {{"phase", "Running"},
                      {"podIP", "10.0.0.7"},
                      {"containerStatuses", {{{"name", "main"}, {"restartCount", 1}}}}};
  Result<store::Object> back = FromKube(mapping, stored);
  ASSERT_TRUE(back.has_value()) << back.error().ToString();
  EXPECT_EQ(back->resource_version, 7);
  EXPECT_EQ(back->uid, "uid-1");
  EXPECT_EQ(back->labels, pod.metadata.labels) << "the managed-by label is the store's own";
  api::Pod expected = pod;
  expected.spec.node_name = "gpu-1";
  expected.status.phase = api::PodPhase::kRunning;
  expected.status.restart_count = 1;
  expected.status.pod_ip = "10.0.0.7";
  api::Object decoded_object = Decoded(*back);
  const api::Pod* decoded = decoded_object.As<api::Pod>();
  ASSERT_NE(decoded, nullptr);
  expected.metadata.uid = decoded->metadata.uid;
  expected.metadata.resource_version = decoded->metadata.resource_version;
  expected.metadata.creation_timestamp = decoded->metadata.creation_timestamp;
  EXPECT_EQ(*decoded, expected);
}

TEST(KindMappingTest, WhatTheAgentReportsIsStatusANodesCredentialsMayWrite) {
  // NodeRestriction lets a node write a pod's status and nothing else of it: the agent's
  // reports (started-at, endpoint, ...) are status conditions, and a report changes only status.
  api::Pod pod = TrainingPod();
  pod.spec.node_name = "gpu-1";  // bound
  const KindMapping& mapping = Mapping("Pod");
  Json stored = AsStored(*mapping.to_kube(StoreObjectOf(pod), nullptr), 7);
  pod.status.phase = api::PodPhase::kRunning;
  pod.metadata.annotations[api::kStartedAtAnnotation] = "2026-12-06T13:00:00Z";
  pod.metadata.annotations[api::kEndpointAnnotation] = "10.0.0.7:8000";
  pod.metadata.annotations[api::kReadyAtAnnotation] = "2026-12-06T13:00:01.123456Z";
  Result<Json> kube = mapping.to_kube(StoreObjectOf(pod), &stored);
  ASSERT_TRUE(kube.has_value()) << kube.error().ToString();
  Json without_status = *kube, stored_without_status = stored;
  without_status.erase("status");
  stored_without_status.erase("status");
  stored_without_status["metadata"].erase("managedFields");  // the store's comparison ignores it
  EXPECT_EQ(without_status, stored_without_status) << "a report is a status write alone";
  auto condition = [&](const Json& object, std::string_view type) {
    for (const Json& c : object["status"]["conditions"])
      if (c["type"] == type) return c;
    return Json();
  };
  EXPECT_EQ(
      condition(*kube, api::kEndpointAnnotation),
      Json({{"type", api::kEndpointAnnotation}, {"status", "True"}, {"message", "10.0.0.7:8000"}}));
  EXPECT_EQ(condition(*kube, api::kReadyAtAnnotation)["message"], "2026-12-06T13:00:01.123456Z")
      << "to the microsecond, as the autoscaler reads it";
  // Read back, they are the pod's annotations again; one the agent no longer reports is gone.
  Json written = AsStored(*kube, 8);
  Result<store::Object> back = FromKube(mapping, written);
  ASSERT_TRUE(back.has_value()) << back.error().ToString();
  api::Object decoded_object = Decoded(*back);
  const api::Pod* decoded = decoded_object.As<api::Pod>();
  ASSERT_NE(decoded, nullptr);
  EXPECT_EQ(decoded->metadata.annotations, pod.metadata.annotations);
  pod.metadata.annotations.erase(api::kReadyAtAnnotation);
  Result<Json> unready = mapping.to_kube(StoreObjectOf(pod), &written);
  ASSERT_TRUE(unready.has_value());
  EXPECT_TRUE(condition(*unready, api::kReadyAtAnnotation).is_null());
  EXPECT_FALSE(condition(*unready, api::kStartedAtAnnotation).is_null());
  // A pod with nothing reported has no conditions to write: its status stays as the server's.
  api::Pod pending = TrainingPod();
  Json created = AsStored(*mapping.to_kube(StoreObjectOf(pending), nullptr), 9);
  EXPECT_FALSE(created["status"].contains("conditions"));
  Result<Json> again = mapping.to_kube(StoreObjectOf(pending), &created);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ((*again)["status"], created["status"]);
}

TEST(KindMappingTest, AnUpdateKeepsTheServersSpecAndWritesStrataStatus) {
  api::Pod pod = TrainingPod();
  const KindMapping& mapping = Mapping("Pod");
  Json stored = AsStored(*mapping.to_kube(StoreObjectOf(pod), nullptr), 7);
  stored["spec"]["nodeName"] = "gpu-1";
  stored["spec"]["dnsPolicy"] = "ClusterFirst";
  pod.spec.node_name = "gpu-1";
  pod.status.phase = api::PodPhase::kFailed;
  pod.status.exit_code = 3;
  pod.status.message = "exit 3";
  pod.status.pod_ip = "10.0.0.7";
  store::Object update = StoreObjectOf(pod);
  Result<Json> kube = mapping.to_kube(update, &stored);
  ASSERT_TRUE(kube.has_value());
  EXPECT_EQ((*kube)["spec"], stored["spec"]) << "a pod's spec is the server's once created";
  EXPECT_EQ((*kube)["metadata"]["resourceVersion"], "7");
  EXPECT_EQ((*kube)["metadata"]["uid"], "uid-1");
  EXPECT_FALSE((*kube)["metadata"].contains("managedFields"));
  EXPECT_EQ((*kube)["status"]["phase"], "Failed");
  EXPECT_EQ((*kube)["status"]["message"], "exit 3");
  EXPECT_EQ((*kube)["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"], 3);
  EXPECT_EQ((*kube)["status"]["podIP"], "10.0.0.7") << "pods share their node's network";
  EXPECT_EQ((*kube)["status"]["hostIPs"], Json::parse(R"([{"ip": "10.0.0.7"}])"));
}

TEST(KindMappingTest, AReplicaIsReadyOnceItsProbePassedAndNotWhileItDrains) {
  api::Pod replica;
  replica.metadata.name = "chat-0-0";
  replica.metadata.namespace_name = "default";
  replica.spec.owner = {"Service", "chat", 0, 0};
  replica.spec.template_.command = {"vllm", "serve"};
  replica.status.phase = api::PodPhase::kRunning;
  const KindMapping& mapping = Mapping("Pod");
  auto ready = [&](const api::Pod& pod) {
    Result<Json> kube = mapping.to_kube(StoreObjectOf(pod), nullptr);
    EXPECT_TRUE(kube.has_value());
    std::string condition;
    for (const Json& c : (*kube)["status"]["conditions"]) {
      if (c["type"] == "Ready") condition = c["status"];
    }
    EXPECT_EQ((*kube)["status"]["containerStatuses"][0]["ready"], condition == "True");
    return condition;
  };
  EXPECT_EQ(ready(replica), "False") << "running, its engine still loading";
  replica.metadata.annotations[api::kReadyAtAnnotation] = "2026-12-02T07:00:00.000001Z";
  EXPECT_EQ(ready(replica), "True");
  replica.metadata.annotations[api::kDrainingAnnotation] = "2026-12-02T07:05:00Z";
  EXPECT_EQ(ready(replica), "False") << "draining";
  api::Pod worker = TrainingPod();
  worker.status.phase = api::PodPhase::kRunning;
  EXPECT_EQ(ready(worker), "True") << "a training pod serves nothing: running is ready";
}

TEST(KindMappingTest, APodWithoutStrataSpecIsNamedAsSuch) {
  Json foreign = {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata",
       {{"name", "p"}, {"namespace", "default"}, {"labels", {{api::kManagedByLabel, "strata"}}}}},
      {"spec", Json::object()}};
  Result<store::Object> back = FromKube(Mapping("Pod"), foreign);
  ASSERT_FALSE(back.has_value());
  EXPECT_THAT(back.error().message(), HasSubstr(api::kPodSpecAnnotation));
}

TEST(KindMappingTest, ANodeKeepsItsGpusInAnAnnotationAndItsCapacityInV1Resources) {
  api::Node node;
  node.metadata.name = "gpu-1";
  node.metadata.labels = {{"topology.kubernetes.io/zone", "a"}};
  node.spec.taints = {{"dedicated", "gpu", "NoSchedule"}};
  node.status.cpu = Quantity::FromUnits(64);
  node.status.memory = *Quantity::Parse("512Gi");
  for (int i = 0; i < 2; ++i) {
    api::NodeGpu gpu;
    gpu.index = i;
    gpu.uuid = "GPU-" + std::to_string(i);
    gpu.model = "H100-80GB";
    gpu.memory = *Quantity::Parse("80Gi");
    gpu.nvlink_island = 0;
    node.status.gpus.push_back(gpu);
  }
  node.status.conditions = {
      {"Ready", "True", "Heartbeat", "", "2026-12-02T07:00:00Z", "2026-12-02T06:00:00Z"}};
  const KindMapping& mapping = Mapping("Node");
  Result<Json> kube = mapping.to_kube(StoreObjectOf(node), nullptr);
  ASSERT_TRUE(kube.has_value());
  EXPECT_EQ((*kube)["status"]["allocatable"]["nvidia.com/gpu"], "2");
  EXPECT_EQ((*kube)["status"]["capacity"]["memory"], "512Gi");
  EXPECT_EQ((*kube)["spec"]["taints"][0]["key"], "dedicated");
  Result<store::Object> back = FromKube(mapping, AsStored(*kube, 3));
  ASSERT_TRUE(back.has_value()) << back.error().ToString();
  api::Object decoded_object = Decoded(*back);
  const api::Node* decoded = decoded_object.As<api::Node>();
  ASSERT_NE(decoded, nullptr);
  EXPECT_EQ(decoded->spec, node.spec);
  EXPECT_EQ(decoded->status, node.status);
  EXPECT_EQ(decoded->metadata.labels, node.metadata.labels);
  EXPECT_TRUE(decoded->metadata.annotations.empty()) << "the inventory annotation is the store's";
}

TEST(KindMappingTest, ANodeUpdateKeepsWhatKubernetesPutThereButNotStrataLeftovers) {
  api::Node node;
  node.metadata.name = "gpu-1";
  node.metadata.annotations = {{"strata.dev/address", "10.0.0.1"}};
  const KindMapping& mapping = Mapping("Node");
  Json stored = AsStored(*mapping.to_kube(StoreObjectOf(node), nullptr), 3);
  // What Kubernetes' controllers add, and what strata wrote once and no longer does.
  stored["metadata"]["annotations"]["node.alpha.kubernetes.io/ttl"] = "0";
  stored["metadata"]["annotations"]["strata.dev/draining"] = "2026-12-02T07:00:00Z";
  stored["metadata"]["labels"]["kubernetes.io/os"] = "linux";
  stored["spec"]["taints"] = {{{"key", "node.kubernetes.io/not-ready"}, {"effect", "NoSchedule"}}};
  Result<Json> update = mapping.to_kube(StoreObjectOf(node), &stored);
  ASSERT_TRUE(update.has_value());
  const Json& annotations = (*update)["metadata"]["annotations"];
  EXPECT_EQ(annotations["node.alpha.kubernetes.io/ttl"], "0");
  EXPECT_EQ(annotations["strata.dev/address"], "10.0.0.1");
  EXPECT_FALSE(annotations.contains("strata.dev/draining"));
  EXPECT_EQ((*update)["metadata"]["labels"]["kubernetes.io/os"], "linux");
  EXPECT_EQ((*update)["spec"]["taints"][0]["key"], "node.kubernetes.io/not-ready");
  Result<store::Object> back = FromKube(mapping, stored);
  ASSERT_TRUE(back.has_value());
  api::Object decoded_object = Decoded(*back);
  EXPECT_TRUE(decoded_object.As<api::Node>()->spec.taints.empty())
      << "Kubernetes' own taints are not strata's to show or write";
}

TEST(KindMappingTest, ANodesKubeletEndpointIsItsInternalIpAndDaemonEndpoint) {
  api::Node node;
  node.metadata.name = "gpu-1";
  node.metadata.annotations = {{api::kKubeletEndpointAnnotation, "127.0.0.1:40123"}};
  const KindMapping& mapping = Mapping("Node");
  Result<Json> kube = mapping.to_kube(StoreObjectOf(node), nullptr);
  ASSERT_TRUE(kube.has_value());
  EXPECT_EQ((*kube)["status"]["addresses"],
            Json::parse(R"([{"type": "InternalIP", "address": "127.0.0.1"}])"));
  EXPECT_EQ((*kube)["status"]["daemonEndpoints"]["kubeletEndpoint"]["Port"], 40123);
  node.metadata.annotations[api::kKubeletEndpointAnnotation] = "[::1]:10250";
  kube = mapping.to_kube(StoreObjectOf(node), nullptr);
  EXPECT_EQ((*kube)["status"]["addresses"][0]["address"], "::1");
  // A malformed one leaves the server's status as it was.
  Json stored = AsStored(*kube, 4);
  node.metadata.annotations[api::kKubeletEndpointAnnotation] = "127.0.0.1:99999";
  kube = mapping.to_kube(StoreObjectOf(node), &stored);
  EXPECT_EQ((*kube)["status"]["daemonEndpoints"]["kubeletEndpoint"]["Port"], 10250);
}

TEST(KindMappingTest, ANodeStrataDidNotRegisterReadsItsGpusFromDiscoveryLabels) {
  Json kwok = {{"apiVersion", "v1"},
               {"kind", "Node"},
               {"metadata",
                {{"name", "kwok-node-0"},
                 {"resourceVersion", "12"},
                 {"labels",
                  {{"nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"},
                   {"nvidia.com/gpu.memory", "81559"}}}}},
               {"spec",
                {{"taints",
                  {{{"key", "kwok.x-k8s.io/node"}, {"value", "fake"}, {"effect", "NoSchedule"}}}}}},
               {"status",
                {{"allocatable", {{"cpu", "32"}, {"nvidia.com/gpu", "8"}, {"pods", "110"}}},
                 {"capacity", {{"cpu", "32"}, {"memory", "256Gi"}, {"nvidia.com/gpu", "8"}}},
                 {"conditions",
                  {{{"type", "Ready"},
                    {"status", "True"},
                    {"lastHeartbeatTime", "2026-12-02T07:00:00Z"}}}}}}};
  Result<store::Object> back = FromKube(Mapping("Node"), kwok);
  ASSERT_TRUE(back.has_value()) << back.error().ToString();
  api::Object decoded_object = Decoded(*back);
  const api::Node* node = decoded_object.As<api::Node>();
  ASSERT_NE(node, nullptr);
  ASSERT_EQ(node->status.gpus.size(), 8u);
  EXPECT_EQ(node->status.gpus[7].index, 7);
  EXPECT_EQ(node->status.gpus[0].model, "NVIDIA-H100-80GB-HBM3");
  EXPECT_EQ(node->status.gpus[0].memory, *Quantity::Parse("81559Mi"));
  EXPECT_EQ(node->status.cpu, Quantity::FromUnits(32));
  ASSERT_EQ(node->spec.taints.size(), 1u);
  EXPECT_EQ(node->spec.taints[0].value, "fake");
  ASSERT_EQ(node->status.conditions.size(), 1u);
  EXPECT_EQ(node->status.conditions[0].status, "True");
}

TEST(KindMappingTest, AnEventIsAV1EventFromStrata) {
  api::Event event;
  event.metadata.name = "train.1";
  event.metadata.namespace_name = "team-a";
  event.involved_object = {"Job", "train", "team-a", "u-1"};
  event.type = "Warning";
  event.reason = "GroupRestart";
  event.message = "worker 1 exited 1; restarting the group";
  event.count = 2;
  event.first_timestamp = "2026-12-02T07:00:00Z";
  event.last_timestamp = "2026-12-02T07:01:00Z";
  const KindMapping& mapping = Mapping("Event");
  Result<Json> kube = mapping.to_kube(StoreObjectOf(event), nullptr);
  ASSERT_TRUE(kube.has_value());
  EXPECT_EQ((*kube)["source"]["component"], "strata");
  Json stored = AsStored(*kube, 9);
  stored["involvedObject"]["apiVersion"] = "strata.dev/v1alpha1";
  stored["reportingComponent"] = "";
  Result<store::Object> back = FromKube(mapping, stored);
  ASSERT_TRUE(back.has_value());
  api::Object decoded_object = Decoded(*back);
  const api::Event* decoded = decoded_object.As<api::Event>();
  ASSERT_NE(decoded, nullptr);
  EXPECT_EQ(decoded->involved_object, event.involved_object);
  EXPECT_EQ(decoded->message, event.message);
  EXPECT_EQ(decoded->count, 2);
}

TEST(KindMappingTest, ANamespaceIsAV1NamespaceAndKeepsWhatTheClusterPutOnIt) {
  api::Namespace ns;
  ns.metadata.name = "team-a";
  ns.metadata.labels = {{"team", "a"}};
  const KindMapping& mapping = Mapping("Namespace");
  EXPECT_FALSE(mapping.namespaced);
  Result<Json> kube = mapping.to_kube(StoreObjectOf(ns), nullptr);
  ASSERT_TRUE(kube.has_value());
  EXPECT_EQ((*kube)["apiVersion"], "v1");
  EXPECT_EQ((*kube)["metadata"]["labels"]["team"], "a");
  Json stored = AsStored(*kube, 4);
  stored["metadata"]["labels"]["kubernetes.io/metadata.name"] = "team-a";
  stored["spec"] = {{"finalizers", {"kubernetes"}}};
  stored["status"] = {{"phase", "Active"}};
  Result<store::Object> back = FromKube(mapping, stored);
  ASSERT_TRUE(back.has_value());
  api::Object decoded_object = Decoded(*back);
  const api::Namespace* decoded = decoded_object.As<api::Namespace>();
  ASSERT_NE(decoded, nullptr);
  EXPECT_EQ(decoded->metadata.name, "team-a");
  // The label Kubernetes adds is kept by a later write of strata's.
  Result<Json> again = mapping.to_kube(*back, &stored);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ((*again)["metadata"]["labels"]["kubernetes.io/metadata.name"], "team-a");
}

TEST(KindMappingTest, ConfigMapsAndSecretsAreTheClustersOwnV1Objects) {
  api::Secret secret;
  secret.metadata.name = "creds";
  secret.metadata.namespace_name = "team-a";
  secret.data = {{"token", "s3cret"}};
  const KindMapping& secrets = Mapping("Secret");
  EXPECT_EQ(secrets.resource.ToString(), "secrets");
  EXPECT_TRUE(secrets.namespaced);
  Result<Json> kube = secrets.to_kube(StoreObjectOf(secret), nullptr);
  ASSERT_TRUE(kube.has_value());
  EXPECT_EQ((*kube)["apiVersion"], "v1");
  EXPECT_EQ((*kube)["type"], "Opaque");
  EXPECT_EQ((*kube)["data"]["token"], "czNjcmV0");  // base64, as on every v1 Secret
  Result<store::Object> back = FromKube(secrets, AsStored(*kube, 3));
  ASSERT_TRUE(back.has_value());
  api::Object decoded_secret = Decoded(*back);
  ASSERT_NE(decoded_secret.As<api::Secret>(), nullptr);
  EXPECT_EQ(decoded_secret.As<api::Secret>()->data, secret.data);

  // One kubectl create configmap made: strata reads its text and bytes.
  const Json made = AsStored(Json::parse(R"({"apiVersion": "v1", "kind": "ConfigMap",
      "metadata": {"name": "settings", "namespace": "team-a"},
      "data": {"GREETING": "hello"}, "binaryData": {"blob": "AAE="}, "immutable": true})"),
                             5);
  Result<store::Object> config = FromKube(Mapping("ConfigMap"), made);
  ASSERT_TRUE(config.has_value());
  api::Object decoded_config = Decoded(*config);
  const api::ConfigMap* map = decoded_config.As<api::ConfigMap>();
  ASSERT_NE(map, nullptr);
  EXPECT_EQ(map->data.at("GREETING"), "hello");
  EXPECT_EQ(map->binary_data.at("blob"), std::string("\0\1", 2));
  EXPECT_TRUE(map->immutable);
}

TEST(KindMappingTest, StrataKindsAreCustomResourcesWithTheirBodyAsItIs) {
  api::Job job;
  job.metadata.name = "train";
  job.metadata.namespace_name = "team-a";
  job.spec.replicas = 4;
  job.spec.template_.command = {"python3", "train.py"};
  const KindMapping& mapping = Mapping("Job");
  EXPECT_EQ(mapping.resource.ToString(), "jobs.strata.dev");
  EXPECT_TRUE(mapping.namespaced);
  EXPECT_TRUE(mapping.status_subresource);
  EXPECT_FALSE(Mapping("Queue").namespaced);
  Result<Json> kube = mapping.to_kube(StoreObjectOf(job), nullptr);
  ASSERT_TRUE(kube.has_value());
  EXPECT_EQ((*kube)["apiVersion"], "strata.dev/v1alpha1");
  EXPECT_EQ((*kube)["spec"]["replicas"], 4);
  Result<store::Object> back = FromKube(mapping, AsStored(*kube, 4));
  ASSERT_TRUE(back.has_value());
  EXPECT_FALSE(back->body["metadata"].contains("managedFields"));
  api::Object decoded_object = Decoded(*back);
  const api::Job* decoded = decoded_object.As<api::Job>();
  ASSERT_NE(decoded, nullptr);
  EXPECT_EQ(decoded->spec, job.spec);
}

TEST(KindMappingTest, AKindWithNoHomeOnKubernetesIsRefusedByName) {
  Result<const KindMapping*> mapping = FindKindMapping("Lease");
  ASSERT_FALSE(mapping.has_value());
  EXPECT_EQ(mapping.error().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(mapping.error().message(), HasSubstr("\"Lease\""));
}

}  // namespace
}  // namespace strata::kubestore
