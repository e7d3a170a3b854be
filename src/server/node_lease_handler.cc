// The REST API's node Leases (api/node_lease.h), kept in memory by controller::NodeLeases.
#include "api/node_lease.h"
#include "common/json_reader.h"
#include "server/rest_api.h"

namespace strata::server {
namespace {

// The metadata.name of the Lease `body` (nullopt when it names none), read strictly without
// building a document: a renewal arrives from every node every few seconds.
Result<std::optional<std::string>> LeaseBodyName(std::string_view body) {
  JsonReader reader(body);
  std::optional<std::string> name;
  if (reader.Peek() != JsonType::kObject) {
    return Err(InvalidArgumentError("request body: expected a Lease (a JSON object) or nothing"));
  }
  reader.BeginObject();
  std::string_view key;
  std::string scratch;
  while (reader.NextKey(&key, &scratch)) {
    if (key != "metadata") {
      reader.Skip();
      continue;
    }
    if (reader.Peek() != JsonType::kObject) {
      if (!reader.ok()) break;
      return Err(InvalidArgumentError("metadata: expected an object"));
    }
    reader.BeginObject();
    while (reader.NextKey(&key, &scratch)) {
      if (key != "name") {
        reader.Skip();
        continue;
      }
      std::string value;
      if (!reader.ReadString(&value)) {
        if (!reader.ok()) break;
        return Err(InvalidArgumentError("metadata.name: expected a string"));
      }
      name = std::move(value);
    }
  }
  Status finished = reader.Finish();
  if (!finished.ok()) return Err(InvalidArgumentError("request body: " + finished.message()));
  return name;
}

}  // namespace

Result<ApiReply> RestApi::NodeLease(const std::string& method, const std::string& node_name,
                                    const std::string& body) {
  if (options_.node_leases == nullptr) {
    return Err(NotFoundError("node Leases are not served by this API"));
  }
  if (method == "GET") {
    std::optional<TimePoint> renewed = options_.node_leases->Renewed(node_name);
    if (!renewed) {
      return Err(NotFoundError("leases.coordination.k8s.io \"" + node_name +
                               "\" not found (not renewed since the control plane started)"));
    }
    return JsonTextReply(200, api::NodeLeaseJson(node_name, *renewed));
  }
  if (method != "PUT") {
    return Err(UnimplementedError("method " + method +
                                  " is not allowed on a node Lease: GET it, or PUT to renew it"));
  }
  if (!body.empty()) {
    Result<std::optional<std::string>> named = LeaseBodyName(body);
    if (!named) return Err(named.error());
    if (*named && **named != node_name) {
      return Err(InvalidArgumentError("metadata.name: \"" + **named +
                                      "\" does not match the name in the request path \"" +
                                      node_name + "\""));
    }
  }
  // Only a node that exists has a Lease here, so the table stays one entry per node. The cache
  // may not have seen a node that joined a moment ago: the store has.
  const store::ObjectKey key{"Node", "", node_name};
  if (cache_.Get(key) == nullptr) {
    Result<store::Object> stored = store_.Get(key);
    if (!stored) return Err(stored.error());
  }
  const TimePoint now = options_.clock->Now();
  options_.node_leases->Renew(node_name, now);
  return JsonTextReply(200, api::NodeLeaseJson(node_name, now));
}

}  // namespace strata::server
