// Pods strata did not make, as a virtual kubelet's store reads and reports them: the v1 spec ->
// what the node agent runs, and the agent's status -> the v1 status a kubelet writes, without a
// server (what one would store is written out by hand, with the fields its defaulting adds).
#include "kubestore/foreign_pod_mapping.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/annotations.h"
#include "api/encode.h"
#include "api/manifest.h"
#include "api/object.h"
#include "api/pod_contract.h"
#include "store/object.h"

namespace strata::kubestore {
namespace {

using ::testing::HasSubstr;

// A ReplicaSet's pod as the API server holds it once bound: defaulted fields, the service
// account's projected volume, an image, a readiness probe on a declared port.
Json DeploymentPod() {
  return Json::parse(R"json({
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {
      "name": "chat-engine-5d8f-abcde", "namespace": "team-a", "uid": "uid-7",
      "resourceVersion": "41", "creationTimestamp": "2026-12-06T10:00:00Z",
      "labels": {"app": "chat-engine", "pod-template-hash": "5d8f"},
      "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                           "name": "chat-engine-5d8f", "uid": "rs-uid", "controller": true}],
      "managedFields": [{"manager": "kube-controller-manager"}]
    },
    "spec": {
      "nodeName": "agent-node", "schedulerName": "default-scheduler",
      "restartPolicy": "Always", "dnsPolicy": "ClusterFirst",
      "terminationGracePeriodSeconds": 30, "serviceAccountName": "default",
      "securityContext": {}, "enableServiceLinks": true,
      "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists",
                       "effect": "NoExecute", "tolerationSeconds": 300}],
      "volumes": [{"name": "kube-api-access-x", "projected": {"sources": []}}],
      "containers": [{
        "name": "engine", "image": "registry.example/strata:test",
        "imagePullPolicy": "IfNotPresent",
        "command": ["/bin/strata", "engine-sim"],
        "args": ["--host", "$(POD_IP)", "--port", "8000"],
        "workingDir": "/tmp",
        "env": [{"name": "POD_IP", "valueFrom": {"fieldRef": {"apiVersion": "v1",
                                                               "fieldPath": "status.podIP"}}},
                {"name": "MODEL", "value": "tiny"}],
        "ports": [{"containerPort": 8000, "protocol": "TCP"}],
        "resources": {"limits": {"cpu": "2", "ephemeral-storage": "1Gi"},
                      "requests": {"cpu": "1"}},
        "readinessProbe": {"httpGet": {"path": "/health", "port": 8000, "scheme": "HTTP"},
                           "periodSeconds": 2, "timeoutSeconds": 1, "successThreshold": 1,
                           "failureThreshold": 3},
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
        "volumeMounts": [{"name": "kube-api-access-x", "mountPath": "/var/run/secrets"}]
      }]
    },
    "status": {"phase": "Pending", "qosClass": "Burstable",
               "conditions": [{"type": "PodScheduled", "status": "True"}]}
  })json");
}

// The pod `body` decodes to.
api::Pod Decoded(const Json& body) {
  Result<api::Object> decoded = api::DecodeObject(body);
  EXPECT_TRUE(decoded.has_value()) << decoded.error().ToString() << "\n" << body.dump(2);
  return decoded && decoded->As<api::Pod>() != nullptr ? *decoded->As<api::Pod>() : api::Pod();
}

// The store object of `server`, the v1 Pod the server holds.
store::Object StoreObject(const Json& server) {
  Result<Json> body = ForeignPodFromKube(server);
  EXPECT_TRUE(body.has_value());
  Result<store::Object> object = store::ObjectFromBody("Pod", *body);
  EXPECT_TRUE(object.has_value()) << object.error().ToString();
  return *object;
}

store::Object WithPod(store::Object object, const api::Pod& pod) {
  object.body = api::EncodeObject(api::Object(pod));
  return object;
}

