#include "kube/client.h"

#include <algorithm>
#include <charconv>
#include <thread>

#include "kube/api_errors.h"
#include "kube/bearer_token.h"
#include "kube/rate_limiter.h"

namespace strata::kube {

using nlohmann::json;

namespace {

// Parts of "https://host[:port][/prefix]"; host without IPv6 brackets.
struct ServerUrl {
  std::string host;
  int port = 443;
  std::string prefix;
};

Result<ServerUrl> ParseServerUrl(const std::string& url, const std::string& source) {
  auto bad = [&](std::string_view why) {
    return Err(InvalidArgumentError(source + ": server " + url + ": " + std::string(why)));
  };
  constexpr std::string_view kScheme = "https://";
  if (url.rfind(kScheme, 0) != 0) return bad("not an https:// URL");
  std::string_view rest = std::string_view(url).substr(kScheme.size());
  size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  ServerUrl out;
  if (slash != std::string_view::npos) {
    out.prefix = std::string(rest.substr(slash));
    while (!out.prefix.empty() && out.prefix.back() == '/') out.prefix.pop_back();
  }
  std::string_view port;
  if (!authority.empty() && authority.front() == '[') {
    size_t close = authority.find(']');
    if (close == std::string_view::npos) return bad("unclosed [ in the host");
    out.host = std::string(authority.substr(1, close - 1));
    if (close + 1 < authority.size()) {
      if (authority[close + 1] != ':') return bad("junk after the host");
      port = authority.substr(close + 2);
    }
  } else {
    size_t colon = authority.rfind(':');
    out.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port = authority.substr(colon + 1);
  }
  if (out.host.empty()) return bad("no host");
  if (!port.empty()) {
    auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), out.port);
    if (ec != std::errc() || end != port.data() + port.size() || out.port <= 0 ||
        out.port > 65535) {
      return bad("bad port");
    }
  }
  return out;
}

const char* PropagationName(PropagationPolicy policy) {
  switch (policy) {
    case PropagationPolicy::kOrphan:
      return "Orphan";
    case PropagationPolicy::kBackground:
      return "Background";
    case PropagationPolicy::kForeground:
      return "Foreground";
    case PropagationPolicy::kDefault:
      break;
  }
  return nullptr;
}

const char* ContentTypeOf(PatchType type) {
  switch (type) {
    case PatchType::kMerge:
      return "application/merge-patch+json";
    case PatchType::kJson:
      return "application/json-patch+json";
    case PatchType::kStrategicMerge:
      return "application/strategic-merge-patch+json";
    case PatchType::kApply:
      return "application/apply-patch+yaml";
  }
  return "application/json";
}

Result<std::string> NameOf(const json& object, std::string_view verb) {
  if (object.is_object() && object.contains("metadata") && object["metadata"].is_object() &&
      object["metadata"].contains("name") && object["metadata"]["name"].is_string() &&
      !object["metadata"]["name"].get<std::string>().empty()) {
    return object["metadata"]["name"].get<std::string>();
  }
  return Err(InvalidArgumentError(std::string(verb) + ": metadata.name: is required"));
}

void AddWriteQuery(QueryParameters& query, const std::string& field_manager, bool dry_run) {
  if (!field_manager.empty()) query.emplace_back("fieldManager", field_manager);
  if (dry_run) query.emplace_back("dryRun", "All");
}

// Seconds of a Retry-After header (the API server sends delta-seconds, never a date).
std::optional<Duration> ParseRetryAfter(std::string_view value) {
  int seconds = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), seconds);
  if (ec != std::errc() || end != value.data() + value.size() || seconds < 0) return std::nullopt;
  return std::chrono::seconds(seconds);
}

}  // namespace

Result<std::unique_ptr<Client>> Client::FromKubeconfig(const std::string& kubeconfig_path,
                                                       ClientOptions options) {
  KubeConfigOptions config_options;
  config_options.explicit_path = kubeconfig_path;
  ASSIGN_OR_RETURN(KubeConfig config, LoadKubeConfig(config_options));
  return Create(config, std::move(options));
}

