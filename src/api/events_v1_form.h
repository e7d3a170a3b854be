#pragma once

#include <nlohmann/json.hpp>

namespace strata::api {

// The events.k8s.io/v1 shape of an Event, as kube-apiserver converts a core v1 Event into it:
// involvedObject becomes regarding, message note, count/firstTimestamp/lastTimestamp the
// deprecated* fields; eventTime (which the group requires) is the last occurrence's time, and an
// Event seen more than once gets series {count, lastObservedTime}. reportingController is
// strata's control plane, which writes every Event. `stored` is an Event as the store keeps it;
// anything else is returned as it is. Pure; thread-safe.
nlohmann::json ServedEventsV1(const nlohmann::json& stored);

// The group and version this shape is served under.
inline constexpr char kEventsV1ApiVersion[] = "events.k8s.io/v1";
// The reportingController of the Events strata's control plane writes.
inline constexpr char kEventReportingController[] = "strata.dev/control-plane";

}  // namespace strata::api
