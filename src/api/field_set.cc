#include "api/field_set.h"

#include <algorithm>

#include "api/strategic_merge_patch.h"

namespace strata::api {
namespace {

using nlohmann::json;

constexpr std::string_view kItemStep = ".";

// metadata's fields that the server sets, which no manager owns (Kubernetes strips the same).
bool IsBookkeeping(std::string_view key) {
  return key == "name" || key == "namespace" || key == "uid" || key == "resourceVersion" ||
         key == "generation" || key == "creationTimestamp" || key == "managedFields" ||
         key == "selfLink" || key == "deletionTimestamp" || key == "generateName";
}

// The key field of the list at `dotted` ("spec.containers") of `kind`, or "" when the list is
// atomic.
std::string_view ListKeyOf(std::string_view kind, std::string_view dotted) {
  for (const MergingList& list : MergingLists()) {
    if (list.kind == kind && list.path == dotted) return list.merge_key;
  }
  return "";
}

std::string Join(std::string_view dotted, std::string_view key) {
  return dotted.empty() ? std::string(key) : std::string(dotted) + "." + std::string(key);
}

// Whether every item of `list` is an object with the key field `key`: only then is it merged by
// key; a list that breaks the rule is one atomic field, as the decoder will refuse it anyway.
bool AllItemsKeyed(const json& list, std::string_view key) {
  return std::all_of(list.begin(), list.end(), [&](const json& item) {
    return item.is_object() && item.contains(std::string(key));
  });
}

std::string KeyStep(std::string_view key, const json& value) {
  return "k:" + json{{std::string(key), value}}.dump();
}

void Walk(std::string_view kind, const json& value, const std::string& dotted, FieldPath& path,
          FieldSet& out) {
  if (value.is_object() && !value.empty()) {
    for (auto it = value.begin(); it != value.end(); ++it) {
      path.push_back("f:" + it.key());
      Walk(kind, it.value(), Join(dotted, it.key()), path, out);
      path.pop_back();
    }
    return;
  }
  const std::string_view key = value.is_array() ? ListKeyOf(kind, dotted) : "";
  if (key.empty() || value.empty() || !AllItemsKeyed(value, key)) {
    if (!path.empty()) out.insert(path);
    return;
  }
  for (const json& item : value) {
    path.push_back(KeyStep(key, item.at(std::string(key))));
    path.emplace_back(kItemStep);
    out.insert(path);
    path.pop_back();
    Walk(kind, item, dotted, path, out);
    path.pop_back();
  }
}

// The item of `list` whose fields match those of the key step's object, or list.end().
template <typename Json>
auto FindKeyed(Json& list, const json& key) {
  return std::find_if(list.begin(), list.end(), [&](const json& item) {
    if (!item.is_object()) return false;
    for (auto it = key.begin(); it != key.end(); ++it) {
      if (!item.contains(it.key()) || item.at(it.key()) != it.value()) return false;
    }
    return true;
  });
}

// The value at the first `steps` steps of `path` in `object`, or nullptr. `Json` is json or
// const json.
template <typename Json>
Json* Find(Json& object, const FieldPath& path, size_t steps) {
  Json* at = &object;
  for (size_t i = 0; i < steps; ++i) {
    const std::string& step = path[i];
    if (step == kItemStep) continue;
    if (step.starts_with("f:")) {
      const std::string key = step.substr(2);
      if (!at->is_object() || !at->contains(key)) return nullptr;
      at = &at->at(key);
    } else if (step.starts_with("k:")) {
      const json key = json::parse(step.substr(2), nullptr, /*allow_exceptions=*/false);
      if (!at->is_array() || !key.is_object()) return nullptr;
      auto item = FindKeyed(*at, key);
      if (item == at->end()) return nullptr;
      at = &*item;
    } else {
      return nullptr;
    }
  }
  return at;
}

void ToV1(const FieldPath& path, json& root) {
  json* node = &root;
  for (const std::string& step : path) {
    json& child = (*node)[step];
    if (child.is_null()) child = json::object();
    node = &child;
  }
}

Status FromV1(const json& node, FieldPath& path, FieldSet& out) {
  for (auto it = node.begin(); it != node.end(); ++it) {
    const std::string& step = it.key();
    const bool known = step == kItemStep || step.starts_with("f:") || step.starts_with("k:") ||
                       step.starts_with("v:") || step.starts_with("i:");
    path.push_back(step);
    if (!known || !it.value().is_object()) {
      std::string where;
      for (const std::string& s : path) where += (where.empty() ? "" : "/") + s;
      return InvalidArgumentError(
          "fieldsV1: " + where +
          (known ? ": expected an object" : ": a step is f:FIELD, k:{KEY}, v:VALUE, i:INDEX or ."));
    }
    if (it.value().empty()) {
      out.insert(path);
    } else {
      if (Status inner = FromV1(it.value(), path, out); !inner.ok()) return inner;
    }
    path.pop_back();
  }
  return Status::Ok();
}

json Merge(std::string_view kind, const json& live, const json& applied,
           const std::string& dotted) {
  if (live.is_object() && applied.is_object()) {
    json merged = live;
    for (auto it = applied.begin(); it != applied.end(); ++it) {
      merged[it.key()] = live.contains(it.key())
                             ? Merge(kind, live.at(it.key()), it.value(), Join(dotted, it.key()))
                             : it.value();
    }
    return merged;
  }
  const std::string_view key = applied.is_array() ? ListKeyOf(kind, dotted) : "";
  if (key.empty() || !live.is_array() || !AllItemsKeyed(live, key) ||
      !AllItemsKeyed(applied, key)) {
    return applied;
  }
  json merged = live;
  const std::string key_field(key);
  for (const json& item : applied) {
    auto same = FindKeyed(merged, json{{key_field, item.at(key_field)}});
    if (same == merged.end()) {
      merged.push_back(item);
    } else {
      *same = Merge(kind, *same, item, dotted);
    }
  }
  return merged;
}

}  // namespace

FieldSet FieldsOf(std::string_view kind, const nlohmann::json& object, FieldScope scope) {
  FieldSet out;
  if (!object.is_object()) return out;
  FieldPath path;
  for (auto it = object.begin(); it != object.end(); ++it) {
    const std::string& key = it.key();
    if (key == "apiVersion" || key == "kind") continue;
    if ((key == "status") != (scope == FieldScope::kStatus)) continue;
    if (key == "metadata" && it.value().is_object()) {
      for (auto field = it.value().begin(); field != it.value().end(); ++field) {
        if (IsBookkeeping(field.key())) continue;
        path = {"f:metadata", "f:" + field.key()};
        Walk(kind, field.value(), "metadata." + field.key(), path, out);
      }
      continue;
    }
    path = {"f:" + key};
    Walk(kind, it.value(), key, path, out);
  }
  return out;
}

const nlohmann::json* ValueAt(const nlohmann::json& object, const FieldPath& path) {
  return Find(object, path, path.size());
}

FieldSet ChangedFields(std::string_view kind, const nlohmann::json& before,
                       const nlohmann::json& after, FieldScope scope) {
  FieldSet changed;
  for (const FieldPath& path : FieldsOf(kind, after, scope)) {
    if (path.back() == kItemStep) {
      if (ValueAt(before, path) == nullptr) changed.insert(path);
      continue;
    }
    const json* old_value = ValueAt(before, path);
    if (old_value == nullptr || *old_value != *ValueAt(after, path)) changed.insert(path);
  }
  return changed;
}

bool HasPrefix(const FieldPath& path, const FieldPath& prefix) {
  return path.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), path.begin());
}

