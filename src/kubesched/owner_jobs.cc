#include "kubesched/owner_jobs.h"

#include <algorithm>

#include "common/json_member.h"
#include "kubesched/kueue_quotas.h"

namespace strata::kubesched {

JobSpec JobFromKube(const nlohmann::json& job) {
  JobSpec out;
  const nlohmann::json& spec = MemberOrNull(job, "spec");
  const nlohmann::json& parallelism = MemberOrNull(spec, "parallelism");
  const nlohmann::json& completions = MemberOrNull(spec, "completions");
  if (parallelism.is_number_integer()) out.pods = parallelism.get<int64_t>();
  // No more pods than completions remain (the Job controller makes no more).
  if (completions.is_number_integer()) {
    const nlohmann::json& succeeded = MemberOrNull(MemberOrNull(job, "status"), "succeeded");
    int64_t done = succeeded.is_number_integer() ? succeeded.get<int64_t>() : 0;
    out.pods = std::min(out.pods, completions.get<int64_t>() - done);
  }
  out.pods = std::max<int64_t>(out.pods, 0);
  const nlohmann::json& labels = MemberOrNull(MemberOrNull(job, "metadata"), "labels");
  out.queue_name = StringMemberOr(labels, kKueueQueueNameLabel);
  out.priority_class = StringMemberOr(labels, kKueuePriorityClassLabel);
  return out;
}

}  // namespace strata::kubesched
