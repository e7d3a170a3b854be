#include "server/cost_api.h"

#include <fmt/format.h>

#include <charconv>

#include "api/api_status.h"
#include "api/duration.h"
#include "server/rest_api.h"

namespace strata::server {
namespace {

constexpr Duration kMaxWindow = std::chrono::hours(24 * 366);

// A window or step: a Go duration ("24h", "90m") or whole days ("7d"), from `least` to
// kMaxWindow. InvalidArgument naming `parameter` otherwise.
Result<Duration> ParseSpan(std::string_view parameter, std::string_view text, Duration least) {
  std::optional<Duration> span;
  if (text.size() > 1 && text.back() == 'd') {
    int64_t days = 0;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size() - 1, days);
    if (error == std::errc() && end == text.data() + text.size() - 1 && days <= 366) {
      span = std::chrono::hours(24 * days);
    }
  } else if (Result<Duration> parsed = api::ParseDuration(text)) {
    span = *parsed;
  }
  if (!span || *span < least || *span > kMaxWindow) {
    return Err(InvalidArgumentError(
        fmt::format("{} \"{}\": expected a duration from {} to 8784h (366d), such as 24h or 7d",
                    parameter, text, api::FormatDuration(least))));
  }
  return *span;
}

}  // namespace

CostApi::CostApi(std::shared_ptr<const observe::CostLedger> ledger, CostApiOptions options)
    : options_(std::move(options)), ledger_(std::move(ledger)) {}

Result<nlohmann::json> CostApi::Report(std::string_view by, std::string_view window_text,
                                       std::string_view step_text) const {
  ASSIGN_OR_RETURN(observe::CostDimension dimension, observe::ParseCostDimension(by));
  Duration window = options_.default_window;
  if (!window_text.empty()) {
    ASSIGN_OR_RETURN(window, ParseSpan("window", window_text, std::chrono::seconds(1)));
  }
  std::optional<Duration> step;
  if (!step_text.empty()) {
    ASSIGN_OR_RETURN(step, ParseSpan("step", step_text, std::chrono::seconds(1)));
  }
  const TimePoint now = options_.clock->Now();
  TimePoint window_start = now - window;
  if (step) {
    window_start = observe::StepStart(window_start, *step);
    const int64_t steps = (now - window_start + *step - Duration(1)) / *step;
    if (steps > kMaxSteps) {
      return Err(InvalidArgumentError(fmt::format(
          "step \"{}\": the window {} holds {} steps of it; at most {}: take a longer step",
          step_text, window_text.empty() ? api::FormatDuration(window) : window_text, steps,
          kMaxSteps)));
    }
  }
  ASSIGN_OR_RETURN(std::vector<observe::CostPod> pods, ledger_->Read(window_start, now));
  std::map<std::string, double> tokens;
  if (options_.service_tokens) tokens = options_.service_tokens(window_start, now);
  nlohmann::json body = observe::CostReportToJson(
      observe::ComputeCost(options_.currency, pods, dimension, window_start, now, tokens));
  if (step) {
    body["series"] = observe::CostSeriesToJson(observe::ComputeCostSeries(
        pods, dimension, window_start, now, *step, options_.service_tokens));
  }
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
  auto parameter = [&](const char* name, std::string_view otherwise) -> std::string {
    auto it = query.find(name);
    return it == query.end() ? std::string(otherwise) : it->second;
  };
  Result<nlohmann::json> body =
      Report(parameter("by", "team"), parameter("window", ""), parameter("step", ""));
  if (!body) return JsonReply(HttpStatusFor(body.error().code()), api::StatusObject(body.error()));
  return JsonReply(200, *body);
}

}  // namespace strata::server
