#include "engine/profile.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/check.h"

namespace strata::engine {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;
using std::chrono::nanoseconds;

EngineProfile Profile8bH100() {
  EngineProfile profile;
  profile.name = "8b-h100";
  profile.prefill_overhead = milliseconds(30);
  profile.per_prompt_token = microseconds(250);
  profile.per_output_token = milliseconds(12);
  profile.batch_slope = 0.01;
  profile.per_context_token = nanoseconds(40);
  profile.num_kv_blocks = 26000;
  profile.block_size = 16;
  profile.max_prefill_tokens_per_step = 8192;
  profile.kv_bytes_per_token = 128 * 1024;
  profile.per_reloaded_token = microseconds(3);
  profile.gpu_memory_bytes = int64_t{81559} << 20;
  return profile;
}

}  // namespace

Duration EngineProfile::StepDuration(int64_t prefill_tokens, int64_t decoding_sequences,
                                     int64_t context_tokens, int64_t reloaded_tokens) const {
  Duration total = per_reloaded_token * reloaded_tokens;
  if (prefill_tokens > 0) total += prefill_overhead + per_prompt_token * prefill_tokens;
  if (decoding_sequences > 0) {
    double growth = 1.0 + batch_slope * static_cast<double>(decoding_sequences - 1);
    total += Duration(static_cast<int64_t>(static_cast<double>(per_output_token.count()) * growth));
    total += per_context_token * context_tokens;
  }
  return total;
}

int EngineProfile::HostBlocksIn(double gib, int block_size) const {
  STRATA_CHECK(gib >= 0);
  const double bytes_per_block =
      static_cast<double>(kv_bytes_per_token) * (block_size > 0 ? block_size : this->block_size);
  if (bytes_per_block <= 0) return 0;
  return static_cast<int>(std::min(gib * 1024 * 1024 * 1024 / bytes_per_block,
                                   static_cast<double>(std::numeric_limits<int>::max())));
}

Result<int> EngineProfile::GpuBlocksAt(double utilization, int block_size) const {
  if (!(utilization > 0 && utilization <= 1)) {
    return Err(InvalidArgumentError(
        fmt::format("gpu memory utilization {} is not in (0, 1]", utilization)));
  }
  const int64_t bytes_per_block =
      kv_bytes_per_token * static_cast<int64_t>(block_size > 0 ? block_size : this->block_size);
  const int64_t default_kv_bytes =
      static_cast<int64_t>(num_kv_blocks) * this->block_size * kv_bytes_per_token;
  const double gpu = static_cast<double>(gpu_memory_bytes);
  const int64_t kv_bytes =
      default_kv_bytes + std::llround((utilization - kDefaultGpuMemoryUtilization) * gpu);
  if (bytes_per_block <= 0 || kv_bytes < bytes_per_block) {
    const double gib = 1024.0 * 1024 * 1024;
    const double fixed = kDefaultGpuMemoryUtilization * gpu - static_cast<double>(default_kv_bytes);
    return Err(InvalidArgumentError(fmt::format(
        "gpu memory utilization {} leaves no room for the KV cache: {:.1f} GiB of the GPU's "
        "{:.1f} GiB, and the model needs {:.1f} GiB besides its cache",
        utilization, utilization * gpu / gib, gpu / gib, fixed / gib)));
  }
  return static_cast<int>(
      std::min<int64_t>(kv_bytes / bytes_per_block, std::numeric_limits<int>::max()));
}

Result<EngineProfile> ProfileByName(std::string_view name) {
  if (name == "8b-h100") return Profile8bH100();
  std::string known;
  for (const std::string& n : ProfileNames()) known += (known.empty() ? "" : ", ") + n;
  return Err(InvalidArgumentError("unknown engine profile \"" + std::string(name) +
                                  "\" (known: " + known + ")"));
}

std::vector<std::string> ProfileNames() { return {"8b-h100"}; }

}  // namespace strata::engine
