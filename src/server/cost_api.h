#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "net/http_message.h"
#include "observe/cluster_objects_cache.h"
#include "observe/cost.h"
#include "server/api_listener.h"

namespace strata::server {

struct CostApiOptions {
  const Clock* clock = &RealClock::Instance();
  observe::PriceTable prices = observe::DefaultPriceTable();
  // Tokens each service served over `window` (the gateway's counts); empty: unknown, and
  // services get no cost per million tokens.
  std::function<std::map<std::string, double>(Duration window)> service_tokens;
  Duration default_window = std::chrono::hours(24);
};

// The cost endpoint of the control plane:
//
//   GET /apis/strata.dev/v1alpha1/cost?by=team|project|queue|job|service|pod&window=24h
//
// answers a observe::CostReportToJson body computed from the store's Nodes and Pods at the
// time of the request (OpenCost's model: requests x price x time held, see cost.h), plus
// `podsWithoutFinishTime`. `by` defaults to team and `window` (a Go duration, at most 8760h) to
// the configured default. Bad parameters get 400 with a Status object naming the parameter. The
// Nodes, Pods and Queues come from `cluster` (shared with the cluster's other readers): the
// first read lists the store, the later ones decode only what was written since.
//
// Owned by the control plane. Does no authentication of its own: wire it behind the REST API's.
// Handle is thread-safe (the cache is; the rest is immutable).
class CostApi {
 public:
  static constexpr std::string_view kPath = "/apis/strata.dev/v1alpha1/cost";

  CostApi(std::shared_ptr<observe::ClusterObjectsCache> cluster, CostApiOptions options);

  // The reply for a request to kPath (GET only, else 405-like Unimplemented as the REST API
  // answers), or nullopt when the request's path is not kPath.
  std::optional<ApiReply> Handle(const net::HttpRequest& request) const;

 private:
  Result<nlohmann::json> Report(std::string_view by, std::string_view window) const;

  const CostApiOptions options_;
  const std::shared_ptr<observe::ClusterObjectsCache> cluster_;  // thread-safe
};

}  // namespace strata::server
