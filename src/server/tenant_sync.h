#pragma once

#include <string>
#include <vector>

#include "api/tenant.h"
#include "cluster/cache.h"
#include "cluster/stored_object.h"
#include "controller/control_loop.h"
#include "gateway/config.h"
#include "gateway/server.h"

namespace strata::server {

// The gateway's tenants under `strata up`, and what was left out of them.
struct GatewayTenants {
  std::vector<gateway::TenantConfig> tenants;
  // One line per tenant or key left out, naming it and why.
  std::vector<std::string> warnings;
};

// The gateway's tenants: those of --gateway-config (`configured`, valid), then the store's
// Tenant objects by name. A Tenant named like one already listed is left out, and so is a key
// that a tenant listed earlier holds, or an empty one: the set is always valid
// (gateway::ValidateTenants), so that one conflicting object never keeps the others' changes (a
// tenant deleted, a key revoked) from taking effect. An unknown priority class reads as
// standard. Pure.
GatewayTenants TenantsFromStore(const std::vector<gateway::TenantConfig>& configured,
                                const std::vector<cluster::Stored<api::Tenant>>& stored);

// TenantsFromStore over the cache's Tenants, once the cache has caught up with the store.
// Returns the cache's error when it cannot.
Result<GatewayTenants> ReadGatewayTenants(cluster::Cache& cache,
                                          const std::vector<gateway::TenantConfig>& configured);

// Keeps the gateway's tenants those of ReadGatewayTenants: each pass hands the gateway the set
// when it changed, so that a Tenant applied, changed or deleted takes effect at the gateway's
// next request, and logs the warnings of each new set. Every plane's gateway authenticates, a
// standby's too: this loop writes nothing.
//
// Owned by the control plane's loop that drives it; RunOnce from one thread at a time. The
// cache and gateway must outlive it.
class TenantSync final : public controller::ControlLoop {
 public:
  // `handed`: the set the gateway started with (ReadGatewayTenants' before it started, so that
  // it never serves a moment without the store's tenants).
  TenantSync(cluster::Cache& cache, gateway::GatewayServer& gateway,
             std::vector<gateway::TenantConfig> configured,
             std::vector<gateway::TenantConfig> handed)
      : cache_(cache),
        gateway_(gateway),
        configured_(std::move(configured)),
        handed_(std::move(handed)) {}

  Status RunOnce() override;

 private:
  cluster::Cache& cache_;
  gateway::GatewayServer& gateway_;
  const std::vector<gateway::TenantConfig> configured_;
  std::vector<gateway::TenantConfig> handed_;  // the set last handed to the gateway
};

}  // namespace strata::server
