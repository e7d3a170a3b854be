#include "cluster/indexes.h"

#include <fmt/format.h>

namespace strata::cluster {

std::string OwnerIndexValue(std::string_view kind, std::string_view namespace_name,
                            std::string_view name) {
  return fmt::format("{}/{}/{}", kind, namespace_name, name);
}

namespace {

IndexSpec PodsByNode() {
  return {kPodsByNode, "Pod", [](const CachedObject& object) {
            const api::Pod* pod = object.As<api::Pod>();
            if (pod == nullptr || pod->spec.node_name.empty()) return std::vector<std::string>{};
            return std::vector<std::string>{pod->spec.node_name};
          }};
}

}  // namespace

CacheOptions NodeAgentCacheOptions() {
  CacheOptions options;
  options.kinds = {"Node", "Pod"};
  options.indexes.push_back(PodsByNode());
  return options;
}

CacheOptions ControlPlaneCacheOptions() {
  CacheOptions options;
  options.kinds = {"Node", "Queue", "ResourceFlavor", "Job", "Service", "Pod", "Tenant", "Event"};
  options.indexes.push_back(
      {kPodsByOwner, "Pod", [](const CachedObject& object) {
         const api::Pod* pod = object.As<api::Pod>();
         if (pod == nullptr || pod->spec.owner.kind.empty()) {
           return std::vector<std::string>{};
         }
         return std::vector<std::string>{OwnerIndexValue(
             pod->spec.owner.kind, pod->metadata.namespace_name, pod->spec.owner.name)};
       }});
  options.indexes.push_back(PodsByNode());
  return options;
}

}  // namespace strata::cluster
