#include "api/pod_v1_form.h"

#include <gtest/gtest.h>

#include "api/annotations.h"
#include "api/encode.h"
#include "api/manifest.h"
#include "api/pod.h"
#include "api/served_form.h"

namespace strata::api {
namespace {

using Json = nlohmann::json;

Json StoredPod() {
  return {{"apiVersion", "strata.dev/v1alpha1"},
          {"kind", "Pod"},
          {"metadata",
           {{"name", "trainer-0"},
            {"namespace", "team-a"},
            {"uid", "u-1"},
            {"resourceVersion", "7"},
            {"labels", {{"app", "train"}}}}},
          {"spec",
           {{"nodeName", "node-3"},
            {"restartPolicy", "Never"},
            {"resources", {{"gpu", "2"}, {"cpu", "4"}}},
            {"assignedGpus", {{{"index", 2}}, {{"index", 3}}}},
            {"template", {{"command", {"python3", "train.py"}}, {"image", "pytorch"}}}}},
          {"status", {{"phase", "Running"}, {"restartCount", 1}, {"podIP", "10.0.0.3"}}}};
}

TEST(PodV1FormTest, KubernetesClientsReadAV1Pod) {
  Json served = StoredPod();
  ToServedForm(served);
  EXPECT_EQ(served["apiVersion"], "v1");
  EXPECT_TRUE(IsV1PodShape(served));
  EXPECT_EQ(served["metadata"]["uid"], "u-1");
  EXPECT_EQ(served["metadata"]["labels"]["app"], "train");
  const Json& container = served["spec"]["containers"][0];
  EXPECT_EQ(container["name"], "main");
  EXPECT_EQ(container["image"], "pytorch");
  EXPECT_EQ(container["command"], Json({"python3", "train.py"}));
  EXPECT_EQ(container["resources"]["limits"], Json({{"cpu", "4"}, {"nvidia.com/gpu", "2"}}));
  EXPECT_EQ(served["spec"]["nodeName"], "node-3");
  EXPECT_EQ(served["spec"]["restartPolicy"], "Never");
  EXPECT_EQ(served["status"]["phase"], "Running");
  EXPECT_EQ(served["status"]["podIP"], "10.0.0.3");
  EXPECT_EQ(served["status"]["containerStatuses"][0]["restartCount"], 1);
  EXPECT_TRUE(served["status"]["containerStatuses"][0]["state"].contains("running"));
  EXPECT_FALSE(served["spec"].contains("assignedGpus"));
}

TEST(PodV1FormTest, StrataClientsAskForStratasFormByItsGroup) {
  EXPECT_EQ(ServedFormWanted(kStrataFormAccept), ServedForm::kStrata);
  EXPECT_EQ(ServedFormWanted("application/json; g=strata.dev; v=v1alpha1"), ServedForm::kStrata);
  EXPECT_EQ(ServedFormWanted("application/json"), ServedForm::kKubernetes);
  EXPECT_EQ(ServedFormWanted(""), ServedForm::kKubernetes);
  EXPECT_EQ(ServedFormWanted("application/json;as=Table;v=v1;g=meta.k8s.io,application/json"),
            ServedForm::kKubernetes);
  Json pod = StoredPod();
  ToServedForm(pod, ServedForm::kStrata);
  EXPECT_EQ(pod["apiVersion"], "v1");
  EXPECT_EQ(pod["spec"]["assignedGpus"].size(), 2u);
  EXPECT_FALSE(IsV1PodShape(pod));
}

TEST(PodV1FormTest, AServedPodWrittenBackChangesItsLabelsAndAnnotationsOnly) {
  Json served = StoredPod();
  ToServedForm(served);
  served["metadata"]["labels"]["tier"] = "gold";
  served["metadata"]["annotations"] = {{"note", "hi"}};
  served["status"]["phase"] = "Failed";  // the status subresource's, not a PUT's
  Result<Json> stored = StoredPodFromV1(served, StoredPod());
  ASSERT_TRUE(stored) << stored.error().ToString();
  Json expected = StoredPod();
  expected["metadata"]["labels"]["tier"] = "gold";
  expected["metadata"]["annotations"] = {{"note", "hi"}};
  EXPECT_EQ(*stored, expected);
}

TEST(PodV1FormTest, AChangedSpecIsRefusedNamingTheFirstFieldThatDiffers) {
  Json served = StoredPod();
  ToServedForm(served);
  served["spec"]["containers"][0]["env"] = {{{"name", "B"}, {"value", "2"}}};
  Result<Json> stored = StoredPodFromV1(served, StoredPod());
  ASSERT_FALSE(stored);
  EXPECT_EQ(
      stored.error().message().rfind("spec.containers[0].env: a pod's spec does not change", 0), 0u)
      << stored.error().message();

  served = StoredPod();
  ToServedForm(served);
  served["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = "4";
  stored = StoredPodFromV1(served, StoredPod());
  ASSERT_FALSE(stored);
  EXPECT_EQ(stored.error().message().rfind(
                "spec.containers[0].resources.limits.nvidia.com/gpu: a pod's spec", 0),
            0u)
      << stored.error().message();
}

TEST(PodV1FormTest, APodNamesItsJobOrServiceAsItsController) {
  Json pod = StoredPod();
  ToServedForm(pod);
  EXPECT_FALSE(pod["metadata"].contains("ownerReferences")) << "a standalone pod has no owner";

  Json owned = StoredPod();
  owned["spec"]["owner"] = {{"kind", "Job"}, {"name", "trainer"}, {"uid", "job-uid-9"}};
  Json served = owned;
  ToServedForm(served);
  EXPECT_EQ(served["metadata"]["ownerReferences"],
            Json::parse(R"([{"apiVersion": "strata.dev/v1alpha1", "kind": "Job",
                             "name": "trainer", "uid": "job-uid-9", "controller": true}])"));
  EXPECT_FALSE(owned["metadata"].contains("ownerReferences")) << "they are served, not stored";

  // Written back as served: taken. With another controller: refused, naming the field.
  served["metadata"]["labels"]["tier"] = "gold";
  Result<Json> stored = StoredPodFromV1(served, owned);
  ASSERT_TRUE(stored) << stored.error().ToString();
  EXPECT_FALSE((*stored)["metadata"].contains("ownerReferences"));
  EXPECT_EQ((*stored)["metadata"]["labels"]["tier"], "gold");
  served["metadata"]["ownerReferences"][0]["name"] = "another";
  stored = StoredPodFromV1(served, owned);
  ASSERT_FALSE(stored);
  EXPECT_EQ(stored.error().message().rfind("metadata.ownerReferences: ", 0), 0u)
      << stored.error().message();

  // A pod made before owners' uids were recorded names no controller rather than a wrong one.
  owned["spec"]["owner"].erase("uid");
  served = owned;
  ToServedForm(served);
  EXPECT_FALSE(served["metadata"].contains("ownerReferences"));
}

TEST(PodV1FormTest, RequestsBelowLimitsAreReservedAndLimitsEnforced) {
  const Json manifest = Json::parse(R"({
    "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "burst", "namespace": "default"},
    "spec": {"containers": [{"name": "main", "image": "x", "command": ["sleep", "1"],
      "resources": {"requests": {"cpu": "250m", "memory": "64Mi"},
                    "limits": {"cpu": "1", "memory": "256Mi"}}}]}})");
  Result<Object> decoded = DecodeObject(manifest);
  ASSERT_TRUE(decoded) << decoded.error().ToString();
  const ResourceRequest& resources = decoded->As<Pod>()->spec.resources;
  EXPECT_EQ(resources.cpu.ToString(), "250m");
  EXPECT_EQ(resources.memory.ToString(), "64Mi");
  EXPECT_EQ(resources.EnforcedCpu().ToString(), "1");
  EXPECT_EQ(resources.EnforcedMemory().ToString(), "256Mi");
  // Stored with both, and served back to Kubernetes' clients as they gave them.
  Json stored = EncodeObject(*decoded);
  EXPECT_EQ(stored["spec"]["resources"]["limits"], Json({{"cpu", "1"}, {"memory", "256Mi"}}));
  ToServedForm(stored);
  EXPECT_EQ(stored["spec"]["containers"][0]["resources"],
            Json({{"limits", {{"cpu", "1"}, {"memory", "256Mi"}}},
                  {"requests", {{"cpu", "250m"}, {"memory", "64Mi"}}}}));

  // A request above its limit is refused, as Kubernetes refuses it.
  Json over = manifest;
  over["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "2";
  Result<Object> refused = DecodeObject(over);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message().find(
                "spec.containers[0].resources.requests.cpu: must be at most the limit"),
            std::string::npos)
      << refused.error().message();
}

}  // namespace
}  // namespace strata::api

namespace strata::api {
namespace {

TEST(PodV1FormTest, APodWithAReadinessProbeServesOnlyWhileItPasses) {
  Json pod = StoredPod();
  EXPECT_TRUE(PodServes(pod)) << "a running pod without a probe";
  pod["spec"]["template"]["readinessProbe"] = {{"exec", {{"command", {"true"}}}}};
  EXPECT_FALSE(PodServes(pod));
  pod["metadata"]["annotations"][kReadyAtAnnotation] = "2026-01-01T00:00:00.000000Z";
  EXPECT_TRUE(PodServes(pod));
}

}  // namespace
}  // namespace strata::api
