#include "api/service.h"

namespace strata::api {

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

}  // namespace strata::api
