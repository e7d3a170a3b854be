#include "api/strategic_merge_patch.h"

#include <algorithm>
#include <string>
#include <vector>

#include "api/resource_catalog.h"
#include "common/field_errors.h"

namespace strata::api {
namespace {

using nlohmann::json;

constexpr std::string_view kPatchDirective = "$patch";
constexpr std::string_view kSetElementOrderPrefix = "$setElementOrder/";

// Where the merge is in the object: `schema` joins map keys only (what kMergingLists names),
// `field` adds list indices (what errors name).
struct Location {
  std::string schema;
  std::string field;

  Location Member(std::string_view key) const {
    return {schema.empty() ? std::string(key) : schema + "." + std::string(key),
            field.empty() ? std::string(key) : field + "." + std::string(key)};
  }
  Location Item(size_t index) const { return {schema, field + "[" + std::to_string(index) + "]"}; }
};

Status FieldError(const Location& at, std::string_view message) {
  return InvalidArgumentError((at.field.empty() ? std::string("patch") : at.field) + ": " +
                              std::string(message));
}

class StrategicMerge {
 public:
  explicit StrategicMerge(std::string_view kind) : kind_(kind) {}

  // `patch` merged into `original`, both maps at `at`.
  Result<json> MergeMap(json original, const json& patch, const Location& at) const {
    if (!original.is_object()) original = json::object();
    if (auto directive = patch.find(kPatchDirective); directive != patch.end()) {
      const std::string value = directive->is_string() ? directive->get<std::string>() : "";
      if (value == "replace") return WithoutDirectives(patch, at);
      if (value == "delete") return json::object();
      if (value != "merge") {
        return Err(
            FieldError(at.Member(kPatchDirective),
                       "expected \"replace\", \"merge\" or \"delete\", got " + directive->dump()));
      }
    }
    for (const auto& [key, value] : patch.items()) {
      if (key.starts_with("$")) {
        if (key == kPatchDirective || key.starts_with(kSetElementOrderPrefix)) continue;
        return Err(FieldError(at.Member(key), UnsupportedDirective(key)));
      }
      const Location member = at.Member(key);
      if (value.is_null()) {
        original.erase(key);
        continue;
      }
      if (const MergingList* list = Merging(member)) {
        if (!value.is_array())
          return Err(FieldError(member, "expected a list, got " + value.dump()));
        ASSIGN_OR_RETURN(original[key], MergeList(original.value(key, json::array()), value,
                                                  list->merge_key, member));
      } else if (value.is_object()) {
        ASSIGN_OR_RETURN(original[key], MergeMap(original.value(key, json()), value, member));
      } else {
        original[key] = value;
      }
    }
    for (const auto& [key, order] : patch.items()) {
      if (!key.starts_with(kSetElementOrderPrefix)) continue;
      const std::string list_key = key.substr(kSetElementOrderPrefix.size());
      const Location member = at.Member(list_key);
      const MergingList* list = Merging(member);
      if (list == nullptr) {
        return Err(
            FieldError(at.Member(key), "the list " + Quoted(member.field) +
                                           " is not merged by key, so it has no element order"));
      }
      if (original.contains(list_key)) {
        RETURN_IF_ERROR(Reorder(original[list_key], order, list->merge_key, at.Member(key)));
      }
    }
    return original;
  }

 private:
  const MergingList* Merging(const Location& at) const {
    for (const MergingList& list : MergingLists()) {
      if (list.kind == kind_ && list.path == at.schema) return &list;
    }
    return nullptr;
  }

  static std::string UnsupportedDirective(const std::string& key) {
    return "the directive " + Quoted(key) +
           " is not supported here (strata stores no field that uses it; $patch and "
           "$setElementOrder/ are)";
  }

  // `value` with its directives applied to nothing: what a replacement or a new item holds.
  Result<json> WithoutDirectives(const json& value, const Location& at) const {
    json stripped = value;
    stripped.erase(std::string(kPatchDirective));
    return MergeMap(json::object(), stripped, at);
  }