TEST(ForeignPodMappingTest, APodOfSomeoneElsesIsForeign) {
  EXPECT_TRUE(IsForeignPod(DeploymentPod()));
  Json ours = DeploymentPod();
  ours["metadata"]["labels"][api::kManagedByLabel] = api::kManagedByStrata;
  EXPECT_FALSE(IsForeignPod(ours));
}

TEST(ForeignPodMappingTest, ItsContainerBecomesWhatTheAgentRuns) {
  Result<Json> body = ForeignPodFromKube(DeploymentPod());
  ASSERT_TRUE(body.has_value()) << body.error().ToString();
  api::Pod pod = Decoded(*body);
  EXPECT_EQ(pod.metadata.name, "chat-engine-5d8f-abcde");
  EXPECT_EQ(pod.metadata.namespace_name, "team-a");
  EXPECT_EQ(pod.metadata.labels.at("app"), "chat-engine");
  ASSERT_NE(api::PodAnnotation(pod, api::kForeignPodAnnotation), nullptr);
  EXPECT_EQ(*api::PodAnnotation(pod, api::kForeignPodAnnotation), "engine");
  EXPECT_EQ(api::PodAnnotation(pod, api::kCannotRunAnnotation), nullptr);
  EXPECT_TRUE(pod.spec.owner.kind.empty()) << "no strata controller owns it";
  EXPECT_EQ(pod.spec.node_name, "agent-node");
  EXPECT_EQ(pod.spec.restart_policy, "Always");
  const api::ProcessTemplate& process = pod.spec.template_;
  EXPECT_EQ(process.command, (std::vector<std::string>{"/bin/strata", "engine-sim"}));
  EXPECT_EQ(process.args, (std::vector<std::string>{"--host", "$(POD_IP)", "--port", "8000"}));
  EXPECT_EQ(process.working_dir, "/tmp");
  ASSERT_EQ(process.env.size(), 2u);
  ASSERT_TRUE(process.env[0].value_from.has_value());
  EXPECT_EQ(process.env[0].value_from->path, "status.podIP");
  EXPECT_EQ(process.env[1].value, "tiny");
  ASSERT_TRUE(process.readiness_probe.has_value());
  EXPECT_EQ(process.readiness_probe->port, 8000);
  EXPECT_EQ(process.readiness_probe->path, "/health");
  EXPECT_EQ(process.readiness_probe->period_seconds, 2);
  EXPECT_EQ(pod.spec.resources.cpu.ToString(), "1");  // ephemeral-storage is not a process's
  const std::string* ignored = api::PodAnnotation(pod, api::kIgnoredFieldsAnnotation);
  ASSERT_NE(ignored, nullptr);
  EXPECT_THAT(*ignored, HasSubstr("image \"registry.example/strata:test\" ignored"));
  EXPECT_EQ(pod.status.phase, api::PodPhase::kPending);
}

TEST(ForeignPodMappingTest, ItsVariablesAreTheUsersEvenWhereStrataReservesTheName) {
  Json server = DeploymentPod();
  server["spec"]["containers"][0]["env"] =
      Json::parse(R"([{"name": "MASTER_ADDR", "value": "job-0"}, {"name": "RANK", "value": "3"},
                      {"name": "CUDA_VISIBLE_DEVICES", "value": "0"}])");
  api::Pod pod = Decoded(*ForeignPodFromKube(server));
  EXPECT_EQ(api::PodAnnotation(pod, api::kCannotRunAnnotation), nullptr)
      << *api::PodAnnotation(pod, api::kCannotRunAnnotation);
  ASSERT_EQ(pod.spec.template_.env.size(), 3u);
  EXPECT_EQ(pod.spec.template_.env[1].name, "RANK");
  EXPECT_EQ(pod.spec.template_.env[1].value, "3");
}

