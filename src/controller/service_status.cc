#include "controller/service_status.h"

#include "controller/status_json.h"

namespace strata::controller {

using status_json::Integer;
using status_json::Number;
using status_json::PutText;
using status_json::Text;

ServiceVersionStatus& ServiceStatus::Version(const std::string& name) {
  for (ServiceVersionStatus& version : versions) {
    if (version.name == name) return version;
  }
  versions.push_back({});
  versions.back().name = name;
  return versions.back();
}

const ServiceVersionStatus* ServiceStatus::FindVersion(const std::string& name) const {
  for (const ServiceVersionStatus& version : versions) {
    if (version.name == name) return &version;
  }
  return nullptr;
}

void ServiceStatus::Record(ScaleDecisionRecord record) {
  decisions.push_back(std::move(record));
  if (decisions.size() > kMaxDecisions) {
    decisions.erase(decisions.begin(), decisions.end() - kMaxDecisions);
  }
}

void ServiceStatus::AddColdStart(double seconds) {
  ++cold_starts_measured;
  cold_start_seconds += (seconds - cold_start_seconds) / static_cast<double>(cold_starts_measured);
}

ServiceStatus ReadServiceStatus(const nlohmann::json& body) {
  ServiceStatus status;
  if (!body.is_object()) return status;
  auto it = body.find("status");
  if (it == body.end() || !it->is_object()) return status;
  const nlohmann::json& s = *it;
  if (auto versions = s.find("versions"); versions != s.end() && versions->is_array()) {
    for (const nlohmann::json& v : *versions) {
      if (!v.is_object()) continue;
      ServiceVersionStatus version;
      version.name = Text(v, "name");
      version.desired_replicas = Integer(v, "desiredReplicas");
      version.replicas = Integer(v, "replicas");
      version.ready_replicas = Integer(v, "readyReplicas");
      version.starting_replicas = Integer(v, "startingReplicas");
      version.draining_replicas = Integer(v, "drainingReplicas");
      version.updated_replicas = Integer(v, "updatedReplicas");
      version.reason = Text(v, "reason");
      status.versions.push_back(std::move(version));
    }
  }
  if (auto decisions = s.find("decisions"); decisions != s.end() && decisions->is_array()) {
    for (const nlohmann::json& d : *decisions) {
      if (!d.is_object()) continue;
      status.decisions.push_back({Text(d, "time"), Text(d, "version"), Integer(d, "from"),
                                  Integer(d, "to"), Text(d, "reason")});
    }
  }
  status.cold_start_seconds = Number(s, "coldStartSeconds");
  status.cold_starts_measured = Integer(s, "coldStartsMeasured");
  return status;
}

void WriteServiceStatus(const ServiceStatus& status, nlohmann::json& body) {
  nlohmann::json s = nlohmann::json::object();
  int64_t replicas = 0;
  int64_t ready = 0;
  nlohmann::json versions = nlohmann::json::array();
  for (const ServiceVersionStatus& v : status.versions) {
    replicas += v.replicas;
    ready += v.ready_replicas;
    nlohmann::json item = {{"name", v.name},
                           {"desiredReplicas", v.desired_replicas},
                           {"replicas", v.replicas},
                           {"readyReplicas", v.ready_replicas},
                           {"startingReplicas", v.starting_replicas},
                           {"drainingReplicas", v.draining_replicas},
                           {"updatedReplicas", v.updated_replicas}};
    PutText(item, "reason", v.reason);
    versions.push_back(std::move(item));
  }
  s["replicas"] = replicas;
  s["readyReplicas"] = ready;
  if (!versions.empty()) s["versions"] = std::move(versions);
  if (!status.decisions.empty()) {
    nlohmann::json decisions = nlohmann::json::array();
    for (const ScaleDecisionRecord& d : status.decisions) {
      nlohmann::json item = {
          {"time", d.time}, {"version", d.version}, {"from", d.from}, {"to", d.to}};
      PutText(item, "reason", d.reason);
      decisions.push_back(std::move(item));
    }
    s["decisions"] = std::move(decisions);
  }
  if (status.cold_starts_measured > 0) {
    s["coldStartSeconds"] = status.cold_start_seconds;
    s["coldStartsMeasured"] = status.cold_starts_measured;
  }
  body["status"] = std::move(s);
}

}  // namespace strata::controller
