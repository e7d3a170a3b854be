#include "api/object.h"

namespace strata::api {
namespace {

template <typename T>
constexpr std::string_view KindName();
template <>
constexpr std::string_view KindName<Node>() {
  return "Node";
}
template <>
constexpr std::string_view KindName<Queue>() {
  return "Queue";
}
template <>
constexpr std::string_view KindName<ResourceFlavor>() {
  return "ResourceFlavor";
}
template <>
constexpr std::string_view KindName<Job>() {
  return "Job";
}
template <>
constexpr std::string_view KindName<Service>() {
  return "Service";
}
template <>
constexpr std::string_view KindName<Pod>() {
  return "Pod";
}
template <>
constexpr std::string_view KindName<Tenant>() {
  return "Tenant";
}
template <>
constexpr std::string_view KindName<Event>() {
  return "Event";
}
template <>
constexpr std::string_view KindName<Namespace>() {
  return "Namespace";
}

template <>
constexpr std::string_view KindName<ConfigMap>() {
  return "ConfigMap";
}
template <>
constexpr std::string_view KindName<Secret>() {
  return "Secret";
}
template <>
constexpr std::string_view KindName<WorkloadPriorityClass>() {
  return "WorkloadPriorityClass";
}

}  // namespace

std::string_view Object::kind() const {
  return std::visit([](const auto& v) { return KindName<std::decay_t<decltype(v)>>(); }, value_);
}

const ObjectMeta& Object::metadata() const {
  return std::visit([](const auto& v) -> const ObjectMeta& { return v.metadata; }, value_);
}

ObjectMeta& Object::metadata() {
  return std::visit([](auto& v) -> ObjectMeta& { return v.metadata; }, value_);
}

bool IsNamespacedKind(std::string_view kind) {
  return kind == "Job" || kind == "Service" || kind == "Pod" || kind == "Event" ||
         kind == "ConfigMap" || kind == "Secret";
}

}  // namespace strata::api
