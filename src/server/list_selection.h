#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "api/resource_catalog.h"
#include "api/source_form.h"
#include "common/status.h"
#include "store/store.h"

namespace strata::server {

// One term of a fieldSelector on a field of the object's body: FIELD=VALUE (or ==) or
// FIELD!=VALUE. A field that is absent reads as "".
struct FieldTerm {
  nlohmann::json::json_pointer field;
  std::string value;
  bool equal = true;

  bool Matches(const nlohmann::json& body) const {
    const nlohmann::json* at = body.contains(field) ? &body.at(field) : nullptr;
    const bool same = at != nullptr && at->is_string() ? at->get_ref<const std::string&>() == value
                                                       : value.empty();
    return same == equal;
  }
};

// What a list, watch or get of a REST path selects: the store's selection (kind, namespace,
// labels) and the terms the store does not read (a name, fieldSelector terms). A value.
struct Selected {
  store::Selection selection;
  std::optional<std::string> name;
  std::vector<FieldTerm> terms;
  // Only the objects served at this type's path (api::IsServedAt): of a source-served type, the
  // native objects decoded from its kind's documents.
  const api::ResourceType* served_at = nullptr;

  bool Matches(const store::Object& object) const {
    if (name && object.key.name != *name) return false;
    if (served_at != nullptr && !api::IsServedAt(object.body, *served_at)) return false;
    return std::all_of(terms.begin(), terms.end(),
                       [&](const FieldTerm& term) { return term.Matches(object.body); });
  }
};

// The selection of `path` with the request's labelSelector and fieldSelector. fieldSelector takes
// terms joined by ',' on metadata.name, metadata.namespace and, for pods, spec.nodeName and
// status.phase (what kubectl describe node and kubectl drain select by), for events
// involvedObject.kind, .name, .namespace and .uid (what kubectl describe selects an object's
// events by; regarding.* as events.k8s.io names them), each with =, == or !=. InvalidArgument
// naming the parameter and term of anything else.
Result<Selected> SelectionFor(const api::ResourcePath& path,
                              const std::map<std::string, std::string>& query);

}  // namespace strata::server
