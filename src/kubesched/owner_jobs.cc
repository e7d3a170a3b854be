#include "kubesched/owner_jobs.h"

#include <algorithm>
#include <charconv>
#include <tuple>

#include "common/json_member.h"
#include "kubesched/kueue_quotas.h"

namespace strata::kubesched {

bool JobSpec::SameFor(const JobSpec& other) const {
  auto fields = [](const JobSpec& j) {
    return std::tie(j.uid, j.pods, j.queue_name, j.priority_class, j.suspended, j.finished,
                    j.admitted_flavor, j.template_text);
  };
  return fields(*this) == fields(other);
}

bool JobSpec::Supersedes(const JobSpec& older) const {
  return uid != older.uid || resource_version == 0 || older.resource_version == 0 ||
         resource_version >= older.resource_version;
}

JobSpec JobFromKube(const nlohmann::json& job) {
  JobSpec out;
  const nlohmann::json& metadata = MemberOrNull(job, "metadata");
  out.namespace_name = StringMemberOr(metadata, "namespace");
  out.name = StringMemberOr(metadata, "name");
  out.uid = StringMemberOr(metadata, "uid");
  const std::string version = StringMemberOr(metadata, "resourceVersion");
  int64_t parsed = 0;
  if (auto [end, error] = std::from_chars(version.data(), version.data() + version.size(), parsed);
      error == std::errc() && end == version.data() + version.size() && parsed > 0)
    out.resource_version = parsed;
  out.created = ParseRfc3339(StringMemberOr(metadata, "creationTimestamp")).value_or(TimePoint{});
  out.admitted_flavor = StringMemberOr(MemberOrNull(metadata, "annotations"), kAdmissionAnnotation);
  const nlohmann::json& spec = MemberOrNull(job, "spec");
  out.suspended = MemberOrNull(spec, "suspend") == true;
  const nlohmann::json& conditions = MemberOrNull(MemberOrNull(job, "status"), "conditions");
  for (size_t i = 0; conditions.is_array() && i < conditions.size(); ++i) {
    std::string type = StringMemberOr(conditions[i], "type");
    if ((type == "Complete" || type == "Failed") &&
        StringMemberOr(conditions[i], "status") == "True")
      out.finished = true;
  }
  const nlohmann::json& pod_template = MemberOrNull(spec, "template");
  out.template_text = pod_template.dump();
  nlohmann::json pod = {{"metadata", MemberOrNull(pod_template, "metadata")},
                        {"spec", MemberOrNull(pod_template, "spec")}};
  if (!pod["metadata"].is_object()) pod["metadata"] = nlohmann::json::object();
  pod["metadata"]["namespace"] = out.namespace_name;
  pod["metadata"]["name"] = out.name;
  pod["metadata"]["creationTimestamp"] = StringMemberOr(metadata, "creationTimestamp");
  Result<PodSpec> converted = PodFromKube(pod);
  if (converted) {
    out.pod = std::make_shared<const PodSpec>(std::move(*converted));
  } else {
    out.pod_error = converted.error().message();
  }
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
