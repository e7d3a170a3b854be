#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "api/resource_catalog.h"
#include "api/served_form.h"
#include "common/status.h"
#include "server/field_manager.h"
#include "server/rest_api.h"
#include "store/store.h"

namespace strata::server {

// The steps the REST API's object verbs (object_handlers.cc) share: what a written body decodes
// to, where an object is served, and how a write replaces what was read. Free functions over
// the store they are given; as thread-safe as that store.

// `text` as a non-negative integer, else InvalidArgument naming `field`.
Result<int64_t> ParseVersion(const std::string& text, std::string_view field);

// The store key of the object `path` names (a namespaced type without a namespace: "default").
store::ObjectKey KeyOf(const api::ResourcePath& path);

// The one object of `path`'s kind a create or replace body must hold, as the store keeps it. A
// JSON object with neither apiVersion nor kind is of the path's kind, as kube-apiserver takes
// it. InvalidArgument otherwise.
Result<store::Object> DecodeSingle(const api::ResourcePath& path, const std::string& body);

// The object at `path`, NotFound when there is none or it is not served at `path`'s type (a
// Job written as strata.dev's is not under /apis/batch/v1).
Result<store::Object> ReadAt(store::Store& store, const api::ResourcePath& path);

// The metadata.resourceVersion of a request's object, null when it has none.
const nlohmann::json& ResourceVersionOf(const nlohmann::json& object);

// DecodeSingle, and the name must be the path's.
Result<store::Object> DecodeReplacement(const api::ResourcePath& path, const std::string& body);

// The metadata.managedFields of a stored body, null when none.
const nlohmann::json& ManagedFieldsOfStored(const nlohmann::json& body);

// Whether the query asks for a dry run (dryRun=All).
bool DryRun(const std::map<std::string, std::string>& query);

// `stored` in the form a write by `who` names its fields in (the source form of a batch/v1 Job
// or a Kueue kind where `who` wrote one, else Kubernetes' form).
void ToFormWritten(nlohmann::json& stored, const FieldWrite& who);

// Sets `write`'s metadata.managedFields for a write by `who` that is not a server-side apply
// and replaces `current` (nullptr: creates `write`).
Status RecordManagedFields(const FieldWrite& who, const store::Object* current,
                           store::Object& write);

// Refuses `write` over `current` where both were decoded from documents of different Kueue
// kinds: a Cohort and a ClusterQueue of one name are both kept as that Queue, and one must not
// silently replace the other. InvalidArgument naming both.
Status RefuseOtherSourceKind(const store::Object& current, const store::Object& write);

// Writes `write` over `current`, the object as read, as a PUT does (status carried over; without
// the client's resourceVersion the version read guards it). `who` null: a server-side apply. A
// dry run returns what would be written.
Result<store::Object> UpdateOver(store::Store& store, const store::Object& current,
                                 store::Object write, const FieldWrite* who, bool dry_run);

// Writes `document`, a whole object (a patched one), over `current` as a PUT of it would.
Result<store::Object> UpdateWithDocument(store::Store& store, const api::ResourcePath& path,
                                         const store::Object& current,
                                         const nlohmann::json& document, const FieldWrite* who,
                                         bool dry_run);

// Writes the status subresource: `request`'s status over `current` (and a pod's annotations).
Result<store::Object> UpdateStatus(store::Store& store, const api::ResourcePath& path,
                                   const store::Object& current, const nlohmann::json& request,
                                   FieldWrite who, bool dry_run);

// A reply with the object `body` (as stored) in the form the API serves it at `path`.
ApiReply ServedReply(int code, nlohmann::json body, api::ServedForm form,
                     const api::ResourcePath& path);

}  // namespace strata::server
