#include "scheduler/mig.h"

#include <array>

namespace strata::scheduler {
namespace {

constexpr int64_t kGiB = 1024;

constexpr std::array<MigProfile, 5> kA100Small = {{
    {"1g.5gb", 1, 1, 5 * kGiB},
    {"2g.10gb", 2, 2, 10 * kGiB},
    {"3g.20gb", 3, 4, 20 * kGiB},
    {"4g.20gb", 4, 4, 20 * kGiB},
    {"7g.40gb", 7, 8, 40 * kGiB},
}};

constexpr std::array<MigProfile, 6> kLarge = {{
    {"1g.10gb", 1, 1, 10 * kGiB},
    {"1g.20gb", 1, 2, 20 * kGiB},
    {"2g.20gb", 2, 2, 20 * kGiB},
    {"3g.40gb", 3, 4, 40 * kGiB},
    {"4g.40gb", 4, 4, 40 * kGiB},
    {"7g.80gb", 7, 8, 80 * kGiB},
}};

constexpr int64_t kSmallClassLimitMib = 48 * kGiB;

template <typename Table>
std::optional<MigProfile> FindIn(const Table& table, std::string_view name) {
  for (const MigProfile& p : table) {
    if (p.name == name) return p;
  }
  return std::nullopt;
}

}  // namespace

std::optional<MigProfile> FindMigProfile(int64_t gpu_memory_mib, std::string_view name) {
  return gpu_memory_mib <= kSmallClassLimitMib ? FindIn(kA100Small, name) : FindIn(kLarge, name);
}

bool IsKnownMigProfile(std::string_view name) {
  return FindIn(kA100Small, name).has_value() || FindIn(kLarge, name).has_value();
}

}  // namespace strata::scheduler
