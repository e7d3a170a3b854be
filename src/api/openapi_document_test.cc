#include "api/openapi_document.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace strata::api {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

TEST(OpenApiDocumentTest, TheIndexNamesEachGroupVersionsDocument) {
  const json& index = OpenApiV3Index();
  for (const char* path : {"api/v1", "apis/strata.dev/v1alpha1"}) {
    ASSERT_TRUE(index["paths"].contains(path)) << index.dump();
    EXPECT_THAT(index["paths"][path]["serverRelativeURL"].get<std::string>(),
                HasSubstr(std::string("/openapi/v3/") + path + "?hash="));
    EXPECT_NE(OpenApiV3Document(path), nullptr) << path;
  }
  EXPECT_EQ(OpenApiV3Document("apis/kubeflow.org/v1"), nullptr);
}

TEST(OpenApiDocumentTest, PatchesAreValidatedByTheServerAndCoreKindsTakeStrategicOnes) {
  const json& core = *OpenApiV3Document("api/v1");
  const json& node_patch = core["paths"]["/api/v1/nodes/{name}"]["patch"];
  EXPECT_EQ(node_patch["x-kubernetes-group-version-kind"],
            json::parse(R"({"group": "", "version": "v1", "kind": "Node"})"));
  EXPECT_EQ(node_patch["parameters"][0]["name"], "fieldValidation");
  EXPECT_TRUE(
      node_patch["requestBody"]["content"].contains("application/strategic-merge-patch+json"));
  EXPECT_TRUE(core["paths"].contains("/api/v1/namespaces/{namespace}/pods/{name}/status"));

  const json& strata = *OpenApiV3Document("apis/strata.dev/v1alpha1");
  const json& job_patch =
      strata["paths"]["/apis/strata.dev/v1alpha1/namespaces/{namespace}/jobs/{name}"]["patch"];
  EXPECT_TRUE(job_patch["requestBody"]["content"].contains("application/merge-patch+json"));
  EXPECT_FALSE(
      job_patch["requestBody"]["content"].contains("application/strategic-merge-patch+json"));
}

TEST(OpenApiDocumentTest, SchemasComeFromTheFieldTablesWithTheirMergeKeys) {
  const json& schemas = (*OpenApiV3Document("api/v1"))["components"]["schemas"];
  const json& node = schemas["dev.strata.v1alpha1.Node"];
  EXPECT_EQ(node["x-kubernetes-group-version-kind"][0]["kind"], "Node");
  const json& conditions = node["properties"]["status"]["properties"]["conditions"];
  EXPECT_EQ(conditions["x-kubernetes-patch-merge-key"], "type");
  EXPECT_EQ(conditions["x-kubernetes-patch-strategy"], "merge");
  EXPECT_TRUE(node["properties"]["spec"]["properties"].contains("unschedulable"));
  // A pod is described as Kubernetes' clients read it: a v1 Pod, its containers and their env
  // merged by name.
  const json& containers =
      schemas["dev.strata.v1alpha1.Pod"]["properties"]["spec"]["properties"]["containers"];
  EXPECT_EQ(containers["x-kubernetes-patch-merge-key"], "name");
  EXPECT_EQ(containers["items"]["properties"]["env"]["x-kubernetes-patch-merge-key"], "name");

  const json& job = (*OpenApiV3Document(
      "apis/strata.dev/v1alpha1"))["components"]["schemas"]["dev.strata.v1alpha1.Job"];
  EXPECT_EQ(job["x-kubernetes-group-version-kind"][0]["group"], "strata.dev");
  EXPECT_TRUE(job["properties"]["spec"]["properties"].contains("replicas"));
}

}  // namespace
}  // namespace strata::api
