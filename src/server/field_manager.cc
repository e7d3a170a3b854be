#include "server/field_manager.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <vector>

#include "common/json_member.h"

namespace strata::server {
namespace {

using api::FieldPath;
using api::FieldSet;
using nlohmann::json;

// kube-apiserver's limit on a manager's name.
constexpr size_t kMaxManagerLength = 128;
constexpr std::string_view kApply = "Apply";
constexpr std::string_view kUpdate = "Update";

// One entry of metadata.managedFields.
struct Entry {
  std::string manager;
  std::string operation;
  std::string api_version;
  std::string time;
  std::string subresource;
  FieldSet fields;

  bool Is(std::string_view name, std::string_view op, std::string_view sub) const {
    return manager == name && operation == op && subresource == sub;
  }
};

std::string_view SubresourceOf(const FieldWrite& write) {
  return write.scope == api::FieldScope::kStatus ? "status" : "";
}

Result<std::vector<Entry>> ParseEntries(const json& list) {
  std::vector<Entry> entries;
  if (list.is_null()) return entries;
  if (!list.is_array()) {
    return Err(InvalidArgumentError("metadata.managedFields: expected a list"));
  }
  for (size_t i = 0; i < list.size(); ++i) {
    const json& item = list[i];
    const std::string where = fmt::format("metadata.managedFields[{}]", i);
    if (!item.is_object()) return Err(InvalidArgumentError(where + ": expected an object"));
    Entry entry;
    entry.manager = StringMemberOr(item, "manager");
    entry.operation = StringMemberOr(item, "operation");
    entry.api_version = StringMemberOr(item, "apiVersion");
    entry.time = StringMemberOr(item, "time");
    entry.subresource = StringMemberOr(item, "subresource");
    if (entry.operation != kApply && entry.operation != kUpdate) {
      return Err(InvalidArgumentError(where + ".operation: must be Apply or Update, not \"" +
                                      entry.operation + "\""));
    }
    const json& fields = MemberOrNull(item, "fieldsV1");
    if (!fields.is_null()) {
      Result<FieldSet> parsed = api::FieldsFromV1(fields);
      if (!parsed) return Err(parsed.error().WithPrefix(where));
      entry.fields = std::move(*parsed);
    }
    entries.push_back(std::move(entry));
  }
  return entries;
}

json EntriesToJson(const std::vector<Entry>& entries) {
  json list = json::array();
  for (const Entry& entry : entries) {
    if (entry.fields.empty()) continue;
    json item = {{"manager", entry.manager},        {"operation", entry.operation},
                 {"apiVersion", entry.api_version}, {"time", entry.time},
                 {"fieldsType", "FieldsV1"},        {"fieldsV1", api::FieldsToV1(entry.fields)}};
    if (!entry.subresource.empty()) item["subresource"] = entry.subresource;
    list.push_back(std::move(item));
  }
  return list.empty() ? json() : list;
}

const json& ManagedFieldsOf(const json& object) {
  return MemberOrNull(MemberOrNull(object, "metadata"), "managedFields");
}

// The entry of `write`'s manager for `operation`, added when it has none.
Entry& OwnEntry(std::vector<Entry>& entries, const FieldWrite& write, std::string_view operation) {
  for (Entry& entry : entries) {
    if (entry.Is(write.manager, operation, SubresourceOf(write))) return entry;
  }
  entries.push_back({write.manager,
                     std::string(operation),
                     write.api_version,
                     write.time,
                     std::string(SubresourceOf(write)),
                     {}});
  return entries.back();
}

// The object of the last-applied annotation of `live`, or null.
json LastApplied(const json& live) {
  const json& text = MemberOrNull(MemberOrNull(MemberOrNull(live, "metadata"), "annotations"),
                                  std::string(kLastAppliedAnnotation));
  if (!text.is_string()) return json();
  json parsed = json::parse(text.get<std::string>(), nullptr, /*allow_exceptions=*/false);
  return parsed.is_discarded() ? json() : parsed;
}

// "conflict with \"kubectl\" using v1: .spec.x", or a list of fields under one manager: how
// kube-apiserver words conflicts, which users and kubectl's advice read.
std::string DescribeConflicts(const std::vector<std::pair<const Entry*, FieldPath>>& conflicts) {
  std::vector<std::string> groups;
  for (size_t i = 0; i < conflicts.size();) {
    const Entry* entry = conflicts[i].first;
    size_t end = i;
    while (end < conflicts.size() && conflicts[end].first == entry) ++end;
    std::string who = "\"" + entry->manager + "\"" +
                      (entry->api_version.empty() ? "" : " using " + entry->api_version);
    if (end - i == 1) {
      groups.push_back("conflict with " + who + ": " + api::DescribeFieldPath(conflicts[i].second));
    } else {
      std::string text = "conflicts with " + who + ":";
      for (size_t j = i; j < end; ++j) text += "\n- " + api::DescribeFieldPath(conflicts[j].second);
      groups.push_back(std::move(text));
    }
    i = end;
  }
  return fmt::format("Apply failed with {} conflict{}: {}", conflicts.size(),
                     conflicts.size() == 1 ? "" : "s", fmt::join(groups, "\n"));
}

}  // namespace

Result<std::string> FieldManagerOf(const std::map<std::string, std::string>& query,
                                   std::string_view user_agent, bool required) {
  std::string manager;
  if (auto it = query.find("fieldManager"); it != query.end()) {
    manager = it->second;
  } else if (required) {
    return Err(InvalidArgumentError(
        "fieldManager: required for an apply request (kubectl apply --server-side sends "
        "fieldManager=kubectl; name yours with ?fieldManager=NAME)"));
  } else {
    manager = std::string(user_agent.substr(0, user_agent.find('/')));
  }
  if (manager.size() > kMaxManagerLength) {
    return Err(InvalidArgumentError(fmt::format("fieldManager: at most {} characters, got {}",
                                                kMaxManagerLength, manager.size())));
  }
  if (required && manager.empty()) {
    return Err(InvalidArgumentError("fieldManager: must not be empty for an apply request"));
  }
  return manager;
}

Result<nlohmann::json> ManagedFieldsAfterUpdate(const FieldWrite& write,
                                                const nlohmann::json* before,
                                                const nlohmann::json& after) {
  const json& given = ManagedFieldsOf(after);
  const json& kept = before == nullptr ? json() : ManagedFieldsOf(*before);
  ASSIGN_OR_RETURN(std::vector<Entry> entries,
                   ParseEntries(!given.is_null() && given != kept ? given : kept));
  const json empty = json::object();
  const FieldSet changed =
      api::ChangedFields(write.kind, before == nullptr ? empty : *before, after, write.scope);
  FieldSet removed;
  if (before != nullptr) {
    const FieldSet now = api::FieldsOf(write.kind, after, write.scope);
    for (const FieldPath& path : api::FieldsOf(write.kind, *before, write.scope)) {
      if (!now.contains(path)) removed.insert(path);
    }
  }
  for (Entry& entry : entries) {
    for (const FieldPath& path : removed) entry.fields.erase(path);
    if (entry.Is(write.manager, kUpdate, SubresourceOf(write))) continue;
    for (const FieldPath& path : changed) entry.fields.erase(path);
  }
  if (!changed.empty()) {
    Entry& own = OwnEntry(entries, write, kUpdate);
    own.fields.insert(changed.begin(), changed.end());
    own.time = write.time;
    own.api_version = write.api_version;
  }
  return EntriesToJson(entries);
}

Result<nlohmann::json> ServerSideApply(const FieldWrite& write, bool force,
                                       const nlohmann::json* live, nlohmann::json applied) {
  if (!applied.is_object()) {
    return Err(InvalidArgumentError("an apply configuration is an object, got a " +
                                    std::string(applied.type_name())));
  }
  if (!ManagedFieldsOf(applied).is_null()) {
    return Err(InvalidArgumentError(
        "metadata.managedFields: must be absent from an apply configuration (the server keeps "
        "them)"));
  }
  // An apply of the object leaves its status to the status subresource, and back.
  if (write.scope == api::FieldScope::kObject) {
    applied.erase("status");
  } else if (applied.contains("spec")) {
    applied.erase("spec");
  }
  const FieldSet wanted = api::FieldsOf(write.kind, applied, write.scope);
  if (live == nullptr) {
    std::vector<Entry> entries = {{write.manager, std::string(kApply), write.api_version,
                                   write.time, std::string(SubresourceOf(write)), wanted}};
    applied["metadata"]["managedFields"] = EntriesToJson(entries);
    if (applied["metadata"]["managedFields"].is_null()) applied["metadata"].erase("managedFields");
    return applied;
  }
  ASSIGN_OR_RETURN(std::vector<Entry> entries, ParseEntries(ManagedFieldsOf(*live)));
  const json last_applied = LastApplied(*live);
  std::vector<std::pair<const Entry*, FieldPath>> conflicts;
  std::vector<std::pair<Entry*, FieldPath>> taken;
  for (Entry& entry : entries) {
    if (entry.Is(write.manager, kApply, SubresourceOf(write))) continue;
    for (const FieldPath& path : wanted) {
      if (path.back() == "." || !entry.fields.contains(path)) continue;
      const json* now = api::ValueAt(*live, path);
      const json* want = api::ValueAt(applied, path);
      if (now == nullptr || *now == *want) continue;
      // What kubectl's client-side apply last applied, applied again: kubectl apply
      // --server-side over kubectl apply takes the field back, as client-side apply would.
      const json* before = last_applied.is_null() ? nullptr : api::ValueAt(last_applied, path);
      if (force ||
          (entry.manager == kClientSideApplyManager && before != nullptr && *before == *want)) {
        taken.emplace_back(&entry, path);
      } else {
        conflicts.emplace_back(&entry, path);
      }
    }
  }
  if (!conflicts.empty()) return Err(ConflictError(DescribeConflicts(conflicts)));
  for (auto& [entry, path] : taken) entry->fields.erase(path);

  json merged = api::MergeApplied(write.kind, *live, applied);
  Entry& own = OwnEntry(entries, write, kApply);
  // What the manager applied before and applies no more goes, unless another manager owns it
  // (or anything inside it).
  for (const FieldPath& path : own.fields) {
    if (wanted.contains(path)) continue;
    const FieldPath base = path.back() == "." ? FieldPath(path.begin(), path.end() - 1) : path;
    const bool owned_elsewhere = std::any_of(entries.begin(), entries.end(), [&](const Entry& e) {
      return &e != &own && std::any_of(e.fields.begin(), e.fields.end(),
                                       [&](const FieldPath& p) { return api::HasPrefix(p, base); });
    });
    const bool still_applied = std::any_of(
        wanted.begin(), wanted.end(), [&](const FieldPath& p) { return api::HasPrefix(p, base); });
    if (!owned_elsewhere && !still_applied) api::RemoveField(merged, path);
  }
  own.fields = wanted;
  own.time = write.time;
  own.api_version = write.api_version;

  if (write.manager == "kubectl" && !LastApplied(*live).is_null()) {
    json record = applied;
    if (record["metadata"].contains("annotations")) {
      record["metadata"]["annotations"].erase(std::string(kLastAppliedAnnotation));
    }
    merged["metadata"]["annotations"][std::string(kLastAppliedAnnotation)] = record.dump() + "\n";
  }
  json managed = EntriesToJson(entries);
  if (managed.is_null()) {
    merged["metadata"].erase("managedFields");
  } else {
    merged["metadata"]["managedFields"] = std::move(managed);
  }
  return merged;
}

}  // namespace strata::server
