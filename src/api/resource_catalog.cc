#include "api/resource_catalog.h"

#include <algorithm>
#include <cctype>

namespace strata::api {
namespace {

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::vector<std::string_view> SplitPath(std::string_view path) {
  std::vector<std::string_view> segments;
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) slash = path.size();
    if (slash > start) segments.push_back(path.substr(start, slash - start));
    start = slash + 1;
  }
  return segments;
}

// Whether a source-served kind has `short_name` among its short names.
bool ClaimedBySourceServedType(std::string_view short_name) {
  for (const ResourceType* type : SourceServedTypes()) {
    for (std::string_view claimed : type->short_names) {
      if (claimed == short_name) return true;
    }
  }
  return false;
}

// The verbs every served kind answers to, as discovery lists them.
nlohmann::json ResourceVerbs() {
  return {"create", "delete", "get", "list", "patch", "update", "watch"};
}

}  // namespace

std::string ResourceType::GroupVersion() const {
  if (group.empty()) return std::string(version);
  return std::string(group) + "/" + std::string(version);
}

std::string ResourceType::GroupVersionPath() const {
  if (group.empty()) return "/api/" + std::string(version);
  return "/apis/" + GroupVersion();
}

std::string ResourceType::Path(std::string_view namespace_name, std::string_view name) const {
  std::string path = GroupVersionPath();
  if (namespaced && !namespace_name.empty()) path += "/namespaces/" + std::string(namespace_name);
  path += "/" + std::string(plural);
  if (!name.empty()) path += "/" + std::string(name);
  return path;
}

const std::vector<ResourceType>& AllResourceTypes() {
  static const std::vector<ResourceType> kTypes = {
      {"Pod", "pods", "pod", {"po"}, "", "v1", true},
      {"Node", "nodes", "node", {"no"}, "", "v1", false},
      {"Event", "events", "event", {"ev"}, "", "v1", true},
      {"Namespace", "namespaces", "namespace", {"ns"}, "", "v1", false},
      {"ConfigMap", "configmaps", "configmap", {"cm"}, "", "v1", true},
      {"Secret", "secrets", "secret", {}, "", "v1", true},
      {"Queue", "queues", "queue", {"q"}, kStrataGroup, kStrataVersion, false},
      {"ResourceFlavor",
       "resourceflavors",
       "resourceflavor",
       {"rf", "flavor", "flavors"},
       kStrataGroup,
       kStrataVersion,
       false},
      {"Job", "jobs", "job", {"sjob"}, kStrataGroup, kStrataVersion, true},
      {"Service", "services", "service", {"svc"}, kStrataGroup, kStrataVersion, true},
      {"Tenant", "tenants", "tenant", {}, kStrataGroup, kStrataVersion, false},
      {"WorkloadPriorityClass",
       "workloadpriorityclasses",
       "workloadpriorityclass",
       {},
       kStrataGroup,
       kStrataVersion,
       false},
  };
  return kTypes;
}

const ResourceType* FindResourceType(std::string_view name) {
  for (const ResourceType& type : AllResourceTypes()) {
    if (EqualsIgnoreCase(name, type.kind) || EqualsIgnoreCase(name, type.plural) ||
        EqualsIgnoreCase(name, type.singular)) {
      return &type;
    }
    for (std::string_view short_name : type.short_names) {
      if (EqualsIgnoreCase(name, short_name)) return &type;
    }
  }
  return nullptr;
}

const ResourceType& EventsV1Type() {
  static const ResourceType kType{"Event", "events", "event", {"ev"}, "events.k8s.io", "v1", true};
  return kType;
}

const ResourceType& BatchJobType() {
  static const ResourceType kType{"Job", "jobs", "job", {}, "batch", "v1", true};
  return kType;
}

const ResourceType& JobSetType() {
  static const ResourceType kType{"JobSet",          "jobsets",  "jobset", {},
                                  "jobset.x-k8s.io", "v1alpha2", true,     "Job"};
  return kType;
}