Result<std::unique_ptr<Client>> Client::Create(const KubeConfig& config, ClientOptions options) {
  ASSIGN_OR_RETURN(ServerUrl url, ParseServerUrl(config.server, config.source));
  std::unique_ptr<Client> client(new Client());
  client->server_ = config.server.substr(0, config.server.size() - url.prefix.size());
  while (!client->server_.empty() && client->server_.back() == '/') client->server_.pop_back();
  client->path_prefix_ = url.prefix;
  client->default_namespace_ = config.namespace_name;
  client->ca_pem_ = config.ca_pem;
  client->options_ = options;
  client->impersonate_user_ = config.impersonate_user;
  client->impersonate_groups_ = config.impersonate_groups;
  TlsEndpoint endpoint{.host = url.host,
                       .port = url.port,
                       .server_name = config.tls_server_name,
                       .ca_pem = config.ca_pem,
                       .client_certificate_pem = config.client_certificate_pem,
                       .client_key_pem = config.client_key_pem};
  Result<std::unique_ptr<HttpsTransport>> transport =
      HttpsTransport::Create(endpoint, options.transport);
  if (!transport) return Err(transport.error().WithPrefix(config.source));
  client->transport_ = std::move(*transport);
  if (options.qps > 0) {
    client->limiter_ = std::make_unique<TokenBucketRateLimiter>(
        options.qps, std::max(1, options.burst), options.clock);
  }
  if (!config.bearer_token.empty() || !config.bearer_token_file.empty()) {
    client->token_ = std::make_unique<BearerTokenSource>(config.bearer_token,
                                                         config.bearer_token_file, options.clock);
  }
  return client;
}

Client::~Client() = default;

ClientStats Client::stats() const {
  return ClientStats{.requests = requests_.load(),
                     .throttled = throttled_.load(),
                     .retried = retried_.load(),
                     .token_rereads = token_rereads_.load(),
                     .connections_opened = transport_->ConnectionsOpened()};
}

std::string Client::Describe(const Request& request) const {
  std::string_view path = request.path;
  return request.method + " " + server_ + path_prefix_ +
         std::string(path.substr(0, path.find('?')));
}

net::HttpRequest Client::Build(const Request& request, const std::string& token) const {
  net::HttpRequest http;
  http.method = request.method;
  http.target = path_prefix_ + request.path;
  http.headers.emplace_back("Accept", "application/json");
  http.headers.emplace_back("User-Agent", options_.user_agent);
  if (!token.empty()) http.headers.emplace_back("Authorization", "Bearer " + token);
  if (!impersonate_user_.empty()) http.headers.emplace_back("Impersonate-User", impersonate_user_);
  for (const std::string& group : impersonate_groups_) {
    http.headers.emplace_back("Impersonate-Group", group);
  }
  if (!request.content_type.empty())
    http.headers.emplace_back("Content-Type", request.content_type);
  http.body = request.body;
  return http;
}

void Client::WaitForRateLimiter() {
  if (!limiter_) return;
  Duration wait = limiter_->Reserve();
  if (wait > Duration::zero()) {
    ++throttled_;
    std::this_thread::sleep_for(wait);
  }
}

Result<net::HttpResponse> Client::Send(const Request& request,
                                       std::unique_ptr<ResponseStream>* stream) {
  bool token_reread = false;
  for (int attempt = 0;; ++attempt) {
    WaitForRateLimiter();
    std::string token = token_ ? token_->Token() : std::string();
    if (token.find_first_of("\r\n") != std::string::npos) {
      return Err(InvalidArgumentError(Describe(request) + ": the bearer token holds a line break"));
    }
    net::HttpRequest http = Build(request, token);
    ++requests_;
    net::HttpResponse response;
    if (stream == nullptr) {
      Result<net::HttpResponse> sent = transport_->Send(http);
      if (!sent) return Err(sent.error().WithPrefix(Describe(request)));
      response = std::move(*sent);
    } else {
      Result<std::unique_ptr<ResponseStream>> opened = transport_->Open(http);
      if (!opened) return Err(opened.error().WithPrefix(Describe(request)));
      response = (*opened)->head();
      if (response.status < 300) {
        *stream = std::move(*opened);
        return response;
      }
      // An error: its body is a Status object, short; read it whole.
      while (response.body.size() < 1024 * 1024) {
        Result<std::string> piece = (*opened)->Read(options_.transport.idle_timeout);
        if (!piece || piece->empty()) break;
        response.body += *piece;
      }
    }
    if (response.status == 401 && !token_reread && token_ && token_->Invalidate()) {
      token_reread = true;  // the token may have rotated since it was last read
      ++token_rereads_;
      continue;
    }
    std::string_view retry_after = response.Header("Retry-After");
    bool retryable = (response.status == 429 && request.retry_throttled) ||
                     (response.status >= 500 && !retry_after.empty());
    if (retryable && attempt < options_.max_retries) {
      Duration wait = ParseRetryAfter(retry_after).value_or(std::chrono::seconds(1));
      wait = std::min(wait, options_.max_retry_after);
      ++retried_;
      std::this_thread::sleep_for(wait);
      continue;
    }
    return response;
  }
}

