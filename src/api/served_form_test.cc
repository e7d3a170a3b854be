#include "api/served_form.h"

#include <gtest/gtest.h>

#include "api/encode.h"
#include "api/manifest.h"

namespace strata::api {
namespace {

using nlohmann::json;

Object ANode() {
  Node node;
  node.metadata.name = "gpu-1";
  node.spec.unschedulable = true;
  node.status.gpus = {{0, "GPU-a", "H100-80GB", *Quantity::Parse("80Gi"), 0, false, {}}};
  return node;
}

Object APod() {
  Pod pod;
  pod.metadata.name = "probe";
  pod.metadata.namespace_name = "team-a";
  pod.spec.template_.command = {"python", "probe.py"};
  return pod;
}

TEST(ServedFormTest, CoreKindsAreServedAsV1AndDecodeBackToTheSameObject) {
  for (const Object& object : {ANode(), APod()}) {
    // strata's form of a pod, as its own clients ask for it (Kubernetes' v1 Pod:
    // pod_v1_form_test).
    json served = EncodeObject(object);
    ToServedForm(served, ServedForm::kStrata);
    EXPECT_EQ(served["apiVersion"], "v1") << object.kind();
    EXPECT_TRUE(IsServedCoreForm(served)) << object.kind();
    Result<Object> decoded = DecodeObject(served);
    ASSERT_TRUE(decoded) << decoded.error().ToString();
    EXPECT_EQ(*decoded, object);
    // The store keeps strata's apiVersion.
    EXPECT_EQ(EncodeObject(*decoded)["apiVersion"], "strata.dev/v1alpha1");
  }
}

TEST(ServedFormTest, ANodeServesItsWholeGpusAsKubernetesExtendedResource) {
  Node node = *ANode().As<Node>();
  node.status.cpu = *Quantity::Parse("64");
  node.status.gpus.push_back(node.status.gpus[0]);
  node.status.gpus.push_back(node.status.gpus[0]);
  for (int i = 1; i < 3; ++i) {
    node.status.gpus[i].index = i;
    node.status.gpus[i].uuid = "GPU-" + std::to_string(i);
  }
  node.status.gpus[2].mig_enabled = true;  // MIG instances are not whole GPUs
  json served = EncodeObject(node);
  ToServedForm(served);
  const json expected = {{"cpu", "64"}, {"nvidia.com/gpu", "2"}};
  EXPECT_EQ(served["status"]["capacity"], expected);
  EXPECT_EQ(served["status"]["allocatable"], expected);
  // Read-only: what a client read and writes back decodes to the same node.
  Result<Object> decoded = DecodeObject(served);
  ASSERT_TRUE(decoded) << decoded.error().ToString();
  EXPECT_EQ(*decoded, Object(node));
}

TEST(ServedFormTest, StrataKindsAreServedAsStored) {
  Queue queue;
  queue.metadata.name = "team-a";
  json served = EncodeObject(queue);
  ToServedForm(served);
  EXPECT_EQ(served, EncodeObject(queue));
  EXPECT_FALSE(IsServedCoreForm(served));
}

TEST(ServedFormTest, KubernetesOwnV1PodStaysACompatibleKind) {
  const json kubernetes_pod = json::parse(R"({
    "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
    "spec": {"containers": [{"name": "main", "image": "x", "command": ["sleep", "1"]}]}})");
  EXPECT_FALSE(IsServedCoreForm(kubernetes_pod));
  Result<Object> decoded = DecodeObject(kubernetes_pod);
  ASSERT_TRUE(decoded) << decoded.error().ToString();
  EXPECT_EQ(decoded->As<Pod>()->spec.template_.command, (std::vector<std::string>{"sleep", "1"}));

  // What a Kubernetes client read of a pod creates the same pod again (kubectl get -o yaml,
  // then create), status and all.
  json read = EncodeObject(APod());
  ToServedForm(read);
  read["metadata"].erase("resourceVersion");
  Result<Object> again = DecodeObject(read);
  ASSERT_TRUE(again) << again.error().ToString();
  EXPECT_EQ(again->As<Pod>()->spec.template_.command, APod().As<Pod>()->spec.template_.command);

  // strata's form of a pod under apiVersion v1 names strata's fields in its errors.
  json served = EncodeObject(APod());
  ToServedForm(served, ServedForm::kStrata);
  served["spec"]["template"]["command"] = "not a list";
  Result<Object> bad = DecodeObject(served);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("spec.template.command"), std::string::npos)
      << bad.error().message();
}

}  // namespace
}  // namespace strata::api
