#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "common/clock.h"
#include "common/status.h"
#include "kube/resource.h"

// The objects that say how large a gang is and how it is placed: Kubernetes' own PodGroups (the
// Workload API's runtime groups, scheduling.k8s.io/v1beta1 as Kubernetes 1.37 serves them, feature
// gate GenericWorkload) and Volcano's PodGroups (scheduling.volcano.sh/v1beta1).

namespace strata::kubesched {

namespace group_resources {
inline const kube::GroupVersionResource kPodGroups{"scheduling.k8s.io", "v1beta1", "podgroups"};
inline const kube::GroupVersionResource kVolcanoPodGroups{"scheduling.volcano.sh", "v1beta1",
                                                          "podgroups"};
}  // namespace group_resources

// What a group object asks of its pods' placement.
struct GroupPolicy {
  // false: the group's pods are placed one by one (a Kubernetes PodGroup's `basic` policy).
  bool gang = true;
  // The least number of the group's pods placed together; the rest follow one by one.
  int64_t min_count = 1;
  // A node label key all of the group's pods share one value of ("" for none): a Kubernetes
  // PodGroup's schedulingConstraints.topology[0].key.
  std::string required_topology;
  bool operator==(const GroupPolicy&) const = default;
};

// A Kubernetes PodGroup's policy: spec.schedulingPolicy (exactly one of basic and gang, with
// gang.minCount >= 1) and spec.schedulingConstraints.topology. InvalidArgument naming the
// field when the object breaks the API's own rules (an API server validates them; this reads
// what a watch delivered).
Result<GroupPolicy> PolicyOfPodGroup(const nlohmann::json& object);

// A Volcano PodGroup's policy: spec.minMember (default 1; 0 reads as 1).
Result<GroupPolicy> PolicyOfVolcanoPodGroup(const nlohmann::json& object);

// kube-scheduler's condition on a Kubernetes PodGroup: True once its gang was placed (then
// never written again), False with reason Unschedulable while it waits.
inline constexpr const char* kPodGroupScheduledCondition = "PodGroupInitiallyScheduled";

// The status to merge-patch into `object` (a Kubernetes PodGroup) so that its
// PodGroupInitiallyScheduled condition says `scheduled` with `message`, or nullopt when it
// says so already or is True (the condition is terminal once True). Other conditions are kept;
// lastTransitionTime is `now` when the status changes, kept otherwise.
std::optional<nlohmann::json> PodGroupStatusPatch(const nlohmann::json& object, bool scheduled,
                                                  const std::string& message, TimePoint now);

}  // namespace strata::kubesched