Result<json> Client::Call(const Request& request) {
  ASSIGN_OR_RETURN(net::HttpResponse response, Send(request));
  if (response.status >= 300) {
    return Err(StatusFromApiResponse(response.status, response.body, Describe(request)));
  }
  json body = json::parse(response.body, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded()) {
    return Err(InternalError(Describe(request) +
                             ": the answer is not JSON: " + response.body.substr(0, 120)));
  }
  return body;
}

Result<json> Client::Get(const GroupVersionResource& resource, std::string_view namespace_name,
                         std::string_view name, std::string_view subresource) {
  return Call({"GET", PathFor(resource, namespace_name, name, subresource), "", ""});
}

Result<json> Client::GetPath(std::string_view path) {
  return Call({"GET", std::string(path), "", ""});
}

Result<ObjectList> Client::List(const GroupVersionResource& resource,
                                std::string_view namespace_name, const ListOptions& options) {
  QueryParameters query;
  if (!options.label_selector.empty()) query.emplace_back("labelSelector", options.label_selector);
  if (!options.field_selector.empty()) query.emplace_back("fieldSelector", options.field_selector);
  if (!options.resource_version.empty()) {
    query.emplace_back("resourceVersion", options.resource_version);
  }
  if (!options.resource_version_match.empty()) {
    query.emplace_back("resourceVersionMatch", options.resource_version_match);
  }
  if (options.limit > 0) query.emplace_back("limit", std::to_string(options.limit));
  if (!options.continue_token.empty()) query.emplace_back("continue", options.continue_token);
  Request request{"GET", PathFor(resource, namespace_name, "", "", query), "", ""};
  ASSIGN_OR_RETURN(json body, Call(request));
  if (!body.is_object() || !body.contains("items") ||
      !(body["items"].is_array() || body["items"].is_null())) {
    return Err(InternalError(Describe(request) + ": the answer is not a list"));
  }
  ObjectList list;
  const json& metadata = body.value("metadata", json::object());
  list.resource_version = metadata.value("resourceVersion", "");
  list.continue_token = metadata.value("continue", "");
  if (metadata.contains("remainingItemCount") && metadata["remainingItemCount"].is_number()) {
    list.remaining_item_count = metadata["remainingItemCount"].get<int64_t>();
  }
  std::string kind = body.value("kind", "");
  if (kind.size() > 4 && kind.ends_with("List")) kind.resize(kind.size() - 4);
  std::string api_version = body.value("apiVersion", resource.ApiVersion());
  if (body["items"].is_array()) {
    list.items.reserve(body["items"].size());
    for (json& item : body["items"]) {
      if (!item.contains("kind") && !kind.empty()) item["kind"] = kind;
      if (!item.contains("apiVersion")) item["apiVersion"] = api_version;
      list.items.push_back(std::move(item));
    }
  }
  return list;
}

Result<ObjectList> Client::ListAll(const GroupVersionResource& resource,
                                   std::string_view namespace_name, const ListOptions& options,
                                   int64_t page_size) {
  ListOptions page = options;
  page.limit = page_size;
  page.continue_token.clear();
  ASSIGN_OR_RETURN(ObjectList all, List(resource, namespace_name, page));
  while (!all.continue_token.empty()) {
    ListOptions next;
    next.label_selector = options.label_selector;
    next.field_selector = options.field_selector;
    next.limit = page_size;
    next.continue_token = all.continue_token;
    Result<ObjectList> more = List(resource, namespace_name, next);
    if (!more && more.error().code() == StatusCode::kExpired) {
      // The snapshot the pages were read from was compacted away: one answer, at the latest.
      ListOptions whole = options;
      whole.limit = 0;
      whole.continue_token.clear();
      return List(resource, namespace_name, whole);
    }
    if (!more) return Err(more.error());
    for (json& item : more->items) all.items.push_back(std::move(item));
    all.continue_token = more->continue_token;
  }
  all.remaining_item_count.reset();
  return all;
}

Result<json> Client::Create(const GroupVersionResource& resource, std::string_view namespace_name,
                            const json& object, const WriteOptions& options) {
  QueryParameters query;
  AddWriteQuery(query, options.field_manager, options.dry_run);
  return Call({"POST", PathFor(resource, namespace_name, "", "", query), object.dump(),
               "application/json"});
}

Result<json> Client::CreateSubresource(const GroupVersionResource& resource,
                                       std::string_view namespace_name, std::string_view name,
                                       std::string_view subresource, const json& body) {
  return Call({"POST", PathFor(resource, namespace_name, name, subresource), body.dump(),
               "application/json", subresource != "eviction"});
}

