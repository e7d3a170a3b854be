#include <array>
#include <utility>

#include "api/job.h"
#include "api/pod.h"

namespace strata::api {
namespace {

constexpr std::array<std::pair<JobPhase, std::string_view>, 5> kJobPhases = {{
    {JobPhase::kPending, "Pending"},
    {JobPhase::kRunning, "Running"},
    {JobPhase::kRestarting, "Restarting"},
    {JobPhase::kSucceeded, "Succeeded"},
    {JobPhase::kFailed, "Failed"},
}};

constexpr std::array<std::pair<PodPhase, std::string_view>, 4> kPodPhases = {{
    {PodPhase::kPending, "Pending"},
    {PodPhase::kRunning, "Running"},
    {PodPhase::kSucceeded, "Succeeded"},
    {PodPhase::kFailed, "Failed"},
}};

template <typename Phase, size_t N>
std::string_view NameOf(const std::array<std::pair<Phase, std::string_view>, N>& table,
                        Phase phase) {
  for (const auto& [value, name] : table) {
    if (value == phase) return name;
  }
  return "Unknown";
}

template <typename Phase, size_t N>
std::optional<Phase> Parse(const std::array<std::pair<Phase, std::string_view>, N>& table,
                           std::string_view name) {
  for (const auto& [value, text] : table) {
    if (text == name) return value;
  }
  return std::nullopt;
}

}  // namespace

std::string_view JobPhaseName(JobPhase phase) { return NameOf(kJobPhases, phase); }
std::optional<JobPhase> ParseJobPhase(std::string_view name) { return Parse(kJobPhases, name); }
std::string_view PodPhaseName(PodPhase phase) { return NameOf(kPodPhases, phase); }
std::optional<PodPhase> ParsePodPhase(std::string_view name) { return Parse(kPodPhases, name); }

}  // namespace strata::api