const ResourceType& ClusterQueueType() {
  static const ResourceType kType{"ClusterQueue",   "clusterqueues", "clusterqueue", {"cq"},
                                  "kueue.x-k8s.io", "v1beta2",       false,          "Queue"};
  return kType;
}

const ResourceType& KueueResourceFlavorType() {
  static const ResourceType kType{"ResourceFlavor",
                                  "resourceflavors",
                                  "resourceflavor",
                                  {"flavor", "flavors", "rf"},
                                  "kueue.x-k8s.io",
                                  "v1beta2",
                                  false};
  return kType;
}

// Kueue's CRD names no short name; wpc is strata's, claimed by no other kind.
const ResourceType& KueueWorkloadPriorityClassType() {
  static const ResourceType kType{"WorkloadPriorityClass",
                                  "workloadpriorityclasses",
                                  "workloadpriorityclass",
                                  {"wpc"},
                                  "kueue.x-k8s.io",
                                  "v1beta2",
                                  false};
  return kType;
}

const ResourceType& CohortType() {
  static const ResourceType kType{"Cohort",         "cohorts", "cohort", {},
                                  "kueue.x-k8s.io", "v1beta2", false,    "Queue"};
  return kType;
}

const std::vector<const ResourceType*>& SourceServedTypes() {
  static const std::vector<const ResourceType*> kTypes = {&BatchJobType(),
                                                          &JobSetType(),
                                                          &ClusterQueueType(),
                                                          &KueueResourceFlavorType(),
                                                          &KueueWorkloadPriorityClassType(),
                                                          &CohortType()};
  return kTypes;
}

const ResourceType& LocalQueueType() {
  // Kueue's short names also hold "queue" and "queues"; they stay strata's Queues' (which
  // Kueue's ClusterQueues are stored as), so that kubectl get queues keeps its meaning here.
  static const ResourceType kType{"LocalQueue",     "localqueues", "localqueue", {"lq"},
                                  "kueue.x-k8s.io", "v1beta2",     true,         "Queue"};
  return kType;
}

namespace {

// Kueue's v1beta1 types, each with the v1beta2 type it is another version of.
const std::vector<std::pair<ResourceType, const ResourceType*>>& KueueV1beta1Pairs() {
  static const std::vector<std::pair<ResourceType, const ResourceType*>> kPairs = [] {
    std::vector<std::pair<ResourceType, const ResourceType*>> pairs;
    for (const ResourceType* storage :
         {&ClusterQueueType(), &KueueResourceFlavorType(), &LocalQueueType(),
          &KueueWorkloadPriorityClassType(), &CohortType()}) {
      ResourceType older = *storage;
      older.version = "v1beta1";
      pairs.emplace_back(std::move(older), storage);
    }
    return pairs;
  }();
  return kPairs;
}

}  // namespace

const std::vector<const ResourceType*>& KueueV1beta1Types() {
  static const std::vector<const ResourceType*> kTypes = [] {
    std::vector<const ResourceType*> types;
    for (const auto& [older, storage] : KueueV1beta1Pairs()) types.push_back(&older);
    return types;
  }();
  return kTypes;
}

const ResourceType& StorageVersionOf(const ResourceType& type) {
  for (const auto& [older, storage] : KueueV1beta1Pairs()) {
    if (&older == &type) return *storage;
  }
  return type;
}

std::string_view DeprecationWarning(const ResourceType& type) {
  return &StorageVersionOf(type) != &type ? "This version is deprecated. Use v1beta2 instead." : "";
}

const ResourceType* FindResourceTypeByKind(std::string_view kind) {
  for (const ResourceType& type : AllResourceTypes()) {
    if (type.kind == kind) return &type;
  }
  return nullptr;
}