  Result<json> MergeList(json original, const json& patch, std::string_view merge_key,
                         const Location& at) const {
    if (!original.is_array()) original = json::array();
    const bool replace = std::any_of(patch.begin(), patch.end(), [](const json& item) {
      return item.is_object() && item.size() == 1 && item.value(kPatchDirective, "") == "replace";
    });
    if (replace) original = json::array();
    for (size_t i = 0; i < patch.size(); ++i) {
      const json& item = patch[i];
      const Location item_at = at.Item(i);
      if (replace && item.size() == 1 && item.contains(kPatchDirective)) continue;
      if (!item.is_object() || !item.contains(merge_key) || item[merge_key].is_null()) {
        return Err(FieldError(item_at, "each item of this list is merged by its " +
                                           std::string(merge_key) + ", and this one has none"));
      }
      const json& key_value = item[merge_key];
      auto same_key = [&](const json& existing) {
        return existing.is_object() && existing.contains(merge_key) &&
               existing[merge_key] == key_value;
      };
      const std::string directive = item.value(kPatchDirective, "");
      if (directive == "delete") {
        original.erase(std::remove_if(original.begin(), original.end(), same_key), original.end());
        continue;
      }
      auto existing = std::find_if(original.begin(), original.end(), same_key);
      if (existing == original.end()) {
        ASSIGN_OR_RETURN(json added, MergeMap(json::object(), item, item_at));
        original.push_back(std::move(added));
      } else {
        ASSIGN_OR_RETURN(*existing, MergeMap(*existing, item, item_at));
      }
    }
    return original;
  }

  // Kubernetes' $setElementOrder: the items `order` names come first, in its order; the rest
  // keep their order after them.
  static Status Reorder(json& list, const json& order, std::string_view merge_key,
                        const Location& at) {
    if (!order.is_array()) return FieldError(at, "expected a list, got " + order.dump());
    json ordered = json::array();
    for (size_t i = 0; i < order.size(); ++i) {
      if (!order[i].is_object() || !order[i].contains(merge_key)) {
        return FieldError(at.Item(i), "expected an object with " + std::string(merge_key));
      }
      for (json& item : list) {
        if (!item.is_null() && item.is_object() &&
            item.value(merge_key, json()) == order[i][merge_key]) {
          ordered.push_back(std::move(item));
          item = json();  // taken
        }
      }
    }
    for (json& item : list) {
      if (!item.is_null()) ordered.push_back(std::move(item));
    }
    list = std::move(ordered);
    return Status::Ok();
  }

  std::string_view kind_;
};

}  // namespace

const std::vector<MergingList>& MergingLists() {
  static const std::vector<MergingList> kLists = {
      {"Pod", "spec.containers", "name"},      // v1 PodSpec.containers
      {"Pod", "spec.containers.env", "name"},  // v1 Container.env
      {"Pod", "spec.template.env", "name"},    // strata's form of the same list
      {"Node", "status.conditions", "type"},   // v1 NodeStatus.conditions
      {kBatchJobPatchKind, "spec.template.spec.containers", "name"},
      {kBatchJobPatchKind, "spec.template.spec.containers.env", "name"},
  };
  return kLists;
}

bool AcceptsStrategicMergePatch(std::string_view kind) {
  if (kind == kBatchJobPatchKind) return true;
  const ResourceType* type = FindResourceTypeByKind(kind);
  return type != nullptr && type->group.empty();
}

Result<nlohmann::json> ApplyStrategicMergePatch(std::string_view kind,
                                                const nlohmann::json& original,
                                                const nlohmann::json& patch) {
  if (!patch.is_object()) {
    return Err(InvalidArgumentError("a strategic merge patch is a JSON object, got a JSON " +
                                    std::string(patch.type_name())));
  }
  return StrategicMerge(kind).MergeMap(original, patch, Location());
}

}  // namespace strata::api
