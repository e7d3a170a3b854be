#include "server/cost_api.h"

#include "api/api_status.h"
#include "api/duration.h"
#include "observe/cluster_cost.h"
#include "server/rest_api.h"

namespace strata::server {
namespace {

constexpr Duration kMaxWindow = std::chrono::hours(24 * 366);

}  // namespace

CostApi::CostApi(std::shared_ptr<observe::ClusterObjectsCache> cluster, CostApiOptions options)
    : options_(std::move(options)), cluster_(std::move(cluster)) {}

Result<nlohmann::json> CostApi::Report(std::string_view by, std::string_view window_text) const {
  ASSIGN_OR_RETURN(observe::CostDimension dimension, observe::ParseCostDimension(by));
  Duration window = options_.default_window;
  if (!window_text.empty()) {
    Result<Duration> parsed = api::ParseDuration(window_text);
    if (!parsed || *parsed <= Duration::zero() || *parsed > kMaxWindow) {
      return Err(InvalidArgumentError("window \"" + std::string(window_text) +
                                      "\": expected a duration from 1s to 8784h, such as 24h"));
    }
    window = *parsed;
  }
  ASSIGN_OR_RETURN(std::shared_ptr<const observe::ClusterObjects> cluster, cluster_->Get());
  observe::CostPods pods = observe::CostPodsOf(*cluster);
  std::map<std::string, double> tokens;
  if (options_.service_tokens) tokens = options_.service_tokens(window);
  TimePoint now = options_.clock->Now();
  nlohmann::json body = observe::CostReportToJson(
      observe::ComputeCost(options_.prices, pods.pods, dimension, now - window, now, tokens));
  body["podsWithoutFinishTime"] = pods.unknown_end;
  return body;
}

std::optional<ApiReply> CostApi::Handle(const net::HttpRequest& request) const {
  std::string_view path = request.Path();
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  if (path != kPath) return std::nullopt;
  if (request.method != "GET") {
    return JsonReply(HttpStatusFor(StatusCode::kUnimplemented),
                     api::StatusObject(UnimplementedError(
                         "method " + request.method + " is not allowed on " + std::string(kPath))));
  }
  std::map<std::string, std::string> query = ParseQuery(request.target);
  auto by = query.find("by");
  auto window = query.find("window");
  Result<nlohmann::json> body =
      Report(by == query.end() ? "team" : by->second, window == query.end() ? "" : window->second);
  if (!body) return JsonReply(HttpStatusFor(body.error().code()), api::StatusObject(body.error()));
  return JsonReply(200, *body);
}

}  // namespace strata::server
