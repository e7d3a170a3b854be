#include "server/history_api.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "api/api_status.h"
#include "api/duration.h"
#include "server/rest_api.h"

namespace strata::server {
namespace {

std::vector<std::string_view> SplitPath(std::string_view path) {
  std::vector<std::string_view> parts;
  while (!path.empty()) {
    size_t slash = path.find('/');
    std::string_view part = path.substr(0, slash);
    if (!part.empty()) parts.push_back(part);
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return parts;
}

// The store's scope for the path after kPath, and the namespace it is in ("" for queues and
// the cluster); NotFound for a path that names none.
Result<std::pair<std::string, std::string>> ScopeOf(std::string_view rest) {
  std::vector<std::string_view> parts = SplitPath(rest);
  auto scope = [&](std::string_view ns) {
    std::string joined;
    for (std::string_view part : parts) {
      if (part == "namespaces") continue;
      if (!joined.empty()) joined += '/';
      joined += part;
    }
    return std::make_pair(joined, std::string(ns));
  };
  if (parts.size() == 1 && parts[0] == "cluster") return scope("");
  if ((parts.size() == 1 || parts.size() == 2) && parts[0] == "queues") return scope("");
  if (parts.size() == 4 && parts[0] == "namespaces" &&
      (parts[2] == "services" || parts[2] == "jobs")) {
    // Stored as services/NS/NAME: the kind first, so that a prefix reads one kind.
    return std::make_pair(
        std::string(parts[2]) + "/" + std::string(parts[1]) + "/" + std::string(parts[3]),
        std::string(parts[1]));
  }
  return Err(NotFoundError(
      fmt::format("history \"{}\": expected cluster, queues[/NAME], namespaces/NS/services/NAME or "
                  "namespaces/NS/jobs/NAME",
                  rest)));
}

Status Authorize(const Caller& caller, const std::string& scope, const std::string& ns) {
  if (caller.admin()) return Status::Ok();
  if (scope.starts_with("queues")) return Status::Ok();
  const bool own = !ns.empty() && std::find(caller.namespaces.begin(), caller.namespaces.end(),
                                            ns) != caller.namespaces.end();
  if (own) return Status::Ok();
  std::string namespaces;
  for (const std::string& n : caller.namespaces) namespaces += (namespaces.empty() ? "" : ", ") + n;
  return PermissionDeniedError(
      fmt::format("user \"{}\" may read the history of namespaces {} and of queues only, not of {}",
                  caller.name, namespaces, scope));
}

// A float sample as JSON: 6 significant digits (what a float holds), null for no reading.
nlohmann::json Value(double value) {
  if (std::isnan(value) || std::isinf(value)) return nullptr;
  return std::strtod(fmt::format("{:.6g}", value).c_str(), nullptr);
}

}  // namespace

HistoryApi::HistoryApi(std::shared_ptr<const history::SeriesStore> store, const Clock* clock)
    : store_(std::move(store)), clock_(clock) {}

std::optional<ApiReply> HistoryApi::Handle(const net::HttpRequest& request,
                                           const Caller& caller) const {
  std::string_view path = request.Path();
  if (!path.starts_with(kPath)) return std::nullopt;
  std::string_view rest = path.substr(kPath.size());
  if (!rest.empty() && rest[0] != '/') return std::nullopt;
  auto fail = [](const Status& status) {
    return JsonReply(HttpStatusFor(status.code()), api::StatusObject(status));
  };
  if (request.method != "GET") {
    return fail(UnimplementedError("method " + request.method + " is not allowed on " +
                                   std::string(kPath)));
  }
  Result<std::pair<std::string, std::string>> scope = ScopeOf(rest);
  if (!scope) return fail(scope.error());
  if (Status allowed = Authorize(caller, scope->first, scope->second); !allowed.ok()) {
    return fail(allowed);
  }
  const history::SeriesStoreOptions& options = store_->options();
  TimePoint since{};
  std::map<std::string, std::string> query = ParseQuery(request.target);
  if (auto window = query.find("window"); window != query.end()) {
    Result<Duration> parsed = api::ParseDuration(window->second);
    if (!parsed || *parsed <= Duration::zero()) {
      return fail(InvalidArgumentError("window \"" + window->second +
                                       "\": expected a positive duration such as 1h"));
    }
    since = clock_->Now() - *parsed;
  }
  history::HistoryRange range = store_->Read(scope->first, since);
  nlohmann::json body = {
      {"kind", "History"},
      {"apiVersion", "strata.dev/v1alpha1"},
      {"scope", scope->first},
      {"stepSeconds", std::chrono::duration<double>(options.step).count()},
      {"windowSeconds", std::chrono::duration<double>(options.window).count()},
  };
  nlohmann::json& times = body["times"] = nlohmann::json::array();
  for (TimePoint t : range.times) {
    times.push_back(std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count());
  }
  nlohmann::json& series = body["series"] = nlohmann::json::array();
  for (const history::HistoryRange::Series& s : range.series) {
    nlohmann::json labels = nlohmann::json::object();
    for (const auto& [name, value] : s.labels) labels[name] = value;
    nlohmann::json values = nlohmann::json::array();
    for (double v : s.values) values.push_back(Value(v));
    series.push_back(
        {{"scope", s.scope}, {"name", s.name}, {"labels", labels}, {"values", std::move(values)}});
  }
  nlohmann::json& events = body["events"] = nlohmann::json::array();
  for (const history::Event& e : range.events) {
    events.push_back({{"time", FormatRfc3339(e.time)},
                      {"scope", e.scope},
                      {"kind", e.kind},
                      {"fields", e.fields}});
  }
  return JsonReply(200, body);
}

}  // namespace strata::server
