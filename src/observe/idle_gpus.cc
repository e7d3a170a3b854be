#include "observe/idle_gpus.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "api/duration.h"

namespace strata::observe {
namespace {

Status BadAnnotation(std::string_view name, std::string_view value, std::string_view expected) {
  return InvalidArgumentError(fmt::format("{}: \"{}\": expected {}", name, value, expected));
}

Result<double> ParseThreshold(const std::string& text) {
  std::string_view number = text;
  double scale = 1;
  if (!number.empty() && number.back() == '%') {
    number.remove_suffix(1);
    scale = 100;
  }
  double value = 0;
  auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), value);
  value /= scale;
  if (number.empty() || error != std::errc() || end != number.data() + number.size() ||
      !std::isfinite(value) || value < 0 || value > 1) {
    return Err(
        BadAnnotation(api::kIdleThresholdAnnotation, text, "a share in [0, 1] or a percentage"));
  }
  return value;
}

}  // namespace

Result<IdlePolicy> ParseIdlePolicy(const std::map<std::string, std::string>& annotations) {
  IdlePolicy policy;
  if (auto it = annotations.find(api::kIdleThresholdAnnotation); it != annotations.end()) {
    ASSIGN_OR_RETURN(policy.threshold, ParseThreshold(it->second));
  }
  if (auto it = annotations.find(api::kIdleAfterAnnotation); it != annotations.end()) {
    Result<Duration> after = api::ParseDuration(it->second);
    if (!after || *after <= Duration::zero()) {
      return Err(
          BadAnnotation(api::kIdleAfterAnnotation, it->second, "a positive duration (\"30m\")"));
    }
    policy.idle_after = *after;
  }
  if (auto it = annotations.find(api::kIdleReclaimAnnotation); it != annotations.end()) {
    if (it->second != "true" && it->second != "false") {
      return Err(BadAnnotation(api::kIdleReclaimAnnotation, it->second, "\"true\" or \"false\""));
    }
    policy.reclaimable = it->second == "true";
  }
  return policy;
}

std::vector<JobGpuUse> JobGpuUses(const std::vector<GpuSample>& samples) {
  std::map<std::pair<std::string, std::string>, JobGpuUse> jobs;
  for (const GpuSample& sample : samples) {
    if (!UseOf(sample).busy_known) continue;
    SplitUseByHolder(sample, [&](const GpuHolder& holder, double allocated, double busy) {
      if (holder.job.empty() || !holder.running) return;
      JobGpuUse& job = jobs[{holder.namespace_name, holder.job}];
      job.namespace_name = holder.namespace_name;
      job.job = holder.job;
      job.queue = holder.queue;
      job.gpus += allocated;
      job.busy += busy;
    });
  }
  std::vector<JobGpuUse> out;
  out.reserve(jobs.size());
  for (auto& [key, job] : jobs) out.push_back(std::move(job));
  return out;
}

std::string DescribeIdleJob(const IdleJob& job, const IdlePolicy& policy) {
  return fmt::format("GPUs {} % busy, under the queue's {} % threshold since {}{}",
                     std::lround(job.busy_ratio * 100), std::lround(policy.threshold * 100),
                     FormatRfc3339(job.idle_since),
                     job.reclaimable ? "; reclaimable: preemption takes this job first" : "");
}

std::vector<IdleJob> IdleJobTracker::Observe(const std::vector<JobGpuUse>& uses, TimePoint now,
                                             const PolicyOf& policy_of) {
  std::map<std::pair<std::string, std::string>, Spell> next;
  std::vector<IdleJob> found;
  for (const JobGpuUse& use : uses) {
    if (use.gpus <= 0) continue;
    IdlePolicy policy = policy_of(use.queue);
    double ratio = use.busy / use.gpus;
    if (ratio >= policy.threshold) continue;
    std::pair<std::string, std::string> key{use.namespace_name, use.job};
    auto previous = spells_.find(key);
    Spell spell = previous != spells_.end() ? previous->second : Spell{now, false, false};
    if (!spell.reported && now - spell.under_since >= policy.idle_after) {
      spell.reported = true;
      spell.reclaimable = policy.reclaimable;
      found.push_back(
          {use.namespace_name, use.job, use.queue, ratio, spell.under_since, policy.reclaimable});
    }
    next[key] = spell;
  }
  spells_ = std::move(next);
  return found;
}

std::vector<std::pair<std::string, std::string>> IdleJobTracker::Reclaimable() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [key, spell] : spells_) {
    if (spell.reported && spell.reclaimable) out.push_back(key);
  }
  return out;
}

}  // namespace strata::observe
