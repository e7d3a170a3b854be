#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace strata::scheduler {

// A MIG instance shape of one GPU class: how many of the GPU's 7 compute slices and 8 memory
// slices it takes. Real A100/H100 profiles; placement counts slices.
struct MigProfile {
  std::string_view name;  // "3g.40gb"
  int compute_slices = 0;
  int memory_slices = 0;
  int64_t memory_mib = 0;
};

inline constexpr int kMigComputeSlices = 7;
inline constexpr int kMigMemorySlices = 8;

// The profile `name` on a GPU with `gpu_memory_mib` of memory: the A100-40GB table (1g.5gb
// 2g.10gb 3g.20gb 4g.20gb 7g.40gb) up to 48 GiB, the A100-80GB / H100-80GB table (1g.10gb
// 1g.20gb 2g.20gb 3g.40gb 4g.40gb 7g.80gb) above. Returns nullopt if the GPU has no such profile.
std::optional<MigProfile> FindMigProfile(int64_t gpu_memory_mib, std::string_view name);

// True if `name` is a profile of any known GPU class (for validating requests).
bool IsKnownMigProfile(std::string_view name);

}  // namespace strata::scheduler
