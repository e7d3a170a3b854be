#include "server/node_access.h"

#include "api/manifest.h"
#include "api/node.h"
#include "api/node_lease.h"
#include "server/node_registration.h"
#include "server/object_codec.h"
#include "server/random_secret.h"

namespace strata::server {
namespace {

constexpr int kJoinAttempts = 5;
store::ObjectKey CredentialKey(const std::string& node) { return {kNodeCredentialKind, "", node}; }

Status Denied(const std::string& node, std::string_view method, std::string_view path,
              std::string_view why) {
  return PermissionDeniedError("node \"" + node + "\" may not " + std::string(method) + " " +
                               std::string(path) + ": " + std::string(why));
}

}  // namespace

bool SameSecret(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char difference = 0;
  for (size_t i = 0; i < a.size(); ++i) difference |= static_cast<unsigned char>(a[i] ^ b[i]);
  return difference == 0;
}

std::string_view BearerToken(std::string_view authorization) {
  constexpr std::string_view kBearer = "Bearer ";
  if (authorization.substr(0, kBearer.size()) != kBearer) return {};
  return authorization.substr(kBearer.size());
}

std::string FieldSelectorValue(std::string_view selector, std::string_view field) {
  while (!selector.empty()) {
    size_t comma = selector.find(',');
    std::string_view term = selector.substr(0, comma);
    selector = comma == std::string_view::npos ? std::string_view() : selector.substr(comma + 1);
    size_t eq = term.find('=');
    if (eq == std::string_view::npos || term.substr(0, eq) != field) continue;
    std::string_view value = term.substr(eq + 1);
    if (!value.empty() && value.front() == '=') value.remove_prefix(1);
    return std::string(value);
  }
  return "";
}

NodeAccess::NodeAccess(store::Store& store, std::vector<std::string> join_tokens)
    : store_(store), join_tokens_(std::move(join_tokens)) {}

bool NodeAccess::LooksLikeNodeCredential(std::string_view token) {
  size_t dot = token.rfind('.');
  if (dot == std::string_view::npos || dot == 0 || token.size() - dot - 1 != 2 * kSecretBytes) {
    return false;
  }
  return token.find_first_not_of("0123456789abcdef", dot + 1) == std::string_view::npos;
}

Result<nlohmann::json> NodeAccess::Join(std::string_view token, bool admin, std::string_view body) {
  if (join_tokens_.empty()) {
    return Err(PermissionDeniedError(
        "joining is off on this server (start it with strata up --join-token-file FILE)"));
  }
  bool join_token = false;
  for (const std::string& accepted : join_tokens_) join_token |= SameSecret(token, accepted);
  const bool node_credential = !admin && !join_token && LooksLikeNodeCredential(token);
  if (!admin && !join_token && !node_credential) {
    return Err(UnauthenticatedError("the join token is not valid for this server"));
  }

  ASSIGN_OR_RETURN(std::vector<api::Object> objects,
                   DecodeRequestBody(body, "request body", std::nullopt));
  const api::Node* node = objects.size() == 1 ? objects[0].As<api::Node>() : nullptr;
  if (node == nullptr) {
    return Err(InvalidArgumentError("request body: expected one Node to join"));
  }
  const std::string& name = node->metadata.name;
  if (node_credential) {
    // An agent joining again with what it was given: only its own node's, and still current.
    Result<std::string> owner = NodeOf(token);
    if (!owner || *owner != name) {
      return Err(UnauthenticatedError("the node credential is not valid for node \"" + name +
                                      "\" (an agent that lost it joins again after an admin "
                                      "deletes the node: strata delete node " +
                                      name + ")"));
    }
  }
  for (int attempt = 0;; ++attempt) {
    Result<store::Object> existing_node = store_.Get({"Node", "", name});
    Result<store::Object> existing_credential = store_.Get(CredentialKey(name));
    if (existing_node && !existing_credential) {
      return Err(AlreadyExistsError("node \"" + name +
                                    "\" is registered by the control plane itself; join under "
                                    "another name (strata agent --name)"));
    }
    if (existing_node && existing_credential && join_token) {
      return Err(PermissionDeniedError(
          "node \"" + name +
          "\" has joined already: its agent joins again with its node credential (kept in its "
          "data dir); a join token admits a name once, until an admin deletes the node "
          "(strata delete node " +
          name + ")"));
    }
    RETURN_IF_ERROR(CheckGpuUuidsUnclaimed(store_, *node));
    ASSIGN_OR_RETURN(store::Write registration, RegistrationWrite(store_, *node));
    std::vector<store::Write> writes = {std::move(registration)};
    std::string issued;
    if (node_credential) {
      // Kept: an agent that restarts mid-join and never saw an answer still holds a good one.
      issued = std::string(token);
    } else {
      ASSIGN_OR_RETURN(std::string secret, NewSecret());
      issued = name + "." + secret;
      store::Object credential;
      credential.key = CredentialKey(name);
      credential.body = {{"token", issued}};
      if (existing_credential) credential.resource_version = existing_credential->resource_version;
      writes.push_back(
          {existing_credential ? store::WriteOp::kUpdate : store::WriteOp::kCreate, credential});
    }
    Result<std::vector<store::Object>> written = store_.Apply(std::move(writes));
    if (written) {
      return nlohmann::json{{"kind", "NodeCredential"},
                            {"apiVersion", "strata.dev/v1alpha1"},
                            {"nodeName", name},
                            {"token", issued}};
    }
    StatusCode code = written.error().code();
    bool raced = code == StatusCode::kConflict || code == StatusCode::kAlreadyExists;
    if (!raced || attempt + 1 == kJoinAttempts) return Err(written.error());
  }
}

Result<std::string> NodeAccess::NodeOf(std::string_view token) const {
  auto invalid = [] { return Err(UnauthenticatedError("the node credential is not valid")); };
  if (!LooksLikeNodeCredential(token)) return invalid();
  std::string node(token.substr(0, token.rfind('.')));
  Result<store::Object> credential = store_.Get(CredentialKey(node));
  if (!credential) {
    if (credential.error().code() == StatusCode::kNotFound) return invalid();
    return Err(credential.error());
  }
  if (!SameSecret(credential->body.value("token", ""), token)) return invalid();
  return node;
}

Status NodeAccess::Authorize(const std::string& node, std::string_view method,
                             std::string_view path, const std::map<std::string, std::string>& query,
                             std::string_view body) const {
  static constexpr std::string_view kOpenPaths[] = {
      "/api",     "/apis",   "/version", "/api/v1", "/apis/strata.dev", "/apis/strata.dev/v1alpha1",
      "/healthz", "/readyz", "/livez"};
  for (std::string_view open : kOpenPaths) {
    if (path == open)
      return method == "GET" ? Status::Ok() : Denied(node, method, path, "read-only");
  }
  if (std::optional<std::string> leased = api::NodeOfLeasePath(path)) {
    if (*leased != node) return Denied(node, method, path, "another node's Lease");
    if (method == "GET" || method == "PUT") return Status::Ok();
    return Denied(node, method, path, "a node reads and renews its own Lease");
  }
  Result<api::ResourcePath> resource = api::ParseResourcePath(path);
  if (!resource) return Denied(node, method, path, "not a resource a node reads");
  return AuthorizeResource(node, method, *resource, query, body);
}

Status NodeAccess::AuthorizeResource(const std::string& node, std::string_view method,
                                     const api::ResourcePath& resource,
                                     const std::map<std::string, std::string>& query,
                                     std::string_view body) const {
  std::string path = resource.type->Path(resource.namespace_name.value_or(""), resource.name) +
                     (resource.subresource.empty() ? "" : "/" + resource.subresource);
  auto selector = [&](std::string_view field) {
    auto found = query.find("fieldSelector");
    return found == query.end() ? std::string() : FieldSelectorValue(found->second, field);
  };
  if (resource.type->kind == "Node") {
    if (resource.name.empty()) {
      if (method == "GET" && selector("metadata.name") == node) return Status::Ok();
      return Denied(node, method, path, "a node lists only itself (fieldSelector metadata.name)");
    }
    if (resource.name != node) return Denied(node, method, path, "another node");
    if (method == "GET") return Status::Ok();
    if (method == "PUT" && resource.subresource == "status") {
      // A body that is not one Node is the REST API's to refuse, naming the field.
      Result<std::vector<api::Object>> objects =
          DecodeRequestBody(body, "request body", std::nullopt);
      if (!objects || objects->size() != 1 || (*objects)[0].As<api::Node>() == nullptr) {
        return Status::Ok();
      }
      return CheckGpuUuidsUnclaimed(store_, *(*objects)[0].As<api::Node>());
    }
    return Denied(node, method, path, "a node writes only its own status");
  }
  const std::string namespace_name = resource.namespace_name.value_or("default");
  auto bound_here = [&](const std::string& pod_name) {
    Result<store::Object> pod = store_.Get({"Pod", namespace_name, pod_name});
    return pod &&
           pod->body.value(nlohmann::json::json_pointer("/spec/nodeName"), std::string()) == node;
  };
  if (resource.type->kind == "ConfigMap" || resource.type->kind == "Secret") {
    // Kubernetes' node authorizer: only what a pod bound to the node reads, one object at a time.
    if (method != "GET" || resource.name.empty() || !resource.subresource.empty()) {
      return Denied(node, method, path, "a node reads only what its pods name, one at a time");
    }
    const bool secret = resource.type->kind == "Secret";
    Result<store::ListResult> pods = store_.List({"Pod", namespace_name, {}});
    if (!pods) return pods.error();
    for (const store::Object& raw : pods->items) {
      if (raw.body.value(nlohmann::json::json_pointer("/spec/nodeName"), std::string()) != node) {
        continue;
      }
      Result<api::Object> pod = api::DecodeObject(raw.body);
      if (pod && pod->As<api::Pod>() != nullptr &&
          api::TemplateReads(pod->As<api::Pod>()->spec.template_, secret, resource.name)) {
        return Status::Ok();
      }
    }
    return Denied(node, method, path, "no pod bound to this node reads it");
  }
  if (resource.type->kind == "Event") {
    // The events of its pods, which the recorder names "<pod>.<digest>".
    std::string name = resource.name;
    if (method == "POST" || method == "PUT") {
      nlohmann::json event = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
      if (name.empty()) name = event.value(nlohmann::json::json_pointer("/metadata/name"), "");
      const nlohmann::json involved = event.value("involvedObject", nlohmann::json::object());
      if (involved.value("kind", "") != "Pod" ||
          involved.value("name", "") != name.substr(0, name.rfind('.'))) {
        return Denied(node, method, path, "a node records events of its own pods only");
      }
    } else if (method != "GET" || name.empty()) {
      return Denied(node, method, path, "a node reads and records events of its own pods only");
    }
    if (name.rfind('.') == std::string::npos || !bound_here(name.substr(0, name.rfind('.')))) {
      return Denied(node, method, path, "a node records events of its own pods only");
    }
    return Status::Ok();
  }
  if (resource.type->kind != "Pod") {
    return Denied(node, method, path, "a node reads only itself and its pods");
  }
  if (resource.name.empty()) {
    if (method == "GET" && selector("spec.nodeName") == node) return Status::Ok();
    return Denied(node, method, path,
                  "a node lists only its own pods (fieldSelector spec.nodeName)");
  }
  Result<store::Object> pod =
      store_.Get({"Pod", resource.namespace_name.value_or("default"), resource.name});
  if (!pod) return pod.error();
  if (pod->body.value(nlohmann::json::json_pointer("/spec/nodeName"), std::string()) != node) {
    return Denied(node, method, path, "the pod is not bound to this node");
  }
  if (method == "GET") return Status::Ok();
  if (method == "PUT" && resource.subresource == "status") return Status::Ok();
  if (method == "POST" && resource.subresource == "checkpoint") return Status::Ok();
  if (method == "PUT" && resource.subresource.empty()) {
    nlohmann::json replacement = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
    if (replacement.is_object() &&
        replacement.value("spec", nlohmann::json()) == pod->body.value("spec", nlohmann::json())) {
      return Status::Ok();
    }
    return Denied(node, method, path, "a node changes only a pod's status and annotations");
  }
  return Denied(node, method, path, "a node writes only its pods' status");
}

}  // namespace strata::server