Result<ResourcePath> ParseResourcePath(std::string_view path) {
  auto not_found = [&] {
    return Err(
        NotFoundError("the server could not find the requested resource: " + std::string(path)));
  };
  std::vector<std::string_view> segments = SplitPath(path);
  std::string_view group;
  std::string_view version;
  size_t next = 0;
  if (segments.size() >= 2 && segments[0] == "api") {
    version = segments[1];
    next = 2;
  } else if (segments.size() >= 3 && segments[0] == "apis") {
    group = segments[1];
    version = segments[2];
    next = 3;
  } else {
    return not_found();
  }
  ResourcePath result;
  if (segments.size() >= next + 3 && segments[next] == "namespaces") {
    result.namespace_name = std::string(segments[next + 1]);
    next += 2;
  }
  if (segments.size() <= next || segments.size() > next + 3) return not_found();
  for (const ResourceType& type : AllResourceTypes()) {
    if (type.group == group && type.version == version && type.plural == segments[next]) {
      result.type = &type;
    }
  }
  std::vector<const ResourceType*> others = SourceServedTypes();
  others.push_back(&EventsV1Type());
  others.push_back(&LocalQueueType());
  for (const ResourceType* older : KueueV1beta1Types()) others.push_back(older);
  for (const ResourceType* other : others) {
    if (other->group == group && other->version == version && other->plural == segments[next]) {
      result.type = other;
    }
  }
  if (result.type == nullptr) return not_found();
  if (result.namespace_name && !result.type->namespaced) return not_found();
  if (segments.size() > next + 1) result.name = std::string(segments[next + 1]);
  if (segments.size() > next + 2) {
    std::string_view subresource = segments[next + 2];
    bool pod_only =
        subresource == "log" || subresource == "checkpoint" || subresource == "eviction";
    // "scale" is parsed so that the API can say why it has none.
    if (subresource != "status" && subresource != "scale" &&
        !(pod_only && result.type->kind == "Pod")) {
      return not_found();
    }
    result.subresource = std::string(subresource);
  }
  return result;
}

nlohmann::json CoreApiVersions() {
  return {{"kind", "APIVersions"},
          {"versions", {"v1"}},
          {"serverAddressByClientCIDRs", nlohmann::json::array()}};
}

nlohmann::json ApiGroupList() {
  nlohmann::json groups = nlohmann::json::array();
  // Each group's versions, the preferred first (Kueue's: v1beta2, its CRDs' storage version).
  const std::string_view kueue_older = KueueV1beta1Types().front()->version;
  for (const auto& [name, versions] :
       {std::pair{BatchJobType().group, std::vector{BatchJobType().version}},
        std::pair{ClusterQueueType().group, std::vector{ClusterQueueType().version, kueue_older}},
        std::pair{kStrataGroup, std::vector{kStrataVersion}},
        std::pair{EventsV1Type().group, std::vector{EventsV1Type().version}},
        std::pair{JobSetType().group, std::vector{JobSetType().version}}}) {
    nlohmann::json served = nlohmann::json::array();
    for (std::string_view version : versions) {
      served.push_back(
          {{"groupVersion", std::string(name) + "/" + std::string(version)}, {"version", version}});
    }
    groups.push_back({{"name", name}, {"versions", served}, {"preferredVersion", served[0]}});
  }
  return {{"kind", "APIGroupList"}, {"apiVersion", "v1"}, {"groups", std::move(groups)}};
}