TEST(ForeignPodMappingTest, AContainerWithoutACommandCannotRunAndSaysWhichOne) {
  Json server = DeploymentPod();
  server["spec"]["containers"][0].erase("command");
  api::Pod pod = Decoded(*ForeignPodFromKube(server));
  const std::string* why = api::PodAnnotation(pod, api::kCannotRunAnnotation);
  ASSERT_NE(why, nullptr);
  EXPECT_THAT(*why, HasSubstr("container \"engine\" has no command"));
  EXPECT_THAT(*why, HasSubstr("registry.example/strata:test"));
}

TEST(ForeignPodMappingTest, SeveralContainersOrInitContainersCannotRun) {
  Json two = DeploymentPod();
  Json sidecar = two["spec"]["containers"][0];
  sidecar["name"] = "proxy";
  two["spec"]["containers"].push_back(sidecar);
  const api::Pod several = Decoded(*ForeignPodFromKube(two));
  const std::string* why = api::PodAnnotation(several, api::kCannotRunAnnotation);
  ASSERT_NE(why, nullptr);
  EXPECT_THAT(*why, HasSubstr("2 containers (engine, proxy)"));
  Json init = DeploymentPod();
  init["spec"]["initContainers"] = Json::array({sidecar});
  api::Pod pod = Decoded(*ForeignPodFromKube(init));
  ASSERT_NE(api::PodAnnotation(pod, api::kCannotRunAnnotation), nullptr);
  EXPECT_THAT(*api::PodAnnotation(pod, api::kCannotRunAnnotation), HasSubstr("initContainers"));
}

TEST(ForeignPodMappingTest, APodStratasModelCannotHoldCannotRunAndSaysWhy) {
  Json server = DeploymentPod();
  server["spec"]["restartPolicy"] = "Sometimes";  // no server admits it; strata's model neither
  server["metadata"]["annotations"] = {{api::kStopRequestedAnnotation, "Preempted"}};
  api::Pod pod = Decoded(*ForeignPodFromKube(server));
  const std::string* why = api::PodAnnotation(pod, api::kCannotRunAnnotation);
  ASSERT_NE(why, nullptr);
  EXPECT_THAT(*why, HasSubstr("cannot run this pod as a local process"));
  EXPECT_THAT(*why, HasSubstr("restartPolicy"));
  EXPECT_EQ(*api::PodAnnotation(pod, api::kForeignPodAnnotation), "engine");
  EXPECT_EQ(api::StopRequested(pod), "") << "strata's annotations on it are not the user's to set";
}

