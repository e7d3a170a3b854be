#include "api/node_lease.h"

#include <fmt/format.h>

#include "common/field_errors.h"

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

std::string NodeLeaseJson(std::string_view node_name, TimePoint renewed, Duration lease_duration) {
  const std::string name = Quoted(node_name);
  return fmt::format(
      R"({{"apiVersion":"{}","kind":"Lease","metadata":{{"name":{},"namespace":"{}"}},)"
      R"("spec":{{"holderIdentity":{},"leaseDurationSeconds":{},"renewTime":"{}"}}}})",
      kNodeLeaseApiVersion, name, kNodeLeaseNamespace, name,
      std::chrono::duration_cast<std::chrono::seconds>(lease_duration).count(),
      FormatRfc3339Micro(renewed));
}

}  // namespace strata::api
