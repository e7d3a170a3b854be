#include "api/resource_catalog.h"

#include <gtest/gtest.h>

#include "api/api_status.h"

namespace strata::api {
namespace {

TEST(ResourceCatalogTest, ParsesNamespacedClusterAndAllNamespacePaths) {
  auto pod = ParseResourcePath("/api/v1/namespaces/team-a/pods/probe");
  ASSERT_TRUE(pod);
  EXPECT_EQ(pod->type->kind, "Pod");
  EXPECT_EQ(pod->namespace_name, "team-a");
  EXPECT_EQ(pod->name, "probe");

  auto all_jobs = ParseResourcePath("/apis/strata.dev/v1alpha1/jobs");
  ASSERT_TRUE(all_jobs);
  EXPECT_EQ(all_jobs->type->kind, "Job");
  EXPECT_FALSE(all_jobs->namespace_name.has_value());
  EXPECT_TRUE(all_jobs->name.empty());

  auto queue = ParseResourcePath("/apis/strata.dev/v1alpha1/queues/team-a");
  ASSERT_TRUE(queue);
  EXPECT_EQ(queue->name, "team-a");

  auto status = ParseResourcePath("/api/v1/nodes/sim-node-0/status");
  ASSERT_TRUE(status);
  EXPECT_EQ(status->subresource, "status");
}

TEST(ResourceCatalogTest, RejectsUnknownGroupsPluralsAndNamespacedClusterKinds) {
  for (const char* path :
       {"/api/v2/pods", "/apis/kubeflow.org/v1/jobs", "/apis/strata.dev/v1alpha1/widgets",
        "/api/v1/namespaces/default/nodes", "/api/v1/pods/x/logs", "/metrics", "/"}) {
    auto parsed = ParseResourcePath(path);
    ASSERT_FALSE(parsed) << path;
    EXPECT_EQ(parsed.error().code(), StatusCode::kNotFound) << path;
  }
}

TEST(ResourceCatalogTest, FindsTypesByAnyNameKubectlAccepts) {
  for (const char* name : {"jobs", "job", "Job", "JOBS"}) {
    ASSERT_NE(FindResourceType(name), nullptr) << name;
    EXPECT_EQ(FindResourceType(name)->kind, "Job");
  }
  EXPECT_EQ(FindResourceType("po")->kind, "Pod");
  EXPECT_EQ(FindResourceType("svc")->kind, "Service");
  EXPECT_EQ(FindResourceType("widgets"), nullptr);
}

TEST(ResourceCatalogTest, PathsRoundTrip) {
  for (const ResourceType& type : AllResourceTypes()) {
    std::string path = type.Path(type.namespaced ? "ns" : "", "name");
    auto parsed = ParseResourcePath(path);
    ASSERT_TRUE(parsed) << path;
    EXPECT_EQ(parsed->type, &type);
    EXPECT_EQ(parsed->name, "name");
  }
}

TEST(ApiStatusTest, StatusObjectsCarryReasonAndCodeAndReadBack) {
  nlohmann::json object = StatusObject(ConflictError("the object has been modified"));
  EXPECT_EQ(object["kind"], "Status");
  EXPECT_EQ(object["reason"], "Conflict");
  EXPECT_EQ(object["code"], 409);
  Status back = StatusFromResponse(409, object.dump());
  EXPECT_EQ(back, ConflictError("the object has been modified"));
  EXPECT_EQ(StatusFromResponse(410, StatusObject(ExpiredError("old")).dump()).code(),
            StatusCode::kExpired);
  EXPECT_EQ(StatusFromResponse(502, "bad gateway").message(), "bad gateway");
}

}  // namespace
}  // namespace strata::api