Result<json> Client::Update(const GroupVersionResource& resource, std::string_view namespace_name,
                            const json& object, const WriteOptions& options) {
  ASSIGN_OR_RETURN(std::string name, NameOf(object, "update of " + resource.ToString()));
  QueryParameters query;
  AddWriteQuery(query, options.field_manager, options.dry_run);
  return Call({"PUT", PathFor(resource, namespace_name, name, options.subresource, query),
               object.dump(), "application/json"});
}

Result<json> Client::Patch(const GroupVersionResource& resource, std::string_view namespace_name,
                           std::string_view name, PatchType type, const json& patch,
                           const PatchOptions& options) {
  if (type == PatchType::kApply && options.field_manager.empty()) {
    return Err(InvalidArgumentError("server-side apply of " + resource.ToString() + " \"" +
                                    std::string(name) + "\": a field manager is required"));
  }
  QueryParameters query;
  AddWriteQuery(query, options.field_manager, options.dry_run);
  if (type == PatchType::kApply && options.force) query.emplace_back("force", "true");
  // JSON is YAML, so an apply patch is sent as JSON text under the YAML media type.
  return Call({"PATCH", PathFor(resource, namespace_name, name, options.subresource, query),
               patch.dump(), ContentTypeOf(type)});
}

Result<json> Client::Apply(const GroupVersionResource& resource, std::string_view namespace_name,
                           const json& object, std::string_view field_manager, bool force) {
  ASSIGN_OR_RETURN(std::string name, NameOf(object, "apply of " + resource.ToString()));
  PatchOptions options;
  options.field_manager = std::string(field_manager);
  options.force = force;
  return Patch(resource, namespace_name, name, PatchType::kApply, object, options);
}

Result<json> Client::Delete(const GroupVersionResource& resource, std::string_view namespace_name,
                            std::string_view name, const DeleteOptions& options) {
  json body = {{"apiVersion", "v1"}, {"kind", "DeleteOptions"}};
  if (!options.precondition_uid.empty()) body["preconditions"]["uid"] = options.precondition_uid;
  if (!options.precondition_resource_version.empty()) {
    body["preconditions"]["resourceVersion"] = options.precondition_resource_version;
  }
  if (options.grace_period_seconds) body["gracePeriodSeconds"] = *options.grace_period_seconds;
  if (const char* policy = PropagationName(options.propagation)) {
    body["propagationPolicy"] = policy;
  }
  if (options.dry_run) body["dryRun"] = json::array({"All"});
  return Call({"DELETE", PathFor(resource, namespace_name, name), body.dump(), "application/json"});
}

Status Client::Bind(std::string_view namespace_name, std::string_view pod_name,
                    std::string_view node_name, std::string_view pod_uid) {
  json binding = {{"apiVersion", "v1"},
                  {"kind", "Binding"},
                  {"metadata", {{"name", pod_name}, {"namespace", namespace_name}}},
                  {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", node_name}}}};
  if (!pod_uid.empty()) binding["metadata"]["uid"] = pod_uid;
  Result<json> bound =
      CreateSubresource(resources::kPods, namespace_name, pod_name, "binding", binding);
  return bound ? Status::Ok() : bound.error();
}

Result<std::unique_ptr<WatchStream>> Client::Watch(const GroupVersionResource& resource,
                                                   std::string_view namespace_name,
                                                   const WatchOptions& options) {
  QueryParameters query{{"watch", "1"}};
  if (!options.resource_version.empty()) {
    query.emplace_back("resourceVersion", options.resource_version);
  }
  if (options.allow_bookmarks) query.emplace_back("allowWatchBookmarks", "true");
  if (!options.label_selector.empty()) query.emplace_back("labelSelector", options.label_selector);
  if (!options.field_selector.empty()) query.emplace_back("fieldSelector", options.field_selector);
  auto seconds = std::chrono::duration_cast<std::chrono::seconds>(options.timeout).count();
  if (seconds > 0) query.emplace_back("timeoutSeconds", std::to_string(seconds));
  Request request{"GET", PathFor(resource, namespace_name, "", "", query), "", ""};
  std::unique_ptr<ResponseStream> stream;
  ASSIGN_OR_RETURN(net::HttpResponse head, Send(request, &stream));
  if (head.status >= 300) {
    return Err(StatusFromApiResponse(head.status, head.body, Describe(request)));
  }
  std::string what = "watch of " + resource.ToString() +
                     (namespace_name.empty() ? "" : " in " + std::string(namespace_name));
  return std::make_unique<WatchStream>(std::move(stream), std::move(what));
}

}  // namespace strata::kube
