#include "gateway/scorer.h"

#include <fmt/format.h>

#include "gateway/kv_cache_scorer.h"
#include "gateway/prefix_scorer.h"
#include "gateway/queue_scorer.h"
#include "gateway/ttft_scorer.h"

namespace strata::gateway {

std::vector<std::string_view> ScorerNames() {
  return {"prefix", "queue", "load", "kv-cache", "ttft-estimate"};
}

Result<std::unique_ptr<Scorer>> MakeScorer(std::string_view name, const PickerOptions& options) {
  std::unique_ptr<Scorer> scorer;
  if (name == "prefix") scorer = std::make_unique<PrefixScorer>();
  if (name == "queue") scorer = std::make_unique<QueueScorer>(/*count_in_flight=*/false);
  if (name == "load") scorer = std::make_unique<QueueScorer>(/*count_in_flight=*/true);
  if (name == "kv-cache") scorer = std::make_unique<KvCacheScorer>();
  if (name == "ttft-estimate") scorer = std::make_unique<TtftScorer>(options);
  if (scorer) return scorer;
  return Err(InvalidArgumentError(fmt::format(
      "unknown scorer \"{}\" (expected prefix, queue, load, kv-cache or ttft-estimate)", name)));
}

}  // namespace strata::gateway
