#include "gateway/routing_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <charconv>

namespace strata::gateway {
namespace {

// A replica named by `id` ("host:port", validated), its address resolved. Resolving here, on
// the caller's thread, keeps DNS off the request path.
Result<std::shared_ptr<EndpointRuntime>> NewRuntime(const std::string& id, const std::string& path,
                                                    uint64_t serial) {
  auto runtime = std::make_shared<EndpointRuntime>();
  runtime->id = id;
  runtime->serial = serial;
  const size_t colon = id.rfind(':');
  runtime->host = id.substr(0, colon);
  std::from_chars(id.data() + colon + 1, id.data() + id.size(), runtime->port);
  boost::asio::io_context io;
  boost::asio::ip::tcp::resolver resolver(io);
  boost::system::error_code ec;
  auto results = resolver.resolve(runtime->host, std::to_string(runtime->port), ec);
  if (ec || results.empty()) {
    return Err(InvalidArgumentError(fmt::format("{}: cannot resolve \"{}\": {}", path, id,
                                                ec ? ec.message() : std::string("no address"))));
  }
  runtime->address = results.begin()->endpoint();
  return runtime;
}

}  // namespace

Result<RoutingTableBuilder::Built> RoutingTableBuilder::Build(std::vector<ModelConfig> models) {
  RETURN_IF_ERROR(ValidateModels(models));
  // Resolve every new replica first, so that a failure leaves everything as it was.
  std::map<std::string, std::shared_ptr<EndpointRuntime>> endpoints;
  Built built;
  uint64_t serial = next_serial_;
  for (size_t m = 0; m < models.size(); ++m) {
    for (size_t v = 0; v < models[m].versions.size(); ++v) {
      const std::vector<std::string>& ids = models[m].versions[v].endpoints;
      for (size_t e = 0; e < ids.size(); ++e) {
        if (endpoints.contains(ids[e])) continue;
        if (auto kept = endpoints_.find(ids[e]); kept != endpoints_.end()) {
          endpoints.emplace(ids[e], kept->second);
          continue;
        }
        ASSIGN_OR_RETURN(
            auto runtime,
            NewRuntime(ids[e], fmt::format("models[{}].versions[{}].endpoints[{}]", m, v, e),
                       serial++));
        built.added.push_back(runtime);
        endpoints.emplace(ids[e], std::move(runtime));
      }
    }
  }
  next_serial_ = serial;

  // Each replica serves the adapters of every model that names it.
  std::map<std::string, std::vector<std::string>> adapters;
  for (const ModelConfig& model : models) {
    for (const VersionConfig& version : model.versions) {
      for (const std::string& id : version.endpoints) {
        std::vector<std::string>& served = adapters[id];
        for (const std::string& adapter : model.adapters) {
          if (std::find(served.begin(), served.end(), adapter) == served.end()) {
            served.push_back(adapter);
          }
        }
      }
    }
  }

  auto table = std::make_shared<RoutingTable>(std::move(models));
  table->generation = ++generation_;
  for (const ModelConfig& model : table->models) {
    auto& routed_versions = table->versions.emplace_back();
    for (const VersionConfig& version : model.versions) {
      RoutedVersion& routed = routed_versions.emplace_back();
      auto& counters = versions_[{model.name, version.name}];
      if (counters == nullptr) {
        counters = std::make_shared<VersionCounters>();
        counters->model = model.name;
        counters->version = version.name;
        counters->serial = versions_.size();
      }
      routed.counters = counters;
      for (const std::string& id : version.endpoints) {
        routed.endpoints.push_back(RoutedEndpoint{endpoints.at(id), adapters.at(id)});
      }
    }
  }
  for (auto& [id, runtime] : endpoints_) {
    if (endpoints.contains(id)) continue;
    runtime->routed.store(false);
    departed_[id].push_back(runtime);
  }
  for (auto it = departed_.begin(); it != departed_.end();) {
    std::erase_if(it->second, [](const auto& runtime) { return runtime.expired(); });
    it = it->second.empty() ? departed_.erase(it) : std::next(it);
  }
  for (auto& [id, runtime] : endpoints) table->endpoints.push_back(runtime);
  endpoints_ = std::move(endpoints);
  built.table = std::move(table);
  return built;
}

int64_t RoutingTableBuilder::InFlight(const std::string& id) const {
  int64_t in_flight = 0;
  if (auto it = endpoints_.find(id); it != endpoints_.end()) in_flight += it->second->in_flight;
  if (auto it = departed_.find(id); it != departed_.end()) {
    for (const auto& weak : it->second) {
      if (auto runtime = weak.lock()) in_flight += runtime->in_flight;
    }
  }
  return in_flight;
}

}  // namespace strata::gateway
