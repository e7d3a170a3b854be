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
    json served = EncodeObject(object);
    ToServedForm(served);
    EXPECT_EQ(served["apiVersion"], "v1") << object.kind();
    EXPECT_TRUE(IsServedCoreForm(served)) << object.kind();
    Result<Object> decoded = DecodeObject(served);
    ASSERT_TRUE(decoded) << decoded.error().ToString();
    EXPECT_EQ(*decoded, object);
    // The store keeps strata's apiVersion.
    EXPECT_EQ(EncodeObject(*decoded)["apiVersion"], "strata.dev/v1alpha1");
  }
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

  // strata's form of a pod under apiVersion v1 names strata's fields in its errors.
  json served = EncodeObject(APod());
  ToServedForm(served);
  served["spec"]["template"]["command"] = "not a list";
  Result<Object> bad = DecodeObject(served);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("spec.template.command"), std::string::npos)
      << bad.error().message();
}

}  // namespace
}  // namespace strata::api
