// The steps the REST API's object verbs share: decoding a written body into the one object of a
// path, reading an object where it is served, and writing over what was read.
#include "server/object_write_steps.h"

#include <fmt/format.h>

#include <charconv>

#include "api/api_status.h"
#include "api/manifest.h"
#include "api/served_form.h"
#include "api/source_form.h"
#include "api/validation.h"
#include "common/json_member.h"
#include "server/field_manager.h"
#include "server/object_codec.h"
#include "server/rest_api.h"
#include "server/workload_priority.h"

namespace strata::server {

Result<int64_t> ParseVersion(const std::string& text, std::string_view field) {
  int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 0) {
    return Err(InvalidArgumentError(std::string(field) +
                                    ": expected a non-negative integer, got \"" + text + "\""));
  }
  return value;
}

store::ObjectKey KeyOf(const api::ResourcePath& path) {
  std::string namespace_name = path.type->namespaced ? path.namespace_name.value_or("default") : "";
  return {std::string(path.type->StoreKind()), namespace_name, path.name};
}

// The one object of `path`'s kind a create or replace body must hold. A JSON object with
// neither apiVersion nor kind is of the path's kind, as kube-apiserver takes it (the typed
// clients send none).
Result<store::Object> DecodeSingle(const api::ResourcePath& path, const std::string& body) {
  std::optional<std::string> default_namespace;
  if (path.type->namespaced) default_namespace = path.namespace_name.value_or("default");
  std::string text = body;
  nlohmann::json document = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (document.is_object() && !document.contains("apiVersion") && !document.contains("kind")) {
    document["apiVersion"] = path.type->GroupVersion();
    document["kind"] = path.type->kind;
    text = document.dump();
  }
  const bool source = api::IsSourceServedType(*path.type);
  if (source && document.is_object() && document.contains("status")) {
    // A document as served (a batch/v1 Job), written back: its status is the server's.
    document.erase("status");
    text = document.dump();
  }
  ASSIGN_OR_RETURN(std::vector<api::Object> objects,
                   DecodeRequestBody(text, "request body", default_namespace));
  if (objects.size() != 1 || objects[0].kind() != path.type->StoreKind()) {
    std::string got;
    for (const api::Object& o : objects) got += (got.empty() ? "" : ", ") + std::string(o.kind());
    return Err(
        InvalidArgumentError("request body: expected one " + std::string(path.type->kind) +
                             " for " + path.type->Path(path.namespace_name.value_or(""), "") +
                             ", got " + (got.empty() ? "no object" : got) +
                             " (POST several kinds to " + std::string(RestApi::kApplyPath) + ")"));
  }
  if (path.namespace_name && objects[0].namespace_name() != *path.namespace_name) {
    return Err(InvalidArgumentError("metadata.namespace: \"" + objects[0].namespace_name() +
                                    "\" does not match the namespace of the request path \"" +
                                    *path.namespace_name + "\""));
  }
  ASSIGN_OR_RETURN(store::Object decoded, ToStoreObject(objects[0]));
  if (!api::IsServedAt(decoded.body, *path.type)) {
    return Err(InvalidArgumentError(
        "apiVersion: " + path.type->Path(path.namespace_name.value_or(""), "") + " takes " +
        path.type->GroupVersion() + " " + std::string(path.type->kind) +
        "s; write strata's own (strata.dev/v1alpha1) under " +
        api::FindResourceTypeByKind(path.type->StoreKind())->GroupVersionPath()));
  }
  return decoded;
}

// The object at `path`. A native object that came from no document of the path's kind (a Job
// written as strata.dev's, under /apis/batch/v1) is not found there: only strata.dev serves it.
Result<store::Object> ReadAt(store::Store& store, const api::ResourcePath& path) {
  ASSIGN_OR_RETURN(store::Object object, store.Get(KeyOf(path)));
  if (!api::IsServedAt(object.body, *path.type)) {
    const api::ResourceType* native = api::FindResourceTypeByKind(object.key.kind);
    return Err(NotFoundError(std::string(path.type->plural) + "." + std::string(path.type->group) +
                             " \"" + path.name + "\" not found (a strata.dev " + object.key.kind +
                             ": " + native->Path(object.key.namespace_name, object.key.name) +
                             ")"));
  }
  return object;
}

// The metadata.resourceVersion of a request's object, null when it has none.
const nlohmann::json& ResourceVersionOf(const nlohmann::json& object) {
  return MemberOrNull(MemberOrNull(object, "metadata"), "resourceVersion");
}

// The object a PUT (or a patched object) replaces the one at `path` with.
Result<store::Object> DecodeReplacement(const api::ResourcePath& path, const std::string& body) {
  ASSIGN_OR_RETURN(store::Object replacement, DecodeSingle(path, body));
  if (replacement.key.name != path.name) {
    return Err(InvalidArgumentError("metadata.name: \"" + replacement.key.name +
                                    "\" does not match the name in the request path \"" +
                                    path.name + "\""));
  }
  return replacement;
}

const nlohmann::json& ManagedFieldsOfStored(const nlohmann::json& body) {
  return MemberOrNull(MemberOrNull(body, "metadata"), "managedFields");
}

bool DryRun(const std::map<std::string, std::string>& query) {
  auto it = query.find("dryRun");
  return it != query.end() && it->second == "All";
}