nlohmann::json FieldsToV1(const FieldSet& fields) {
  json root = json::object();
  for (const FieldPath& path : fields) ToV1(path, root);
  return root;
}

Result<FieldSet> FieldsFromV1(const nlohmann::json& fields_v1) {
  if (!fields_v1.is_object()) return Err(InvalidArgumentError("fieldsV1: expected an object"));
  FieldSet out;
  FieldPath path;
  RETURN_IF_ERROR(FromV1(fields_v1, path, out));
  return out;
}

std::string DescribeFieldPath(const FieldPath& path) {
  std::string out;
  for (const std::string& step : path) {
    if (step.starts_with("f:")) {
      out += "." + step.substr(2);
    } else if (step.starts_with("k:")) {
      const json key = json::parse(step.substr(2), nullptr, /*allow_exceptions=*/false);
      std::string fields;
      for (auto it = key.begin(); key.is_object() && it != key.end(); ++it) {
        fields += (fields.empty() ? "" : ",") + it.key() + "=" + it.value().dump();
      }
      out += "[" + fields + "]";
    } else if (step.starts_with("v:")) {
      out += "[=" + step.substr(2) + "]";
    } else if (step.starts_with("i:")) {
      out += "[" + step.substr(2) + "]";
    }
  }
  return out;
}

nlohmann::json MergeApplied(std::string_view kind, const nlohmann::json& live,
                            const nlohmann::json& applied) {
  return Merge(kind, live, applied, "");
}

void RemoveField(nlohmann::json& object, const FieldPath& path) {
  if (path.empty()) return;
  // A "." step names the keyed item that the step before it selects.
  const size_t last = path.back() == kItemStep ? path.size() - 2 : path.size() - 1;
  if (path.size() < 2 && path.back() == kItemStep) return;
  json* parent = Find(object, path, last);
  if (parent == nullptr) return;
  const std::string& step = path[last];
  if (step.starts_with("f:") && parent->is_object()) {
    parent->erase(step.substr(2));
  } else if (step.starts_with("k:") && parent->is_array()) {
    const json key = json::parse(step.substr(2), nullptr, /*allow_exceptions=*/false);
    if (!key.is_object()) return;
    auto item = FindKeyed(*parent, key);
    if (item != parent->end()) parent->erase(item);
  }
}

}  // namespace strata::api
