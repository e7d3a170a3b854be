#include "api/node_lease.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace strata::api {
namespace {

TEST(NodeLeaseTest, TheLeaseTextIsTheLeaseAsNlohmannWritesIt) {
  const TimePoint renewed = ParseRfc3339("2026-12-04T21:31:46.123456Z").value();
  const nlohmann::json expected = {
      {"apiVersion", "coordination.k8s.io/v1"},
      {"kind", "Lease"},
      {"metadata", {{"name", "gpu-7"}, {"namespace", "kube-node-lease"}}},
      {"spec",
       {{"holderIdentity", "gpu-7"},
        {"leaseDurationSeconds", 40},
        {"renewTime", "2026-12-04T21:31:46.123456Z"}}}};
  EXPECT_EQ(NodeLeaseJson("gpu-7", renewed), expected.dump());
  // A name is written as a JSON string, whatever it holds.
  nlohmann::json odd =
      nlohmann::json::parse(NodeLeaseJson("a\"b\\c", renewed, std::chrono::seconds(5)));
  EXPECT_EQ(odd["metadata"]["name"], "a\"b\\c");
  EXPECT_EQ(odd["spec"]["leaseDurationSeconds"], 5);
}

TEST(NodeLeaseTest, LeasePathsNameTheirNode) {
  EXPECT_EQ(NodeLeasePath("n1"),
            "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1");
  EXPECT_EQ(NodeOfLeasePath(NodeLeasePath("n1")), "n1");
  EXPECT_EQ(NodeOfLeasePath("/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/"),
            std::nullopt);
  EXPECT_EQ(NodeOfLeasePath("/api/v1/nodes/n1"), std::nullopt);
}

}  // namespace
}  // namespace strata::api