namespace {

// The source-served type whose form a write by `who` names where it wrote one (a batch/v1 Job,
// a v1beta1 ClusterQueue), else nullptr: the form Kubernetes' clients read.
const api::ResourceType* SourceTypeWritten(const FieldWrite& who) {
  std::vector<const api::ResourceType*> types = api::SourceServedTypes();
  for (const api::ResourceType* older : api::KueueV1beta1Types()) types.push_back(older);
  for (const api::ResourceType* type : types) {
    if (who.api_version == type->GroupVersion() && who.kind == type->kind &&
        api::IsSourceServedType(*type)) {
      return type;
    }
  }
  return nullptr;
}

}  // namespace

// `stored` as a write by `who` names its fields (SourceTypeWritten).
void ToFormWritten(nlohmann::json& stored, const FieldWrite& who) {
  const api::ResourceType* type = SourceTypeWritten(who);
  api::ToServedForm(
      stored, type == nullptr ? api::ServedForm::kKubernetes : api::ServedForm::kSource, type);
}

// Sets `write`'s metadata.managedFields for a write by `who` that is not a server-side apply
// and replaces `current` (nullptr: creates `write`), from the forms both are served in.
Status RecordManagedFields(const FieldWrite& who, const store::Object* current,
                           store::Object& write) {
  std::optional<nlohmann::json> before;
  if (current != nullptr) {
    before = current->body;
    ToFormWritten(*before, who);
  }
  nlohmann::json after = write.body;
  ToFormWritten(after, who);
  Result<nlohmann::json> managed =
      ManagedFieldsAfterUpdate(who, before ? &*before : nullptr, after);
  if (!managed) return managed.error();
  if (managed->is_null()) {
    write.body["metadata"].erase("managedFields");
  } else {
    write.body["metadata"]["managedFields"] = std::move(*managed);
  }
  return Status::Ok();
}

Status RefuseOtherSourceKind(const store::Object& current, const store::Object& write) {
  const api::ResourceType* was = api::SourceTypeOf(current.body);
  const api::ResourceType* now = api::SourceTypeOf(write.body);
  if (was == nullptr || now == nullptr || was == now) return Status::Ok();
  return InvalidArgumentError(fmt::format(
      "metadata.name: a {} \"{}\" exists; strata keeps a {} and a {} of one name as the same "
      "{}, so one would replace the other: rename one",
      was->kind, current.key.name, was->kind, now->kind, current.key.kind));
}

// Writes `write` over `current`, the object as read, as a PUT does: the stored status is carried
// over, and without the client's resourceVersion the version read guards it. The write is
// recorded as `who`'s, unless `who` is null (a server-side apply: `write` holds its managed
// fields). A dry run returns what would be written.
Result<store::Object> UpdateOver(store::Store& store, const store::Object& current,
                                 store::Object write, const FieldWrite* who, bool dry_run) {
  RETURN_IF_ERROR(api::CheckImmutableUpdate(current.body, write.body));
  RETURN_IF_ERROR(RefuseOtherSourceKind(current, write));
  RETURN_IF_ERROR(GiveClassPriority(store, &current, {}, write));
  CarryStatus(current, write);
  if (who != nullptr) RETURN_IF_ERROR(RecordManagedFields(*who, &current, write));
  if (write.resource_version == 0) write.resource_version = current.resource_version;
  if (dry_run) return write;
  return store.Update(std::move(write));
}

// Writes `document`, a whole object (a patched one), over `current` as a PUT of it would.
Result<store::Object> UpdateWithDocument(store::Store& store, const api::ResourcePath& path,
                                         const store::Object& current,
                                         const nlohmann::json& document, const FieldWrite* who,
                                         bool dry_run) {
  const std::string text = document.dump();
  if (text.size() > api::kMaxRequestBytes) {
    return Err(InvalidArgumentError(
        fmt::format("the patched object would be {} bytes, over the limit of {} (the largest "
                    "object a request may write); nothing was changed",
                    text.size(), api::kMaxRequestBytes)));
  }
  ASSIGN_OR_RETURN(store::Object replacement, DecodeReplacement(path, text));
  return UpdateOver(store, current, std::move(replacement), who, dry_run);
}

// Writes the status subresource: `request`'s status over `current`, the object as read, and for
// a pod its annotations too (its agent records start, finish and checkpoint times with its
// status). `request`'s resourceVersion, when it has one, is the precondition.
Result<store::Object> UpdateStatus(store::Store& store, const api::ResourcePath& path,
                                   const store::Object& current, const nlohmann::json& request,
                                   FieldWrite who, bool dry_run) {
  if (!request.is_object() || !request.contains("status")) {
    return Err(InvalidArgumentError("request body: expected a JSON object with a status field"));
  }
  nlohmann::json document = current.body;
  document["status"] = request["status"];
  const nlohmann::json annotations =
      request.value(nlohmann::json::json_pointer("/metadata/annotations"), nlohmann::json());
  if (path.type->kind == "Pod" && annotations.is_object()) {
    document["metadata"]["annotations"] = annotations;
  }
  const nlohmann::json& version = ResourceVersionOf(request);
  document["metadata"]["resourceVersion"] =
      version.is_null() || version == "" ? nlohmann::json(std::to_string(current.resource_version))
                                         : version;
  Result<api::Object> decoded = api::DecodeObject(document);
  if (!decoded) return Err(decoded.error());
  ASSIGN_OR_RETURN(store::Object write, ToStoreObject(*decoded));
  who.scope = api::FieldScope::kStatus;
  RETURN_IF_ERROR(RecordManagedFields(who, &current, write));
  if (dry_run) return write;
  return store.Update(std::move(write));
}

// A reply with the object `body` (as stored) in the form the API serves it at `path`.
ApiReply ServedReply(int code, nlohmann::json body, api::ServedForm form,
                     const api::ResourcePath& path) {
  api::ToServedForm(body, form, path.type);
  return JsonReply(code, body);
}

}  // namespace strata::server
