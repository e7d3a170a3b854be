#include "server/tenant_sync.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/manifest.h"

namespace strata::server {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

cluster::Stored<api::Tenant> StoredTenant(const std::string& yaml) {
  Result<std::vector<api::Object>> objects = api::DecodeManifests({{"tenant.yaml", yaml}});
  EXPECT_TRUE(objects.has_value()) << objects.error().ToString();
  cluster::Stored<api::Tenant> out;
  out.value = *objects->front().As<api::Tenant>();
  return out;
}

constexpr char kTeamB[] = R"(
apiVersion: strata.dev/v1alpha1
kind: Tenant
metadata: {name: team-b}
spec: {apiKeys: [sk-team-b-1, sk-team-b-2], tokensPerMinute: 1000, priorityClass: critical}
)";

constexpr char kTeamA[] = R"(
apiVersion: strata.dev/v1alpha1
kind: Tenant
metadata: {name: team-a}
spec: {apiKeys: [sk-team-a-1]}
)";

TEST(TenantsFromStoreTest, TenantObjectsByNameWithTheirKeysQuotaAndPriority) {
  GatewayTenants got = TenantsFromStore({}, {StoredTenant(kTeamB), StoredTenant(kTeamA)});
  EXPECT_THAT(got.warnings, IsEmpty());
  ASSERT_EQ(got.tenants.size(), 2u);
  EXPECT_EQ(got.tenants[0], (gateway::TenantConfig{
                                "team-a", {"sk-team-a-1"}, 0, gateway::PriorityClass::kStandard}));
  EXPECT_EQ(
      got.tenants[1],
      (gateway::TenantConfig{
          "team-b", {"sk-team-b-1", "sk-team-b-2"}, 1000, gateway::PriorityClass::kCritical}));
  EXPECT_TRUE(gateway::ValidateTenants(got.tenants).ok());
}

TEST(TenantsFromStoreTest, NoTenantObjectLeavesTheConfiguredOnes) {
  const std::vector<gateway::TenantConfig> configured = {
      {"ops", {"sk-ops-key-1"}, 0, gateway::PriorityClass::kCritical}};
  GatewayTenants got = TenantsFromStore(configured, {});
  EXPECT_EQ(got.tenants, configured);
  EXPECT_THAT(got.warnings, IsEmpty());
  EXPECT_THAT(TenantsFromStore({}, {}).tenants, IsEmpty());
}

TEST(TenantsFromStoreTest, ConflictsAreLeftOutNamedAndTheRestStaysValid) {
  const std::vector<gateway::TenantConfig> configured = {
      {"team-a", {"sk-ops-key-1"}, 0, gateway::PriorityClass::kCritical}};
  cluster::Stored<api::Tenant> thief = StoredTenant(R"(
apiVersion: strata.dev/v1alpha1
kind: Tenant
metadata: {name: team-c}
spec: {apiKeys: [sk-team-b-2, sk-ops-key-1, sk-team-c-1]}
)");
  GatewayTenants got =
      TenantsFromStore(configured, {thief, StoredTenant(kTeamB), StoredTenant(kTeamA)});
  // team-a is the file's; team-b keeps both its keys (listed before team-c); team-c keeps only
  // the key nobody else holds.
  ASSERT_EQ(got.tenants.size(), 3u);
  EXPECT_EQ(got.tenants[0], configured[0]);
  EXPECT_EQ(got.tenants[1].name, "team-b");
  EXPECT_THAT(got.tenants[1].keys, ElementsAre("sk-team-b-1", "sk-team-b-2"));
  EXPECT_EQ(got.tenants[2].name, "team-c");
  EXPECT_THAT(got.tenants[2].keys, ElementsAre("sk-team-c-1"));
  EXPECT_THAT(got.warnings,
              ElementsAre("tenant \"team-a\": left out, --gateway-config has a tenant of that name",
                          "tenant \"team-c\": spec.apiKeys[0] left out, another tenant holds it",
                          "tenant \"team-c\": spec.apiKeys[1] left out, another tenant holds it"));
  EXPECT_TRUE(gateway::ValidateTenants(got.tenants).ok());
}

}  // namespace
}  // namespace strata::server
