#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "kube/https_transport.h"
#include "kube/kubeconfig.h"
#include "kube/resource.h"
#include "kube/watch.h"

// The Kubernetes API client: typed REST over any group/version/resource, with bodies as JSON.
//
//   ASSIGN_OR_RETURN(KubeConfig config, LoadKubeConfig({.explicit_path = flag}));
//   ASSIGN_OR_RETURN(std::unique_ptr<Client> client, Client::Create(config));
//   ASSIGN_OR_RETURN(ObjectList nodes, client->ListAll(resources::kNodes, ""));
//   RETURN_IF_ERROR(client->Bind("default", "p", "kwok-node-0"));
//
// Errors are the API's Status objects mapped to strata codes (api_errors.h): NotFound,
// AlreadyExists, Conflict (a stale resourceVersion or uid precondition), Expired (410),
// InvalidArgument (422 Invalid, 400), Unauthenticated (401), PermissionDenied (403),
// ResourceExhausted (429 after the retries), and Unavailable naming the server when it cannot be
// reached. The message starts with the request: "PUT https://127.0.0.1:6443/api/v1/...".

namespace strata::kube {

struct ClientOptions {
  // Client-side rate limit, client-go's token bucket with its defaults (QPS 5, burst 10).
  // qps <= 0 turns the limiter off.
  double qps = 5;
  int burst = 10;
  // A request answered 429 Too Many Requests, or 5xx with a Retry-After header, is sent again
  // after the Retry-After delay (1 s when a 429 names none), up to this many times.
  int max_retries = 10;
  // The longest Retry-After honoured; longer ones are shortened to this.
  Duration max_retry_after = std::chrono::seconds(30);
  std::string user_agent = "strata-kube-client/0.1";
  TransportOptions transport;
  // The rate limiter's and the token re-reads' time source. Must outlive the client.
  const Clock* clock = &RealClock::Instance();
};

struct ListOptions {
  std::string label_selector;  // "app=x,tier!=db"
  std::string field_selector;  // "spec.nodeName=n1"
  // "": the latest state (a consistent read); "0": any state the server has cached; else
  // a version, with resource_version_match "NotOlderThan" or "Exact".
  std::string resource_version;
  std::string resource_version_match;
  int64_t limit = 0;           // page size; 0: everything in one answer
  std::string continue_token;  // the previous page's continue_token
};

// One answer of a list. Items carry kind and apiVersion (the API leaves them out of a list's
// items; they are filled in from the list's kind).
struct ObjectList {
  std::vector<nlohmann::json> items;
  std::string resource_version;  // metadata.resourceVersion: watch from here
  std::string continue_token;    // "" on the last page
  std::optional<int64_t> remaining_item_count;
};

struct WriteOptions {
  std::string subresource;    // Update: "status" updates pods/status; "" the object itself
  std::string field_manager;  // recorded in managedFields; "" lets the server name it
  bool dry_run = false;       // validate and admit, store nothing
};

enum class PatchType {
  kMerge,           // application/merge-patch+json (RFC 7386)
  kJson,            // application/json-patch+json (RFC 6902): a list of operations
  kStrategicMerge,  // application/strategic-merge-patch+json (built-in kinds only)
  kApply,           // application/apply-patch+yaml: server-side apply (needs field_manager)
};

struct PatchOptions {
  std::string subresource;
  std::string field_manager;  // required for kApply
  bool force = false;         // kApply: take fields other managers own
  bool dry_run = false;
};

enum class PropagationPolicy { kDefault, kOrphan, kBackground, kForeground };

struct DeleteOptions {
  // Preconditions: the delete fails with Conflict unless the object still has them.
  std::string precondition_uid;
  std::string precondition_resource_version;
  std::optional<int64_t> grace_period_seconds;  // nullopt: the object's own
  PropagationPolicy propagation = PropagationPolicy::kDefault;
  bool dry_run = false;
};

struct WatchOptions {
  std::string resource_version;  // watch changes after this version ("": from now)
  std::string label_selector;
  std::string field_selector;
  bool allow_bookmarks = true;
  // timeoutSeconds: the server ends the stream after this long (rounded down to seconds;
  // zero: the server's default, a few minutes).
  Duration timeout = Duration::zero();
};

// What a Client has done, for tests and metrics.
struct ClientStats {
  uint64_t requests = 0;            // HTTP requests sent, retries included
  uint64_t throttled = 0;           // requests that waited on the rate limiter
  uint64_t retried = 0;             // resent after 429 / Retry-After
  uint64_t token_rereads = 0;       // resent after 401 with a re-read token
  uint64_t connections_opened = 0;  // TLS connections made (the rest were kept alive)
};

class TokenBucketRateLimiter;
class BearerTokenSource;

// A client of one API server as one identity. Thread-safe: the scheduler, the controllers and
// the reflectors of one process share one client (and its connection pool and rate limit).
// Owned by whoever wires them together; must outlive the watch streams it opened.
class Client {
 public:
  // Fails with InvalidArgument when the server URL or the certificates do not load.
  static Result<std::unique_ptr<Client>> Create(const KubeConfig& config,
                                                ClientOptions options = {});
  // The client of the kubeconfig at `kubeconfig_path` ("": $KUBECONFIG, ~/.kube/config, then
  // the in-cluster service account), as LoadKubeConfig finds it; its errors, or Create's.
  static Result<std::unique_ptr<Client>> FromKubeconfig(const std::string& kubeconfig_path,
                                                        ClientOptions options = {});
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // GET of one object (or of its `subresource`). NotFound when it does not exist.
  Result<nlohmann::json> Get(const GroupVersionResource& resource, std::string_view namespace_name,
                             std::string_view name, std::string_view subresource = "");

