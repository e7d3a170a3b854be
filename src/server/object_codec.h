#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/object.h"
#include "common/status.h"
#include "net/http_message.h"
#include "store/object.h"

namespace strata::server {

// Decodes a request body (YAML or JSON, one or more documents, native or compatible kinds) into
// native objects with the api module's decoder, all or nothing. `source_name` prefixes error
// messages ("request body: document 2 (Job x): spec.replicas: ..."). A namespaced document
// without metadata.namespace gets `default_namespace` when one is given. Returns
// InvalidArgument naming the document and field on any error, or for a body with no object.
// `warnings`, when given, receives the decoder's warnings (fields ignored in this mode).
Result<std::vector<api::Object>> DecodeRequestBody(
    std::string_view body, std::string_view source_name,
    const std::optional<std::string>& default_namespace,
    std::vector<std::string>* warnings = nullptr);

// Kubernetes' way of returning warnings: one `Warning: 299 - "text"` header each, which kubectl
// and client-go print.
void AddWarningHeaders(const std::vector<std::string>& warnings, net::HttpHeaders& headers);

// The store form of a native object: its key, labels and canonical JSON (api::EncodeObject).
// metadata.resourceVersion, when set, becomes the write's precondition; InvalidArgument when it
// is not a decimal integer.
Result<store::Object> ToStoreObject(const api::Object& object);

// Carries what strata's own loops own over to a write that replaces `current`: the stored
// `status` (a user's manifest or PUT changes spec and metadata, never status), and of a Queue
// written as a Kueue ClusterQueue the LocalQueues naming it, documents of their own
// (api::CarryLocalQueues). Returns true
// when `replacement` then differs from `current` in anything but store bookkeeping.
bool CarryStatus(const store::Object& current, store::Object& replacement);

// Drops the status of a new object whose status strata's loops own (Job, Service, Queue): a
// user creates a spec, never a decision (a Job created with a placement would skip the
// scheduler), as Kubernetes ignores the status of a create.
void DropOwnedStatus(store::Object& object);

// "job.strata.dev/train" or "pod/probe": how kubectl names an object in its messages.
std::string ObjectReferenceName(std::string_view kind, std::string_view name);

}  // namespace strata::server
