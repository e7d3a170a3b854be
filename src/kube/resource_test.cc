#include "kube/resource.h"

#include <gtest/gtest.h>

namespace strata::kube {
namespace {

TEST(PathForTest, CoreAndGroupResources) {
  EXPECT_EQ(PathFor(resources::kPods, "default"), "/api/v1/namespaces/default/pods");
  EXPECT_EQ(PathFor(resources::kPods, ""), "/api/v1/pods");
  EXPECT_EQ(PathFor(resources::kPods, "default", "p1", "binding"),
            "/api/v1/namespaces/default/pods/p1/binding");
  EXPECT_EQ(PathFor(resources::kNodes, "", "kwok-node-0"), "/api/v1/nodes/kwok-node-0");
  EXPECT_EQ(PathFor(resources::kLeases, "kube-system", "strata"),
            "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/strata");
  EXPECT_EQ(
      PathFor(GroupVersionResource{"strata.dev", "v1alpha1", "jobs"}, "team-a", "j", "status"),
      "/apis/strata.dev/v1alpha1/namespaces/team-a/jobs/j/status");
}

TEST(PathForTest, ANamespaceIsAddressedByName) {
  EXPECT_EQ(PathFor(resources::kNamespaces, "team-a", "team-a"), "/api/v1/namespaces/team-a");
  EXPECT_EQ(PathFor(resources::kNamespaces, ""), "/api/v1/namespaces");
}

TEST(PathForTest, QueryValuesAreEscaped) {
  EXPECT_EQ(
      PathFor(resources::kPods, "default", "", "",
              {{"labelSelector", "app in (a,b),tier!=db"}, {"fieldSelector", "spec.nodeName="}}),
      "/api/v1/namespaces/default/pods?labelSelector=app%20in%20%28a%2Cb%29%2Ctier%21%3Ddb"
      "&fieldSelector=spec.nodeName%3D");
  EXPECT_EQ(PathFor(resources::kPods, "a/b", "c d"), "/api/v1/namespaces/a%2Fb/pods/c%20d");
}

TEST(GroupVersionResourceTest, Names) {
  EXPECT_EQ(resources::kPods.ToString(), "pods");
  EXPECT_EQ(resources::kLeases.ToString(), "leases.coordination.k8s.io");
  EXPECT_EQ(resources::kPods.ApiVersion(), "v1");
  EXPECT_EQ(resources::kLeases.ApiVersion(), "coordination.k8s.io/v1");
}

}  // namespace
}  // namespace strata::kube
