#include "gateway/tenant_table.h"

#include "common/check.h"

namespace strata::gateway {

TenantTable::TenantTable(uint64_t generation, const std::vector<TenantConfig>& tenants,
                         const std::vector<uint64_t>& ids)
    : generation_(generation) {
  STRATA_CHECK(tenants.size() == ids.size());
  tenants_.reserve(tenants.size());
  for (size_t i = 0; i < tenants.size(); ++i) {
    tenants_.push_back(
        {ids[i], tenants[i].name, tenants[i].tokens_per_minute, tenants[i].priority});
  }
  for (size_t i = 0; i < tenants.size(); ++i) {
    for (const std::string& key : tenants[i].keys) by_key_.emplace(key, &tenants_[i]);
  }
}

const TenantEntry* TenantTable::Find(std::string_view authorization) const {
  constexpr std::string_view kBearer = "Bearer ";
  if (!authorization.starts_with(kBearer)) return nullptr;
  auto it = by_key_.find(authorization.substr(kBearer.size()));
  return it == by_key_.end() ? nullptr : it->second;
}

TenantTableBuilder::Built TenantTableBuilder::Build(const std::vector<TenantConfig>& tenants) {
  std::unordered_map<std::string, uint64_t> ids;
  std::vector<uint64_t> ordered;
  for (const TenantConfig& tenant : tenants) {
    auto kept = ids_.find(tenant.name);
    const uint64_t id = kept != ids_.end() ? kept->second : next_id_++;
    ids.emplace(tenant.name, id);
    ordered.push_back(id);
  }
  Built built;
  for (const auto& [name, id] : ids_) {
    if (!ids.contains(name)) built.removed.push_back(id);
  }
  ids_ = std::move(ids);
  built.table = std::make_shared<const TenantTable>(++generation_, tenants, ordered);
  return built;
}

}  // namespace strata::gateway