  // One page of a list (every namespace when `namespace_name` is empty).
  Result<ObjectList> List(const GroupVersionResource& resource, std::string_view namespace_name,
                          const ListOptions& options = {});

  // Every page of a list, `page_size` items at a time (options.limit and continue_token are
  // ignored), at the version of the first page. When a continue token expires between pages
  // (410), lists again in one answer, as client-go's pager.
  Result<ObjectList> ListAll(const GroupVersionResource& resource, std::string_view namespace_name,
                             const ListOptions& options = {}, int64_t page_size = 500);

  // POST of a new object (its metadata.name, or generateName). AlreadyExists when the name is
  // taken. Returns the object as stored.
  Result<nlohmann::json> Create(const GroupVersionResource& resource,
                                std::string_view namespace_name, const nlohmann::json& object,
                                const WriteOptions& options = {});

  // POST to a subresource of the object `name`: pods/binding, pods/eviction,
  // serviceaccounts/token. Returns what the server answers. A 429 from pods/eviction is a
  // PodDisruptionBudget's refusal, not throttling: it is returned (ResourceExhausted) at once.
  Result<nlohmann::json> CreateSubresource(const GroupVersionResource& resource,
                                           std::string_view namespace_name, std::string_view name,
                                           std::string_view subresource,
                                           const nlohmann::json& body);

  // PUT of an object named by its metadata.name. Its metadata.resourceVersion, when set, is the
  // precondition: Conflict when the object changed since. Returns the object as stored.
  Result<nlohmann::json> Update(const GroupVersionResource& resource,
                                std::string_view namespace_name, const nlohmann::json& object,
                                const WriteOptions& options = {});

  // PATCH of the object `name`; see PatchType. Returns the object as stored.
  Result<nlohmann::json> Patch(const GroupVersionResource& resource,
                               std::string_view namespace_name, std::string_view name,
                               PatchType type, const nlohmann::json& patch,
                               const PatchOptions& options = {});

  // Server-side apply of `object` (apiVersion, kind and metadata.name required) as
  // `field_manager`: Patch with kApply. Conflict when another manager owns a field being set
  // and `force` is false.
  Result<nlohmann::json> Apply(const GroupVersionResource& resource,
                               std::string_view namespace_name, const nlohmann::json& object,
                               std::string_view field_manager, bool force = false);

  // DELETE of the object `name`. Returns what the server answers: the object (with
  // deletionTimestamp while a grace period or finalizers keep it) or a Status of success.
  // NotFound when it does not exist; Conflict when a precondition fails.
  Result<nlohmann::json> Delete(const GroupVersionResource& resource,
                                std::string_view namespace_name, std::string_view name,
                                const DeleteOptions& options = {});

  // Binds the pod to `node_name` through pods/binding, as a scheduler does. A non-empty
  // `pod_uid` is a precondition (Conflict when the pod was replaced by another of the same
  // name). Conflict as well when the pod is already bound.
  Status Bind(std::string_view namespace_name, std::string_view pod_name,
              std::string_view node_name, std::string_view pod_uid = "");

  // Opens a watch (every namespace when `namespace_name` is empty). Returns once the server
  // accepted it; an HTTP error (403, 410...) is returned here, later ones by the stream.
  Result<std::unique_ptr<WatchStream>> Watch(const GroupVersionResource& resource,
                                             std::string_view namespace_name,
                                             const WatchOptions& options = {});

  // GET of any path ("/version", "/apis"), answered as JSON.
  Result<nlohmann::json> GetPath(std::string_view path);

  // "https://127.0.0.1:6443".
  const std::string& server() const { return server_; }
  // The namespace of the configuration's context.
  const std::string& default_namespace() const { return default_namespace_; }
  // The CA the configuration trusts for the server (PEM; empty: the system's).
  const std::string& ca_pem() const { return ca_pem_; }
  ClientStats stats() const;

 private:
  struct Request {
    std::string method;
    std::string path;  // with the query, without the server's path prefix
    std::string body;
    std::string content_type;
    bool retry_throttled = true;  // resend after a 429
  };

  Client() = default;
  net::HttpRequest Build(const Request& request, const std::string& token) const;
  // Sends with rate limiting, 429 / Retry-After retries and one re-read of a rotated token.
  // With `stream`, the response's head is returned and its body left in *stream.
  Result<net::HttpResponse> Send(const Request& request,
                                 std::unique_ptr<ResponseStream>* stream = nullptr);
  Result<nlohmann::json> Call(const Request& request);
  std::string Describe(const Request& request) const;
  void WaitForRateLimiter();

  std::string server_;       // scheme, host, port
  std::string path_prefix_;  // of the server URL, without a trailing slash
  std::string default_namespace_;
  std::string ca_pem_;
  ClientOptions options_;
  std::string impersonate_user_;
  std::vector<std::string> impersonate_groups_;
  std::unique_ptr<HttpsTransport> transport_;
  std::unique_ptr<TokenBucketRateLimiter> limiter_;  // null when off
  std::unique_ptr<BearerTokenSource> token_;         // null without a token

  std::atomic<uint64_t> requests_{0}, throttled_{0}, retried_{0}, token_rereads_{0};
};

}  // namespace strata::kube
