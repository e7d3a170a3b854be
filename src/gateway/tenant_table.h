#pragma once

// Internal to the gateway module: who each bearer key belongs to.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gateway/config.h"

namespace strata::gateway {

// A tenant as a request sees it. `id` stays the same while a tenant of that name stays in the
// gateway's set: it keys the tenant's bucket in the quota ledger and its metric children.
struct TenantEntry {
  uint64_t id = 0;  // > 0
  std::string name;
  int64_t tokens_per_minute = 0;  // 0: unlimited
  PriorityClass priority = PriorityClass::kStandard;
};

// One version of the gateway's tenants, by key. Immutable once built; shared by the event loops,
// and kept alive by each request that authenticated with it (its entry points into the table).
class TenantTable {
 public:
  TenantTable(uint64_t generation, const std::vector<TenantConfig>& tenants,
              const std::vector<uint64_t>& ids);
  TenantTable(const TenantTable&) = delete;
  TenantTable& operator=(const TenantTable&) = delete;

  // Changes with every SetTenants: a loop reloads its table when the server's differs.
  uint64_t generation() const { return generation_; }
  // False with no tenant: then no key is asked for, and requests are not labelled by tenant.
  bool authenticates() const { return !tenants_.empty(); }
  // The tenants, in the order they were given.
  const std::vector<TenantEntry>& entries() const { return tenants_; }
  // The tenant whose key the Authorization field `authorization` ("Bearer KEY") carries, or null.
  const TenantEntry* Find(std::string_view authorization) const;

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view key) const { return std::hash<std::string_view>{}(key); }
  };

  const uint64_t generation_;
  std::vector<TenantEntry> tenants_;  // never resized after construction: by_key_ points in
  std::unordered_map<std::string, const TenantEntry*, Hash, std::equal_to<>> by_key_;
};

// Builds successive tenant tables, giving each tenant an id it keeps while its name stays in the
// set; a name that leaves and comes back gets a new one. Not thread-safe (the gateway's tenants
// mutex guards it).
class TenantTableBuilder {
 public:
  struct Built {
    std::shared_ptr<const TenantTable> table;
    std::vector<uint64_t> removed;  // ids of the previous set's tenants that are gone
  };
  // REQUIRES: ValidateTenants(tenants) is ok.
  Built Build(const std::vector<TenantConfig>& tenants);

 private:
  uint64_t next_id_ = 1;
  uint64_t generation_ = 0;
  std::unordered_map<std::string, uint64_t> ids_;  // the current set's ids, by name
};

}  // namespace strata::gateway