TEST(ForeignPodMappingTest, TheAgentsStatusIsWrittenAsAKubeletWritesIt) {
  const Json server = DeploymentPod();
  store::Object object = StoreObject(server);
  api::Pod pod = Decoded(object.body);
  pod.status.phase = api::PodPhase::kRunning;
  pod.status.pod_ip = "127.0.101.1";
  pod.metadata.annotations[api::kStartedAtAnnotation] = "2026-12-06T10:00:05Z";
  pod.metadata.annotations[api::kReadyAtAnnotation] = "2026-12-06T10:00:07.123456Z";
  Result<Json> written = ForeignPodToKube(WithPod(object, pod), server);
  ASSERT_TRUE(written.has_value()) << written.error().ToString();
  EXPECT_EQ((*written)["spec"], server["spec"]) << "a kubelet never writes the spec";
  EXPECT_EQ((*written)["metadata"]["labels"], server["metadata"]["labels"]);
  EXPECT_EQ((*written)["metadata"]["resourceVersion"], "41");
  EXPECT_FALSE((*written)["metadata"].contains("managedFields"));
  const Json& status = (*written)["status"];
  EXPECT_EQ(status["phase"], "Running");
  EXPECT_EQ(status["qosClass"], "Burstable") << "what others wrote stays";
  EXPECT_EQ(status["podIP"], "127.0.101.1");
  EXPECT_EQ(status["podIPs"], Json::parse(R"([{"ip": "127.0.101.1"}])"));
  EXPECT_EQ(status["startTime"], "2026-12-06T10:00:05Z");
  std::map<std::string, Json> conditions;
  for (const Json& condition : status["conditions"]) conditions[condition["type"]] = condition;
  EXPECT_EQ(conditions["PodScheduled"]["status"], "True");
  EXPECT_EQ(conditions["Initialized"]["status"], "True");
  EXPECT_EQ(conditions["ContainersReady"]["status"], "True");
  EXPECT_EQ(conditions["Ready"]["status"], "True");
  EXPECT_EQ(conditions["Ready"]["lastTransitionTime"], "2026-12-06T10:00:07Z");
  ASSERT_EQ(status["containerStatuses"].size(), 1u);
  const Json& container = status["containerStatuses"][0];
  EXPECT_EQ(container["name"], "engine");
  EXPECT_EQ(container["image"], "registry.example/strata:test");
  EXPECT_EQ(container["ready"], true);
  EXPECT_EQ(container["started"], true);
  EXPECT_EQ(container["restartCount"], 0);
  EXPECT_EQ(container["state"]["running"]["startedAt"], "2026-12-06T10:00:05Z");

  // Read back, it is what the agent wrote: its next pass has nothing to write.
  Json stored = *written;
  stored["metadata"]["resourceVersion"] = "42";
  api::Pod read = Decoded(*ForeignPodFromKube(stored));
  EXPECT_EQ(read.status, pod.status);
  EXPECT_EQ(*api::PodAnnotation(read, api::kStartedAtAnnotation), "2026-12-06T10:00:05Z");
  EXPECT_EQ(*api::PodAnnotation(read, api::kReadyAtAnnotation), "2026-12-06T10:00:07Z");
  api::Pod again = read;
  Result<Json> rewritten = ForeignPodToKube(WithPod(StoreObject(stored), again), stored);
  ASSERT_TRUE(rewritten.has_value());
  EXPECT_EQ((*rewritten)["status"], stored["status"]);
}

TEST(ForeignPodMappingTest, NotReadyUntilItsReadinessProbePasses) {
  const Json server = DeploymentPod();
  store::Object object = StoreObject(server);
  api::Pod pod = Decoded(object.body);
  pod.status.phase = api::PodPhase::kRunning;
  pod.metadata.annotations[api::kStartedAtAnnotation] = "2026-12-06T10:00:05Z";
  Json status = (*ForeignPodToKube(WithPod(object, pod), server))["status"];
  for (const Json& condition : status["conditions"]) {
    if (condition["type"] == "Ready") EXPECT_EQ(condition["status"], "False");
  }
  EXPECT_EQ(status["containerStatuses"][0]["ready"], false);
}

TEST(ForeignPodMappingTest, AnEndedOrBackingOffContainerIsReportedWithItsState) {
  const Json server = DeploymentPod();
  store::Object object = StoreObject(server);
  api::Pod pod = Decoded(object.body);
  pod.status.phase = api::PodPhase::kFailed;
  pod.status.exit_code = 3;
  pod.status.reason = "Error";
  pod.status.message = "engine exited with code 3";
  pod.metadata.annotations[api::kStartedAtAnnotation] = "2026-12-06T10:00:05Z";
  pod.metadata.annotations[api::kFinishedAtAnnotation] = "2026-12-06T10:01:00Z";
  Json status = (*ForeignPodToKube(WithPod(object, pod), server))["status"];
  EXPECT_EQ(status["phase"], "Failed");
  const Json& terminated = status["containerStatuses"][0]["state"]["terminated"];
  EXPECT_EQ(terminated["exitCode"], 3);
  EXPECT_EQ(terminated["reason"], "Error");
  EXPECT_EQ(terminated["finishedAt"], "2026-12-06T10:01:00Z");

  pod.status = {};
  pod.status.phase = api::PodPhase::kRunning;
  pod.status.restart_count = 2;
  pod.status.reason = "CrashLoopBackOff";
  pod.status.message = "back-off 40s restarting container engine";
  status = (*ForeignPodToKube(WithPod(object, pod), server))["status"];
  EXPECT_EQ(status["phase"], "Running");
  const Json& container = status["containerStatuses"][0];
  EXPECT_EQ(container["restartCount"], 2);
  EXPECT_EQ(container["ready"], false);
  EXPECT_EQ(container["state"]["waiting"]["reason"], "CrashLoopBackOff");
}