std::optional<nlohmann::json> ApiResourceList(std::string_view group_version) {
  nlohmann::json resources = nlohmann::json::array();
  const ResourceType& events = EventsV1Type();
  if (group_version == events.GroupVersion()) {
    resources.push_back({{"name", events.plural},
                         {"singularName", events.singular},
                         {"namespaced", true},
                         {"kind", events.kind},
                         {"shortNames", events.short_names},
                         {"verbs", {"get", "list", "watch"}}});
  }
  std::vector<const ResourceType*> sources = SourceServedTypes();
  std::vector<const ResourceType*> local_queues = {&LocalQueueType()};
  for (const ResourceType* older : KueueV1beta1Types()) {
    // LocalQueues have verbs of their own.
    (&StorageVersionOf(*older) == &LocalQueueType() ? local_queues : sources).push_back(older);
  }
  for (const ResourceType* source : sources) {
    if (group_version != source->GroupVersion()) continue;
    nlohmann::json resource = {{"name", source->plural},
                               {"singularName", source->singular},
                               {"namespaced", source->namespaced},
                               {"kind", source->kind},
                               {"verbs", ResourceVerbs()}};
    if (!source->short_names.empty()) resource["shortNames"] = source->short_names;
    // Kubernetes puts its Jobs in `all`; JobSet's and Kueue's CRDs name no category.
    if (source == &BatchJobType()) resource["categories"] = {"all"};
    resources.push_back(std::move(resource));
    resources.push_back({{"name", std::string(source->plural) + "/status"},
                         {"singularName", ""},
                         {"namespaced", source->namespaced},
                         {"kind", source->kind},
                         {"verbs", {"get"}}});
  }
  for (const ResourceType* local_queue : local_queues) {
    if (group_version != local_queue->GroupVersion()) continue;
    resources.push_back({{"name", local_queue->plural},
                         {"singularName", local_queue->singular},
                         {"namespaced", true},
                         {"kind", local_queue->kind},
                         {"shortNames", local_queue->short_names},
                         {"verbs", ResourceVerbs()}});
  }
  for (const ResourceType& type : AllResourceTypes()) {
    if (type.GroupVersion() != group_version) continue;
    nlohmann::json resource = {{"name", type.plural},
                               {"singularName", type.singular},
                               {"namespaced", type.namespaced},
                               {"kind", type.kind},
                               {"verbs", ResourceVerbs()}};
    // A short name a kind of another group claims first (Kueue's rf) is that kind's for
    // kubectl, which would warn of the other at each use; `strata get` still reads it as
    // strata's (FindResourceType).
    std::vector<std::string_view> short_names;
    for (std::string_view short_name : type.short_names) {
      if (!ClaimedBySourceServedType(short_name)) short_names.push_back(short_name);
    }
    if (!short_names.empty()) resource["shortNames"] = short_names;
    // `all` as Kubernetes fills it (resource_catalog.h): Pods and strata's Services; a Job may
    // be a batch/v1 Job too, which `all` lists already.
    if (type.kind == "Pod") resource["categories"] = {"all"};
    if (!type.group.empty()) {
      resource["categories"] =
          type.kind == "Service" ? nlohmann::json{"all", "strata"} : nlohmann::json{"strata"};
    }
    resources.push_back(std::move(resource));
    if (type.kind == "Pod" || type.kind == "Node") {
      resources.push_back({{"name", std::string(type.plural) + "/status"},
                           {"singularName", ""},
                           {"namespaced", type.namespaced},
                           {"kind", type.kind},
                           {"verbs", {"get", "patch", "update"}}});
    }
    if (type.kind == "Pod") {
      // kubectl drain evicts through it when discovery lists it with its group and version.
      resources.push_back({{"name", "pods/eviction"},
                           {"singularName", ""},
                           {"namespaced", true},
                           {"group", "policy"},
                           {"version", "v1"},
                           {"kind", "Eviction"},
                           {"verbs", {"create"}}});
    }
  }
  if (resources.empty()) return std::nullopt;
  return nlohmann::json{{"kind", "APIResourceList"},
                        {"apiVersion", "v1"},
                        {"groupVersion", group_version},
                        {"resources", std::move(resources)}};
}

nlohmann::json VersionInfo(std::string_view strata_version) {
  // kubectl compares major.minor with its own and only warns on skew; strata speaks the API
  // conventions of this Kubernetes minor.
  return {{"major", "1"},
          {"minor", "30"},
          {"gitVersion", "v1.30.0+strata-" + std::string(strata_version)},
          {"gitCommit", ""},
          {"gitTreeState", "clean"},
          {"buildDate", ""},
          {"goVersion", ""},
          {"compiler", "gcc"},
          {"platform", "linux/amd64"}};
}

}  // namespace strata::api
