#include "server/tenant_sync.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>

namespace strata::server {

GatewayTenants TenantsFromStore(const std::vector<gateway::TenantConfig>& configured,
                                const std::vector<cluster::Stored<api::Tenant>>& stored) {
  GatewayTenants out;
  out.tenants = configured;
  std::set<std::string> names;
  std::set<std::string> keys;
  for (const gateway::TenantConfig& tenant : configured) {
    names.insert(tenant.name);
    keys.insert(tenant.keys.begin(), tenant.keys.end());
  }
  std::vector<const api::Tenant*> objects;
  for (const auto& object : stored) objects.push_back(&object.value);
  std::sort(objects.begin(), objects.end(), [](const api::Tenant* a, const api::Tenant* b) {
    return a->metadata.name < b->metadata.name;
  });
  for (const api::Tenant* object : objects) {
    const std::string& name = object->metadata.name;
    if (!names.insert(name).second) {
      out.warnings.push_back(
          fmt::format("tenant \"{}\": left out, --gateway-config has a tenant of that name", name));
      continue;
    }
    gateway::TenantConfig tenant;
    tenant.name = name;
    tenant.tokens_per_minute = std::max<int64_t>(0, object->spec.tokens_per_minute);
    std::optional<gateway::PriorityClass> priority =
        gateway::PriorityClassFromName(object->spec.priority_class);
    tenant.priority = priority.value_or(gateway::PriorityClass::kStandard);
    if (!priority) {
      out.warnings.push_back(fmt::format("tenant \"{}\": priority class \"{}\" unknown; standard",
                                         name, object->spec.priority_class));
    }
    for (size_t k = 0; k < object->spec.api_keys.size(); ++k) {
      const std::string& key = object->spec.api_keys[k];
      // The key itself stays out of the log.
      if (key.empty()) {
        out.warnings.push_back(
            fmt::format("tenant \"{}\": spec.apiKeys[{}] left out, it is empty", name, k));
      } else if (!keys.insert(key).second) {
        out.warnings.push_back(fmt::format(
            "tenant \"{}\": spec.apiKeys[{}] left out, another tenant holds it", name, k));
      } else {
        tenant.keys.push_back(key);
      }
    }
    out.tenants.push_back(std::move(tenant));
  }
  return out;
}

Result<GatewayTenants> ReadGatewayTenants(cluster::Cache& cache,
                                          const std::vector<gateway::TenantConfig>& configured) {
  if (Status synced = cache.Sync(); !synced.ok()) return Err(synced);
  return TenantsFromStore(configured, cluster::StoredOf<api::Tenant>(cache.List("Tenant")));
}

Status TenantSync::RunOnce() {
  Result<GatewayTenants> read = ReadGatewayTenants(cache_, configured_);
  if (!read) return read.error();
  GatewayTenants& tenants = *read;
  if (tenants.tenants == handed_) return Status::Ok();
  if (Status set = gateway_.SetTenants(tenants.tenants); !set.ok()) return set;
  for (const std::string& warning : tenants.warnings) spdlog::warn("gateway: {}", warning);
  spdlog::info("gateway: {} tenants", tenants.tenants.size());
  handed_ = std::move(tenants.tenants);
  return Status::Ok();
}

}  // namespace strata::server
