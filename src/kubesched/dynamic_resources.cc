#include "kubesched/dynamic_resources.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/field_decoder.h"
#include "common/json_member.h"

namespace strata::kubesched {
namespace {

using nlohmann::json;

// "domain/name" for a slice's attribute or capacity key; an unqualified one takes the driver.
std::string Qualified(const std::string& key, const std::string& driver) {
  return key.find('/') == std::string::npos ? driver + "/" + key : key;
}

DeviceView ViewOf(const json& device, const std::string& driver) {
  DeviceView view;
  view.driver = driver;
  if (const json& attributes = MemberOrNull(device, "attributes"); attributes.is_object()) {
    for (const auto& [key, value] : attributes.items()) {
      std::string name = Qualified(key, driver);
      if (const json& b = MemberOrNull(value, "bool"); b.is_boolean()) {
        view.attributes.emplace(name, b.get<bool>());
      } else if (const json& i = MemberOrNull(value, "int"); i.is_number_integer()) {
        view.attributes.emplace(name, i.get<int64_t>());
      } else if (const json& s = MemberOrNull(value, "string"); s.is_string()) {
        view.attributes.emplace(name, s.get<std::string>());
      } else if (const json& v = MemberOrNull(value, "version"); v.is_string()) {
        view.attributes.emplace(name, v.get<std::string>());
      }
    }
  }
  if (const json& capacity = MemberOrNull(device, "capacity"); capacity.is_object()) {
    for (const auto& [key, value] : capacity.items()) {
      Result<Quantity> quantity = QuantityFromJson(MemberOrNull(value, "value"));
      if (quantity) view.capacity.emplace(Qualified(key, driver), *quantity);
    }
  }
  return view;
}

// Compiles the CEL selectors of `selectors` (a DeviceSelector list) into `out`; the error names
// `where`.
Status CompileSelectors(const json& selectors, const std::string& where,
                        std::vector<DeviceSelector>* out) {
  for (size_t i = 0; selectors.is_array() && i < selectors.size(); ++i) {
    std::string expression = StringMemberOr(MemberOrNull(selectors[i], "cel"), "expression");
    Result<DeviceSelector> selector = DeviceSelector::Compile(expression);
    if (!selector) {
      return selector.error().WithPrefix(where + ".selectors[" + std::to_string(i) +
                                         "].cel.expression");
    }
    out->push_back(std::move(*selector));
  }
  return Status::Ok();
}

bool MatchesAll(const std::vector<DeviceSelector>& selectors, const DraDevice& device) {
  return std::all_of(selectors.begin(), selectors.end(),
                     [&](const DeviceSelector& s) { return s.Matches(device.view); });
}

// The attribute's value as text, or nullopt when the device lacks it.
std::optional<std::string> AttributeText(const DraDevice& device, const std::string& name) {
  auto it = device.view.attributes.find(name);
  if (it == device.view.attributes.end()) return std::nullopt;
  return std::visit(
      [](const auto& value) -> std::string {
        using T = std::decay_t<decltype(value)>;
        if constexpr (std::is_same_v<T, std::string>)
          return "s:" + value;
        else if constexpr (std::is_same_v<T, bool>)
          return value ? "b:true" : "b:false";
        else
          return "i:" + std::to_string(value);
      },
      it->second);
}

}  // namespace

std::vector<PodClaimRef> PodClaimRefs(const json& pod) {
  std::vector<PodClaimRef> refs;
  const json& claims = MemberOrNull(MemberOrNull(pod, "spec"), "resourceClaims");
  if (!claims.is_array()) return refs;
  const json& statuses = MemberOrNull(MemberOrNull(pod, "status"), "resourceClaimStatuses");
  for (const json& claim : claims) {
    PodClaimRef ref;
    ref.name = StringMemberOr(claim, "name");
    ref.claim_name = StringMemberOr(claim, "resourceClaimName");
    if (ref.claim_name.empty() && statuses.is_array()) {
      for (const json& status : statuses)
        if (StringMemberOr(status, "name") == ref.name)
          ref.claim_name = StringMemberOr(status, "resourceClaimName");
    }
    refs.push_back(std::move(ref));
  }
  return refs;
}

DraCluster::DraCluster(const DraObjects& objects, std::string gpu_driver)
    : gpu_driver_(std::move(gpu_driver)), objects_(&objects) {
  // The newest generation of each pool counts; older slices are being replaced.
  std::map<std::string, int64_t> newest;  // driver/pool -> generation
  for (const auto& [name, slice] : objects.slices) {
    const json& spec = MemberOrNull(slice, "spec");
    const json& pool = MemberOrNull(spec, "pool");
    std::string key = StringMemberOr(spec, "driver") + "/" + StringMemberOr(pool, "name");
    int64_t generation = MemberOrNull(pool, "generation").is_number_integer()
                             ? MemberOrNull(pool, "generation").get<int64_t>()
                             : 0;
    newest[key] = std::max(newest[key], generation);
  }
  for (const auto& [name, slice] : objects.slices) {
    const json& spec = MemberOrNull(slice, "spec");
    std::string driver = StringMemberOr(spec, "driver");
    std::string node = StringMemberOr(spec, "nodeName");
    const json& pool = MemberOrNull(spec, "pool");
    std::string pool_name = StringMemberOr(pool, "name");
    const json& generation = MemberOrNull(pool, "generation");
    if (driver != gpu_driver_ || node.empty()) continue;
    if (generation.is_number_integer() &&
        generation.get<int64_t>() < newest[driver + "/" + pool_name])
      continue;
    const json& devices = MemberOrNull(spec, "devices");
    for (size_t d = 0; devices.is_array() && d < devices.size(); ++d) {
      DraDevice device;
      device.driver = driver;
      device.pool = pool_name;
      device.name = StringMemberOr(devices[d], "name");
      device.view = ViewOf(devices[d], driver);
      // A MIG instance or another partition is not a whole GPU.
      auto type = device.view.attributes.find(driver + "/type");
      if (type != device.view.attributes.end() &&
          type->second != DeviceAttribute(std::string("gpu")))
        continue;
      const json& taints = MemberOrNull(devices[d], "taints");
      device.tainted = taints.is_array() && !taints.empty();
      device_node_[device.Id()] = node;
      gpus_[node].push_back(std::move(device));
    }
  }
  for (auto& [node, devices] : gpus_) {
    std::sort(devices.begin(), devices.end(),
              [](const DraDevice& a, const DraDevice& b) { return a.Id() < b.Id(); });
  }
  for (const auto& [key, claim] : objects.claims) {
    const json& results = MemberOrNull(
        MemberOrNull(MemberOrNull(MemberOrNull(claim, "status"), "allocation"), "devices"),
        "results");
    for (size_t r = 0; results.is_array() && r < results.size(); ++r) {
      allocated_.insert(StringMemberOr(results[r], "driver") + "/" +
                        StringMemberOr(results[r], "pool") + "/" +
                        StringMemberOr(results[r], "device"));
    }
  }
}

const std::vector<DraDevice>* DraCluster::GpusOf(std::string_view node) const {
  auto it = gpus_.find(node);
  return it == gpus_.end() ? nullptr : &it->second;
}

scheduler::Gpu DraCluster::AsGpu(const DraDevice& device) const {
  scheduler::Gpu gpu;
  if (auto product = device.view.attributes.find(device.driver + "/productName");
      product != device.view.attributes.end() &&
      std::holds_alternative<std::string>(product->second))
    gpu.model = std::get<std::string>(product->second);
  if (auto memory = device.view.capacity.find(device.driver + "/memory");
      memory != device.view.capacity.end())
    gpu.memory_mib = memory->second.Units() / (1024 * 1024);
  if (auto island = device.view.attributes.find(kIslandAttribute);
      island != device.view.attributes.end() && std::holds_alternative<int64_t>(island->second))
    gpu.island = static_cast<int>(std::get<int64_t>(island->second));
  return gpu;
}

std::string DraCluster::NodeOfDevice(const std::string& id) const {
  auto it = device_node_.find(id);
  return it == device_node_.end() ? "" : it->second;
}

int DraCluster::IndexOf(const std::string& node, const std::string& id) const {
  const std::vector<DraDevice>* devices = GpusOf(node);
  for (size_t i = 0; devices && i < devices->size(); ++i)
    if ((*devices)[i].Id() == id) return static_cast<int>(i);
  return -1;
}

PodClaims DraCluster::Resolve(const std::string& namespace_name, const std::string& pod_uid,
                              const std::vector<PodClaimRef>& refs) const {
  PodClaims out;
  for (const PodClaimRef& ref : refs) {
    if (ref.claim_name.empty()) {
      out.why =
          fmt::format("waiting for the ResourceClaim of pod claim \"{}\" to be made", ref.name);
      return out;
    }
    auto found = objects_->claims.find(namespace_name + "/" + ref.claim_name);
    if (found == objects_->claims.end()) {
      out.why = fmt::format("ResourceClaim {}/{} does not exist", namespace_name, ref.claim_name);
      return out;
    }
    const json& object = found->second;
    std::string where = fmt::format("ResourceClaim {}/{}", namespace_name, ref.claim_name);
    PodClaims::Claim claim;
    claim.namespace_name = namespace_name;
    claim.name = ref.claim_name;
    claim.object = &object;
    const json& status = MemberOrNull(object, "status");
    const json& reserved = MemberOrNull(status, "reservedFor");
    for (size_t i = 0; reserved.is_array() && i < reserved.size(); ++i)
      claim.reserved = claim.reserved || StringMemberOr(reserved[i], "uid") == pod_uid;
    const json& results =
        MemberOrNull(MemberOrNull(MemberOrNull(status, "allocation"), "devices"), "results");
    if (MemberOrNull(status, "allocation").is_object()) {
      for (size_t r = 0; results.is_array() && r < results.size(); ++r) {
        std::string id = StringMemberOr(results[r], "driver") + "/" +
                         StringMemberOr(results[r], "pool") + "/" +
                         StringMemberOr(results[r], "device");
        std::string node = NodeOfDevice(id);
        if (node.empty()) {
          out.why = where + ": allocated device " + id + " is not a GPU of a node strata knows";
          return out;
        }
        if (!out.node.empty() && out.node != node) {
          out.why = where + ": its devices are on several nodes";
          return out;
        }
        out.node = node;
        claim.allocated.push_back(id);
      }
      out.claims.push_back(std::move(claim));
      continue;
    }
    const json& devices = MemberOrNull(MemberOrNull(object, "spec"), "devices");
    const json& requests = MemberOrNull(devices, "requests");
    for (size_t r = 0; requests.is_array() && r < requests.size(); ++r) {
      std::string at = fmt::format("{}: spec.devices.requests[{}]", where, r);
      const json& exactly = MemberOrNull(requests[r], "exactly");
      if (!exactly.is_object()) {
        out.why = at + ": only `exactly` requests are supported (not firstAvailable)";
        return out;
      }
      std::string mode = StringMemberOr(exactly, "allocationMode", "ExactCount");
      if (mode != "ExactCount") {
        out.why = at + ".exactly.allocationMode: only ExactCount is supported";
        return out;
      }
      for (const char* field : {"adminAccess", "capacity"}) {
        const json& value = MemberOrNull(exactly, field);
        if (!value.is_null() && value != false) {
          out.why = at + ".exactly." + field + " is not supported";
          return out;
        }
      }
      PodClaims::Request request;
      request.name = StringMemberOr(requests[r], "name");
      const json& count = MemberOrNull(exactly, "count");
      request.count = count.is_number_integer() ? static_cast<int>(count.get<int64_t>()) : 1;
      std::string class_name = StringMemberOr(exactly, "deviceClassName");
      auto device_class = objects_->classes.find(class_name);
      if (device_class == objects_->classes.end()) {
        out.why = fmt::format("DeviceClass {} does not exist", class_name);
        return out;
      }
      Status compiled =
          CompileSelectors(MemberOrNull(MemberOrNull(device_class->second, "spec"), "selectors"),
                           "DeviceClass " + class_name + ": spec", &request.selectors);
      if (compiled.ok())
        compiled = CompileSelectors(MemberOrNull(exactly, "selectors"), at + ".exactly",
                                    &request.selectors);
      if (!compiled.ok()) {
        out.why = compiled.message();
        return out;
      }
      out.to_allocate += request.count;
      claim.requests.push_back(std::move(request));
    }
    const json& constraints = MemberOrNull(devices, "constraints");
    if (constraints.is_array() && constraints.size() > 1) {
      out.why = where + ": spec.devices.constraints: at most one constraint is supported";
      return out;
    }
    if (constraints.is_array() && constraints.size() == 1) {
      const json& constraint = constraints[0];
      if (!MemberOrNull(constraint, "distinctAttribute").is_null()) {
        out.why = where + ": spec.devices.constraints[0].distinctAttribute is not supported";
        return out;
      }
      claim.match_attribute = StringMemberOr(constraint, "matchAttribute");
      if (const json& names = MemberOrNull(constraint, "requests"); names.is_array())
        for (const json& name : names)
          if (name.is_string()) claim.constrained.insert(name.get<std::string>());
    }
    out.claims.push_back(std::move(claim));
  }
  return out;
}

Result<std::vector<int>> DraCluster::Allocate(const PodClaims& claims, const std::string& node,
                                              const std::vector<int>& preferred,
                                              std::set<std::string>* used) const {
  const std::vector<DraDevice>* devices = GpusOf(node);
  std::vector<int> taken;
  if (claims.to_allocate == 0) return taken;
  if (!devices) {
    return tl::unexpected(Status(StatusCode::kFailedPrecondition, "the node has no DRA GPUs"));
  }
  // Devices in order of preference: the scheduler's choice first, then by index.
  std::vector<int> order;
  for (int g : preferred)
    if (g >= 0 && static_cast<size_t>(g) < devices->size()) order.push_back(g);
  for (int g = 0; g < static_cast<int>(devices->size()); ++g)
    if (std::find(order.begin(), order.end(), g) == order.end()) order.push_back(g);
  auto is_free = [&](int g) {
    const DraDevice& d = (*devices)[static_cast<size_t>(g)];
    return !d.tainted && !allocated_.count(d.Id()) && !used->count(d.Id());
  };
  for (const PodClaims::Claim& claim : claims.claims) {
    if (!claim.allocated.empty() || claim.requests.empty()) continue;
    // The attribute values to try for a matchAttribute constraint; one pass without one.
    std::vector<std::optional<std::string>> groups = {std::nullopt};
    if (!claim.match_attribute.empty()) {
      groups.clear();
      for (int g : order) {
        std::optional<std::string> value =
            AttributeText((*devices)[static_cast<size_t>(g)], claim.match_attribute);
        if (value && std::find(groups.begin(), groups.end(), value) == groups.end())
          groups.push_back(value);
      }
    }
    bool done = false;
    for (const std::optional<std::string>& group : groups) {
      std::vector<int> chosen;
      std::set<int> taken_here;
      bool ok = true;
      for (const PodClaims::Request& request : claim.requests) {
        bool constrained =
            group && (claim.constrained.empty() || claim.constrained.count(request.name) > 0);
        int found = 0;
        for (int g : order) {
          if (found == request.count) break;
          const DraDevice& d = (*devices)[static_cast<size_t>(g)];
          if (!is_free(g) || taken_here.count(g) || !MatchesAll(request.selectors, d)) continue;
          if (constrained && AttributeText(d, claim.match_attribute) != group) continue;
          taken_here.insert(g);
          chosen.push_back(g);
          ++found;
        }
        ok = ok && found == request.count;
      }
      if (!ok) continue;
      for (int g : chosen) {
        used->insert((*devices)[static_cast<size_t>(g)].Id());
        taken.push_back(g);
      }
      done = true;
      break;
    }
    if (!done) {
      return tl::unexpected(
          Status(StatusCode::kFailedPrecondition,
                 fmt::format("ResourceClaim {}/{}: not enough free matching devices on node {}{}",
                             claim.namespace_name, claim.name, node,
                             claim.match_attribute.empty()
                                 ? ""
                                 : " sharing one value of " + claim.match_attribute)));
    }
  }
  return taken;
}

std::vector<ClaimWrite> DraCluster::Writes(const PodClaims& claims, const std::string& node,
                                           const std::vector<int>& taken,
                                           const std::string& pod_name,
                                           const std::string& pod_uid) const {
  std::vector<ClaimWrite> writes;
  const std::vector<DraDevice>* devices = GpusOf(node);
  size_t next = 0;
  for (const PodClaims::Claim& claim : claims.claims) {
    bool allocating = claim.allocated.empty() && !claim.requests.empty();
    if (!allocating && claim.reserved) continue;
    ClaimWrite write;
    write.namespace_name = claim.namespace_name;
    write.name = claim.name;
    write.claim = *claim.object;
    json& status = write.claim["status"];
    if (!status.is_object()) status = json::object();
    if (allocating) {
      json results = json::array();
      for (const PodClaims::Request& request : claim.requests) {
        for (int i = 0; i < request.count && next < taken.size(); ++i, ++next) {
          const DraDevice& d = (*devices)[static_cast<size_t>(taken[next])];
          results.push_back({{"request", request.name},
                             {"driver", d.driver},
                             {"pool", d.pool},
                             {"device", d.name}});
        }
      }
      status["allocation"] = {
          {"devices", {{"results", std::move(results)}}},
          {"nodeSelector",
           {{"nodeSelectorTerms",
             {{{"matchFields",
                {{{"key", "metadata.name"}, {"operator", "In"}, {"values", {node}}}}}}}}}}};
      const json& finalizers = MemberOrNull(write.claim["metadata"], "finalizers");
      write.add_finalizer =
          !finalizers.is_array() || std::find(finalizers.begin(), finalizers.end(),
                                              json(kClaimFinalizer)) == finalizers.end();
    }
    if (!claim.reserved) {
      if (!status["reservedFor"].is_array()) status["reservedFor"] = json::array();
      status["reservedFor"].push_back({{"resource", "pods"}, {"name", pod_name}, {"uid", pod_uid}});
    }
    writes.push_back(std::move(write));
  }
  return writes;
}

}  // namespace strata::kubesched