TEST(ForeignPodMappingTest, ADeletedPodReadsAsOneToStopWithinItsGrace) {
  Json server = DeploymentPod();
  server["metadata"]["deletionTimestamp"] = "2026-12-06T10:05:00Z";
  server["metadata"]["deletionGracePeriodSeconds"] = 30;
  api::Pod pod = Decoded(*ForeignPodFromKube(server));
  ASSERT_NE(api::PodAnnotation(pod, api::kForeignDeletingAnnotation), nullptr);
  EXPECT_EQ(*api::PodAnnotation(pod, api::kForeignDeletingAnnotation), "30");
  EXPECT_EQ(api::StopRequested(pod), "Deleted");
}

TEST(ForeignPodMappingTest, ItsGpusAreReportedAsAllocatedResourcesAndReadBack) {
  Json server = DeploymentPod();
  server["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = "2";
  store::Object object = StoreObject(server);
  api::Pod pod = Decoded(object.body);
  EXPECT_EQ(pod.spec.resources.gpu.Units(), 2);
  EXPECT_EQ(api::PodAnnotation(pod, api::kGpuShareRequestAnnotation), nullptr);
  pod.status.phase = api::PodPhase::kRunning;
  pod.metadata.annotations[api::kStartedAtAnnotation] = "2026-12-06T10:00:05Z";
  const std::string gpus =
      R"([{"health":"Healthy","resourceID":"GPU-a"},{"health":"Unhealthy","resourceID":"GPU-b"}])";
  pod.metadata.annotations[api::kAllocatedGpusAnnotation] = gpus;
  Result<Json> written = ForeignPodToKube(WithPod(object, pod), server);
  ASSERT_TRUE(written.has_value()) << written.error().ToString();
  // v1 ContainerStatus.allocatedResourcesStatus, as the kubelet reports a device plugin's.
  EXPECT_EQ((*written)["status"]["containerStatuses"][0]["allocatedResourcesStatus"],
            Json::parse(R"([{"name": "nvidia.com/gpu", "resources": [
                {"resourceID": "GPU-a", "health": "Healthy"},
                {"resourceID": "GPU-b", "health": "Unhealthy"}]}])"));
  // Read back, a restarted agent learns what the pod holds.
  api::Pod read = Decoded(*ForeignPodFromKube(*written));
  ASSERT_NE(api::PodAnnotation(read, api::kAllocatedGpusAnnotation), nullptr);
  EXPECT_EQ(*api::PodAnnotation(read, api::kAllocatedGpusAnnotation), gpus);
}

TEST(ForeignPodMappingTest, AShareOfAGpuIsSaidOnThePod) {
  Json server = DeploymentPod();
  Json& limits = server["spec"]["containers"][0]["resources"]["limits"];
  limits["nvidia.com/gpu"] = "1";
  limits["nvidia.com/gpumem"] = "4000";
  limits["nvidia.com/gpucores"] = "30";
  api::Pod pod = Decoded(StoreObject(server).body);
  const std::string* share = api::PodAnnotation(pod, api::kGpuShareRequestAnnotation);
  ASSERT_NE(share, nullptr);
  EXPECT_EQ(*share, "nvidia.com/gpucores=30, nvidia.com/gpumem=4000");
  EXPECT_EQ(api::PodAnnotation(pod, api::kCannotRunAnnotation), nullptr)
      << "the agent refuses it at admission, by name";
}

}  // namespace
}  // namespace strata::kubestore
