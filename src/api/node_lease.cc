#include "api/node_lease.h"

namespace strata::api {
namespace {

constexpr std::string_view kLeasesPrefix =
    "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/";

}  // namespace

std::string NodeLeasePath(std::string_view node_name) {
  return std::string(kLeasesPrefix) + std::string(node_name);
}

std::optional<std::string> NodeOfLeasePath(std::string_view path) {
  if (!path.starts_with(kLeasesPrefix)) return std::nullopt;
  std::string_view name = path.substr(kLeasesPrefix.size());
  if (name.empty() || name.find('/') != std::string_view::npos) return std::nullopt;
  return std::string(name);
}

nlohmann::json NodeLeaseObject(const std::string& node_name, TimePoint renewed,
                               Duration lease_duration) {
  return {{"apiVersion", kNodeLeaseApiVersion},
          {"kind", "Lease"},
          {"metadata", {{"name", node_name}, {"namespace", kNodeLeaseNamespace}}},
          {"spec",
           {{"holderIdentity", node_name},
            {"leaseDurationSeconds",
             std::chrono::duration_cast<std::chrono::seconds>(lease_duration).count()},
            {"renewTime", FormatRfc3339Micro(renewed)}}}};
}

}  // namespace strata::api
