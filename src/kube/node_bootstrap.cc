#include "kube/node_bootstrap.h"

#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <utility>

#include "common/atomic_file.h"
#include "common/base64.h"
#include "kube/client.h"
#include "kube/kubeconfig.h"
#include "net/client_certificate.h"

namespace strata::kube {
namespace {

using Json = nlohmann::json;

const GroupVersionResource kCertificateSigningRequests{"certificates.k8s.io", "v1",
                                                       "certificatesigningrequests"};
constexpr char kKubeletClientSigner[] = "kubernetes.io/kube-apiserver-client-kubelet";

std::string NodeUser(const std::string& node_name) { return "system:node:" + node_name; }

// Whether `path` already holds this node's certificate, good for longer than renew_before.
bool StillGood(const NodeBootstrap& bootstrap, const Clock& clock) {
  if (!std::filesystem::exists(bootstrap.kubeconfig_path)) return false;
  KubeConfigOptions options;
  options.explicit_path = bootstrap.kubeconfig_path;
  Result<KubeConfig> config = LoadKubeConfig(options);
  if (!config || config->client_certificate_pem.empty()) return false;
  Result<net::CertificateFacts> facts = net::ReadCertificate(config->client_certificate_pem);
  return facts && facts->common_name == NodeUser(bootstrap.node_name) &&
         facts->not_after - clock.Now() > bootstrap.renew_before;
}

// The certificate of the request `csr` once signed; "" while it waits; an error once denied.
Result<std::string> Issued(const Json& csr) {
  const Json status = csr.value("status", Json::object());
  for (const Json& condition : status.value("conditions", Json::array())) {
    const std::string type = condition.value("type", "");
    if ((type == "Denied" || type == "Failed") && condition.value("status", "True") == "True") {
      return Err(PermissionDeniedError(
          fmt::format("certificate request {} was {}: {} {}", csr["metadata"].value("name", ""),
                      type == "Denied" ? "denied" : "not signed", condition.value("reason", ""),
                      condition.value("message", ""))));
    }
  }
  const std::string certificate = status.value("certificate", "");
  if (certificate.empty()) return std::string();
  std::optional<std::string> pem = Base64Decode(certificate);
  if (!pem) return Err(InvalidArgumentError("status.certificate: not base64"));
  return *pem;
}

// The node's kubeconfig, its certificate asked for and signed (EnsureNodeCredentials).
Result<Json> NodeKubeconfig(const NodeBootstrap& bootstrap, const Clock& clock) {
  KubeConfigOptions boot_options;
  boot_options.explicit_path = bootstrap.bootstrap_kubeconfig_path;
  ASSIGN_OR_RETURN(KubeConfig boot, LoadKubeConfig(boot_options));
  ASSIGN_OR_RETURN(std::unique_ptr<Client> client, Client::Create(boot));
  ASSIGN_OR_RETURN(auto request,
                   net::ClientCertificateRequest(NodeUser(bootstrap.node_name), {"system:nodes"}));
  const auto& [request_pem, key_pem] = request;
  Json csr = {{"apiVersion", "certificates.k8s.io/v1"},
              {"kind", "CertificateSigningRequest"},
              {"metadata", {{"generateName", "node-csr-" + bootstrap.node_name + "-"}}},
              {"spec",
               {{"request", Base64Encode(request_pem)},
                {"signerName", kKubeletClientSigner},
                {"usages", {"digital signature", "client auth"}}}}};
  ASSIGN_OR_RETURN(Json created, client->Create(kCertificateSigningRequests, "", csr));
  const std::string name = created["metadata"].value("name", "");
  const TimePoint deadline = clock.Now() + bootstrap.wait;
  std::string certificate;
  Json seen = std::move(created);
  while (true) {
    ASSIGN_OR_RETURN(certificate, Issued(seen));
    if (!certificate.empty()) break;
    const Duration left = deadline - clock.Now();
    if (left <= Duration::zero()) {
      return Err(DeadlineExceededError(fmt::format(
          "certificate request {} for {} was not approved and signed within {} s (approve it: "
          "kubectl certificate approve {})",
          name, NodeUser(bootstrap.node_name),
          std::chrono::duration_cast<std::chrono::seconds>(bootstrap.wait).count(), name)));
    }
    // Watch it from the version read until it changes, then read it again.
    WatchOptions watch;
    watch.field_selector = "metadata.name=" + name;
    watch.resource_version = seen["metadata"].value("resourceVersion", "");
    ASSIGN_OR_RETURN(std::unique_ptr<WatchStream> stream,
                     client->Watch(kCertificateSigningRequests, "", watch));
    (void)stream->Next(std::min<Duration>(left, std::chrono::seconds(10)));
    ASSIGN_OR_RETURN(seen, client->Get(kCertificateSigningRequests, "", name));
  }
  Json config = {
      {"apiVersion", "v1"},
      {"kind", "Config"},
      {"clusters",
       {{{"name", "cluster"},
         {"cluster",
          {{"server", boot.server}, {"certificate-authority-data", Base64Encode(boot.ca_pem)}}}}}},
      {"users",
       {{{"name", NodeUser(bootstrap.node_name)},
         {"user",
          {{"client-certificate-data", Base64Encode(certificate)},
           {"client-key-data", Base64Encode(key_pem)}}}}}},
      {"contexts",
       {{{"name", "node"},
         {"context", {{"cluster", "cluster"}, {"user", NodeUser(bootstrap.node_name)}}}}}},
      {"current-context", "node"}};
  if (boot.ca_pem.empty()) config["clusters"][0]["cluster"].erase("certificate-authority-data");
  if (!boot.tls_server_name.empty()) {
    config["clusters"][0]["cluster"]["tls-server-name"] = boot.tls_server_name;
  }
  return config;
}

}  // namespace

Status EnsureNodeCredentials(const NodeBootstrap& bootstrap, const Clock& clock) {
  if (StillGood(bootstrap, clock)) return Status::Ok();
  Result<Json> config = NodeKubeconfig(bootstrap, clock);
  if (!config) return config.error();
  // JSON is YAML: kubectl and the agent read it as any kubeconfig.
  return ReplaceFileAtomically(bootstrap.kubeconfig_path, config->dump(2) + "\n", 0600);
}

}  // namespace strata::kube
