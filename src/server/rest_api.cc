#include "server/rest_api.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string_view>

#include "api/api_status.h"
#include "api/node_lease.h"
#include "api/openapi_document.h"
#include "api/source_form.h"
#include "cluster/indexes.h"
#include "net/http_syntax.h"
#include "server/object_codec.h"
#include "server/protobuf_body.h"

namespace strata::server {
namespace {

// Whether the server reads the body of `request`: a POST's or PUT's is JSON or YAML (or names no
// type); a PATCH's type is the patch's format, read where the patch is.
bool BodyTypeRead(const net::HttpRequest& request) {
  if (request.method != "POST" && request.method != "PUT") return true;
  std::string_view type = request.Header("Content-Type");
  type = type.substr(0, type.find(';'));
  while (!type.empty() && type.back() == ' ') type.remove_suffix(1);
  return type.empty() || type == "application/json" || type == "application/yaml" ||
         type == "application/x-yaml" || type == "text/yaml" || type == "text/plain";
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string PercentDecode(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+') {
      out.push_back(' ');
    } else if (text[i] == '%' && i + 2 < text.size() && HexValue(text[i + 1]) >= 0 &&
               HexValue(text[i + 2]) >= 0) {
      out.push_back(static_cast<char>(HexValue(text[i + 1]) * 16 + HexValue(text[i + 2])));
      i += 2;
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

// `request` with its body as JSON, when it is a POST or PUT of a body in Kubernetes' protobuf
// encoding of a kind strata reads so; nullopt for any other request.
std::optional<net::HttpRequest> FromProtobuf(const net::HttpRequest& request) {
  if (request.method != "POST" && request.method != "PUT") return std::nullopt;
  if (!request.Header("Content-Type").starts_with(kKubeProtobuf)) return std::nullopt;
  Result<nlohmann::json> decoded = KubeProtobufToJson(request.body);
  if (!decoded) return std::nullopt;
  net::HttpRequest out = request;
  out.body = decoded->dump();
  for (auto& [name, value] : out.headers) {
    if (net::EqualsIgnoreCase(name, "Content-Type")) value = "application/json";
  }
  return out;
}

}  // namespace

std::map<std::string, std::string> ParseQuery(std::string_view target) {
  std::map<std::string, std::string> query;
  size_t question = target.find('?');
  if (question == std::string_view::npos) return query;
  std::string_view rest = target.substr(question + 1);
  while (!rest.empty()) {
    size_t amp = rest.find('&');
    std::string_view pair = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
    if (pair.empty()) continue;
    size_t eq = pair.find('=');
    std::string key = PercentDecode(pair.substr(0, eq));
    query[key] = eq == std::string_view::npos ? "" : PercentDecode(pair.substr(eq + 1));
  }
  return query;
}

RestApi::RestApi(store::Store& store, metrics::Registry& registry, RestApiOptions options)
    : owned_cache_(std::make_unique<cluster::Cache>(store, cluster::ControlPlaneCacheOptions())),
      store_(store),
      cache_(*owned_cache_),
      registry_(registry),
      options_(std::move(options)),
      node_access_(store, options_.join_tokens),
      pod_logs_(store, options_.pod_logs_dir),
      stats_(registry, "apiserver"),
      cluster_metrics_(*owned_cache_, registry) {}

RestApi::RestApi(store::Store& store, cluster::Cache& cache, metrics::Registry& registry,
                 RestApiOptions options)
    : store_(store),
      cache_(cache),
      registry_(registry),
      options_(std::move(options)),
      node_access_(store, options_.join_tokens),
      pod_logs_(store, options_.pod_logs_dir),
      stats_(registry, "apiserver"),
      cluster_metrics_(cache, registry) {}

Result<Caller> RestApi::Authenticate(const net::HttpRequest& request) const {
  std::string_view header = request.Header("Authorization");
  if (header.empty()) return Caller{};
  std::string_view token = BearerToken(header);
  if (token.empty()) {
    return Err(UnauthenticatedError(
        "the Authorization header holds no bearer token (Authorization: Bearer TOKEN)"));
  }
  for (const AccessToken& accepted : options_.tokens) {
    if (SameSecret(token, accepted.token)) {
      return Caller{Caller::Kind::kUser, accepted.user, accepted.namespaces};
    }
  }
  if (NodeAccess::LooksLikeNodeCredential(token)) {
    ASSIGN_OR_RETURN(std::string node, node_access_.NodeOf(token));
    return Caller{Caller::Kind::kNode, std::move(node), {}};
  }
  return Err(UnauthenticatedError("the bearer token is not valid for this server"));
}

ApiReply RestApi::Handle(const net::HttpRequest& received) {
  // A body in Kubernetes' protobuf encoding that strata reads is handled as its JSON.
  std::optional<net::HttpRequest> from_protobuf = FromProtobuf(received);
  const net::HttpRequest& request = from_protobuf ? *from_protobuf : received;
  std::string verb = "other";
  Query query = ParseQuery(request.target);
  Result<ApiReply> reply = [&]() -> Result<ApiReply> {
    std::string path(request.Path());
    while (path.size() > 1 && path.back() == '/') path.pop_back();
    if (path == NodeAccess::kJoinPath) {
      verb = "join";
      if (request.method != "POST") return Err(UnimplementedError("join takes POST with a Node"));
      // A join token is no user's: Authenticate refuses it, and it is no admin.
      Result<Caller> caller = Authenticate(request);
      ASSIGN_OR_RETURN(nlohmann::json credential,
                       node_access_.Join(BearerToken(request.Header("Authorization")),
                                         caller && caller->admin(), request.body));
      return JsonReply(201, credential);
    }
    if (path == "/healthz" || path == "/readyz" || path == "/livez") {
      // Open to anyone, as kube-apiserver's (system:public-info-viewer): a kubelet's probe
      // carries no token.
      verb = "health";
      if (request.method != "GET") {
        return Err(UnimplementedError("method " + request.method + " is not allowed on " + path));
      }
      return ApiReply{net::HttpResponse::Text(200, "text/plain", "ok"), nullptr};
    }
    ASSIGN_OR_RETURN(Caller caller, Authenticate(request));
    if (!BodyTypeRead(request)) {
      // kubectl's create verbs send built-in kinds as protobuf; of those strata reads only the
      // kinds KubeProtobufToJson names, and client-go does not send the others again as JSON
      // (it does so only after CBOR's 415).
      verb = "unsupported";
      const std::string_view type = request.Header("Content-Type");
      Status refused(StatusCode::kInvalidArgument,
                     type.starts_with(kKubeProtobuf)
                         ? KubeProtobufToJson(request.body).error().message()
                         : "the body's Content-Type " + std::string(type) +
                               " is not read: send application/json or application/yaml");
      nlohmann::json status = api::StatusObject(refused);
      status["code"] = 415;
      status["reason"] = "UnsupportedMediaType";
      return JsonReply(415, status);
    }
    switch (caller.kind) {
      case Caller::Kind::kAnonymous:
        if (!IsPublicPath(request.method, path)) {
          return Err(UnauthenticatedError(
              "this server requires a bearer token (Authorization: Bearer TOKEN; the strata CLI "
              "reads it from --token or $STRATA_TOKEN, or finds what strata up recorded for the "
              "server)" +
              (options_.credential_hint.empty() ? "" : "; " + options_.credential_hint)));
        }
        break;
      case Caller::Kind::kNode:
        RETURN_IF_ERROR(
            node_access_.Authorize(caller.name, request.method, path, query, request.body));
        break;
      case Caller::Kind::kUser:
        RETURN_IF_ERROR(AuthorizeUser(caller, request.method, path));
        break;
    }
    return Route(request, query, caller, &verb);
  }();
  if (!reply) {
    const Status& error = reply.error();
    reply = JsonReply(HttpStatusFor(error.code()), api::StatusObject(error));
  }
  if (Result<api::ResourcePath> at = api::ParseResourcePath(request.Path()); at) {
    if (std::string_view warning = api::DeprecationWarning(*at->type); !warning.empty()) {
      AddWarningHeaders({std::string(warning)}, reply->response.headers);
    }
  }
  stats_.requests_total.With({verb, std::to_string(reply->response.status)}).Increment();
  return std::move(*reply);
}

Result<ApiReply> RestApi::Route(const net::HttpRequest& request, const Query& query,
                                const Caller& caller, std::string* verb) {
  std::string path(request.Path());
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  const std::string& method = request.method;
  auto only_get = [&]() -> Status {
    if (method == "GET") return Status::Ok();
    return UnimplementedError("method " + method + " is not allowed on " + path);
  };
  if (IsDiscoveryPath(path)) {
    *verb = "discovery";
    RETURN_IF_ERROR(only_get());
    if (path == "/api") return JsonReply(200, api::CoreApiVersions());
    if (path == "/apis") return JsonReply(200, api::ApiGroupList());
    if (path == "/version") return JsonReply(200, api::VersionInfo(options_.version));
    const nlohmann::json groups = api::ApiGroupList();
    for (const nlohmann::json& group : groups["groups"]) {
      if (path == "/apis/" + group["name"].get<std::string>()) return JsonReply(200, group);
    }
    // An APIResourceList: "/api/v1" or "/apis/GROUP/VERSION".
    std::string group_version =
        path == "/api/v1" ? "v1" : path.substr(std::string("/apis/").size());
    return JsonReply(200, *api::ApiResourceList(group_version));
  }
  if (path == "/openapi/v3" || path.starts_with("/openapi/v3/")) {
    *verb = "discovery";
    RETURN_IF_ERROR(only_get());
    if (path == "/openapi/v3") return JsonReply(200, api::OpenApiV3Index());
    const nlohmann::json* document = api::OpenApiV3Document(
        std::string_view(path).substr(std::string_view("/openapi/v3/").size()));
    if (document == nullptr) return Err(NotFoundError("no OpenAPI document at " + path));
    return JsonReply(200, *document);
  }
  if (path == "/metrics") {
    *verb = "metrics";
    RETURN_IF_ERROR(only_get());
    return ApiReply{Metrics(query), nullptr};
  }
  if (path == kApplyPath) {
    *verb = "apply";
    if (method != "POST") return Err(UnimplementedError("apply takes POST with manifests"));
    return Apply(request, query, caller);
  }
  if (std::optional<std::string> leased = api::NodeOfLeasePath(path)) {
    *verb = method == "GET" ? "get" : "update";
    return NodeLease(method, *leased, request.body);
  }
  ASSIGN_OR_RETURN(api::ResourcePath resource, api::ParseResourcePath(path));
  if (&api::StorageVersionOf(*resource.type) == &api::LocalQueueType()) {
    return ServeLocalQueue(resource, request, query, verb);
  }
  api::ServedForm form = api::ServedFormWanted(request.Header("Accept"));
  if (resource.type == &api::EventsV1Type()) {
    // The core group's Events seen through events.k8s.io/v1: read there, written there.
    if (method != "GET" || !resource.subresource.empty()) {
      return Err(UnimplementedError(
          "events.k8s.io/v1 events are served for reading (get, list, watch); write Events "
          "through /api/v1"));
    }
  }
  if (resource.type == &api::EventsV1Type() || api::IsSourceServedType(*resource.type)) {
    form = api::KubernetesFormAt(*resource.type);
  }
  if (resource.subresource == "log") {
    *verb = "log";
    RETURN_IF_ERROR(only_get());
    return pod_logs_.Serve(resource, query);
  }
  if (resource.subresource == "checkpoint") {
    *verb = "checkpoint";
    if (method != "POST") return Err(UnimplementedError("a checkpoint is reported with POST"));
    return RecordCheckpoint(resource);
  }
  if (resource.subresource == "scale") {
    // What kubectl scale patches. Not served (discovery lists none): a Job's replicas are its
    // gang, one world size for the whole run; a Service's replicas are its autoscaler's.
    *verb = "scale";
    return Err(NotFoundError(
        std::string(resource.type->plural) +
        " have no scale subresource in strata: a Job's spec.replicas is the size of its gang, "
        "fixed while it runs, and a Service is scaled by its autoscaler between "
        "spec.minReplicas and spec.maxReplicas (change those with kubectl patch --type merge)"));
  }
  if (resource.subresource == "eviction") {
    *verb = "evict";
    if (method != "POST") return Err(UnimplementedError("an eviction is created with POST"));
    return Evict(resource, request.body);
  }
  if (!resource.subresource.empty()) {
    *verb = method == "PATCH" ? "patch" : "update";
    if (api::IsSourceServedType(*resource.type)) {
      // Read as Kubernetes' clients read a Job's status; written by strata's controllers only.
      *verb = "get";
      if (method == "GET") return GetObject(resource, {}, form);
      return Err(UnimplementedError(
          "a " + resource.type->GroupVersion() + " " + std::string(resource.type->kind) +
          "'s status is written by strata's controllers; it is served for reading only"));
    }
    if (resource.type->kind != "Pod" && resource.type->kind != "Node") {
      return Err(NotFoundError(std::string(resource.type->plural) + " have no status subresource"));
    }
    if (method == "GET") return GetObject(resource, {}, form);
    if (method == "PUT") return ReplaceStatus(resource, request, query, form);
    if (method == "PATCH") return Patch(resource, request, query, form);
    return Err(UnimplementedError("method " + method + " is not allowed on " + path));
  }
  bool watch =
      query.count("watch") != 0 && query.at("watch") != "0" && query.at("watch") != "false";
  TableWanted table;
  if (method == "GET") {
    ASSIGN_OR_RETURN(table, TableRequested(request, query));
  }
  if (resource.name.empty()) {
    if (method == "GET") {
      *verb = watch ? "watch" : "list";
      return watch ? Watch(resource, query, table, form) : List(resource, query, table, form);
    }
    if (method == "POST") {
      *verb = "create";
      return Create(resource, request, query, form);
    }
    return Err(UnimplementedError("method " + method + " is not allowed on a collection"));
  }
  if (method == "GET") {
    *verb = watch ? "watch" : "get";
    return watch ? Watch(resource, query, table, form) : GetObject(resource, table, form);
  }
  if (method == "PUT") {
    *verb = "update";
    return Replace(resource, request, query, form);
  }
  if (method == "PATCH") {
    *verb = "patch";
    return Patch(resource, request, query, form);
  }
  if (method == "DELETE") {
    *verb = "delete";
    return Delete(resource, query, form);
  }
  return Err(UnimplementedError("method " + method + " is not allowed on " + path));
}

net::HttpResponse RestApi::Metrics(const Query& query) {
  std::set<std::string, std::less<>> families;
  if (auto it = query.find("families"); it != query.end()) {
    for (std::string_view rest = it->second; !rest.empty();) {
      const size_t comma = rest.find(',');
      if (comma != 0) families.emplace(rest.substr(0, comma));
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
  }
  const bool cluster_state =
      families.empty() || std::any_of(families.begin(), families.end(), [](const std::string& f) {
        return f.starts_with("strata_");
      });
  if (cluster_state) {
    if (Status refreshed = cluster_metrics_.Refresh(); !refreshed.ok()) {
      // The series keep their last values; the next scrape lists the store again.
      spdlog::warn("/metrics: the cluster state could not be read: {}", refreshed.ToString());
    }
  }
  // An empty list (`?families=`) asks for every family, as no list does.
  const metrics::FamilySelection wanted =
      families.empty() ? metrics::FamilySelection() : metrics::FamilySelection(std::move(families));
  return net::HttpResponse::Text(200, "text/plain; version=0.0.4", registry_.RenderText(wanted));
}

}  // namespace strata::server
