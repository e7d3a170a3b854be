#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "net/http_message.h"
#include "observe/cost.h"
#include "observe/cost_ledger.h"
#include "server/api_listener.h"

namespace strata::server {

// Tokens each service served in [from, to] (the gateway's counts, ServiceTokenLedger::Between).
using ServiceTokens = std::function<std::map<std::string, double>(TimePoint from, TimePoint to)>;

struct CostApiOptions {
  const Clock* clock = &RealClock::Instance();
  std::string currency = observe::DefaultPriceTable().currency;
  // Empty: unknown, and services get no cost per million tokens.
  ServiceTokens service_tokens;
  Duration default_window = std::chrono::hours(24);
};

// The cost endpoint of the control plane:
//
//   GET /apis/strata.dev/v1alpha1/cost?by=team|project|queue|job|service|pod&window=24h&step=1h
//
// answers a observe::CostReportToJson body computed from the durable cost ledger (OpenCost's
// model: requests x price x time held, see cost.h and cost_ledger.h), so deleted pods keep their
// spend. `by` defaults to team and `window` (a Go duration or days, "7d"; at most 8784h) to the
// configured default. With `step` (1h, 1d, at least 1s, at most kMaxSteps steps in the window),
// the window starts at the step boundary at or before now - window (steps fall on multiples of
// the step since the Unix epoch: hours, midnights UTC) and the body also has `series`
// (observe::CostSeriesToJson): each group's spend per step, summing to its line's total, with
// tokens and cost per million tokens per step for services. Bad parameters get 400 with a
// Status object naming the parameter.
//
// Owned by the control plane. Does no authentication of its own: wire it behind the REST API's.
// Handle is thread-safe (the ledger is; the rest is immutable).
class CostApi {
 public:
  static constexpr std::string_view kPath = "/apis/strata.dev/v1alpha1/cost";
  static constexpr int kMaxSteps = 2000;

  CostApi(std::shared_ptr<const observe::CostLedger> ledger, CostApiOptions options);

  // The reply for a request to kPath (GET only, else 405-like Unimplemented as the REST API
  // answers), or nullopt when the request's path is not kPath.
  std::optional<ApiReply> Handle(const net::HttpRequest& request) const;

 private:
  Result<nlohmann::json> Report(std::string_view by, std::string_view window,
                                std::string_view step) const;

  const CostApiOptions options_;
  const std::shared_ptr<const observe::CostLedger> ledger_;  // thread-safe
};

}  // namespace strata::server
