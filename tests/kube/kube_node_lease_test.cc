// A node's Lease in kube-node-lease renewed as kubelet renews it, against a real API server:
// one update per renewal from the Lease last written, and a fresh read only after someone else
// changed or deleted it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kube_test_cluster.h"
#include "kubestore/node_lease.h"

namespace strata::kube::testing {
namespace {

using nlohmann::json;
using std::chrono::seconds;

json Lease(Client& client, const std::string& name) {
  Result<json> lease = client.Get(resources::kLeases, api::kNodeLeaseNamespace, name);
  EXPECT_TRUE(lease) << lease.error().ToString();
  return lease ? *lease : json();
}

std::string Version(const json& object) { return object["metadata"]["resourceVersion"]; }

TEST(KubeNodeLeaseTest, RenewsFromTheLeaseItLastWroteAndRereadsAfterAnotherWriter) {
  std::unique_ptr<Client> client = AdminClient();
  // A node name of its own: kube-node-lease is shared by every test.
  const std::string node = NewNamespace(*client, "lease-node");
  kubestore::NodeLeaseRenewer renewer(*client);
  FakeClock clock;

  ASSERT_TRUE(renewer.Renew(node, clock.Now()).ok());  // creates it (no Node: no owner)
  json created = Lease(*client, node);
  EXPECT_EQ(created["spec"]["holderIdentity"], node);
  EXPECT_FALSE(created["metadata"].contains("ownerReferences"));

  clock.Advance(seconds(10));
  ASSERT_TRUE(renewer.Renew(node, clock.Now()).ok());
  json renewed = Lease(*client, node);
  EXPECT_NE(Version(renewed), Version(created));
  EXPECT_EQ(renewed["spec"]["renewTime"], FormatRfc3339Micro(clock.Now()));

  // Another writer moves the Lease on: the renewer's update conflicts, so it reads the Lease
  // again and renews it in the same call, keeping the other writer's change.
  ASSERT_TRUE(client->Patch(resources::kLeases, api::kNodeLeaseNamespace, node, PatchType::kMerge,
                            {{"metadata", {{"labels", {{"touched", "yes"}}}}}}));
  clock.Advance(seconds(10));
  Status after_conflict = renewer.Renew(node, clock.Now());
  ASSERT_TRUE(after_conflict.ok()) << after_conflict.ToString();
  json reread = Lease(*client, node);
  EXPECT_EQ(reread["spec"]["renewTime"], FormatRfc3339Micro(clock.Now()));
  EXPECT_EQ(reread["metadata"]["labels"]["touched"], "yes");

  // Deleted meanwhile: the renewal creates it again.
  ASSERT_TRUE(client->Delete(resources::kLeases, api::kNodeLeaseNamespace, node));
  clock.Advance(seconds(10));
  ASSERT_TRUE(renewer.Renew(node, clock.Now()).ok());
  EXPECT_EQ(Lease(*client, node)["spec"]["renewTime"], FormatRfc3339Micro(clock.Now()));
  ASSERT_TRUE(client->Delete(resources::kLeases, api::kNodeLeaseNamespace, node));
}

}  // namespace
}  // namespace strata::kube::testing
