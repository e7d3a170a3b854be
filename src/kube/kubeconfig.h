#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

// Where a Kubernetes client finds its API server and credentials: kubeconfig files (what kubectl
// reads) and the in-cluster service account. The loading rules are client-go's (clientcmd and
// rest.InClusterConfig): an explicit --kubeconfig file, else the files listed in $KUBECONFIG
// (merged, the first to set a name or current-context wins), else ~/.kube/config, else the
// pod's service account when KUBERNETES_SERVICE_HOST is set.

namespace strata::kube {

// Everything a Client needs to reach one API server as one identity, with file contents already
// read (certificates as PEM text). A plain value; thread-compatible.
struct KubeConfig {
  // "https://127.0.0.1:6443", optionally with a path prefix. Always https: strata refuses to
  // send credentials in clear text.
  std::string server;
  // The name the server's certificate must carry, when it differs from the server's host
  // (kubeconfig's tls-server-name). Empty: the host of `server`.
  std::string tls_server_name;
  // The CA bundle that signs the server's certificate. Empty: the system's trusted roots.
  std::string ca_pem;
  // The client certificate (chain) and its private key, both PEM; both empty or both set.
  std::string client_certificate_pem;
  std::string client_key_pem;
  // A bearer token. With bearer_token_file set, the token is read from that file and re-read
  // as it rotates (a projected service-account token is replaced about hourly); bearer_token
  // then holds the contents read at load time.
  std::string bearer_token;
  std::string bearer_token_file;
  // Impersonation (kubeconfig's as / as-groups): requests act as this user and groups.
  std::string impersonate_user;
  std::vector<std::string> impersonate_groups;
  // The context's namespace ("default" when the context names none; in a pod, the pod's).
  std::string namespace_name = "default";
  // Where this came from, for messages: "kubeconfig /root/.kube/config, context kind-a" or
  // "in-cluster service account".
  std::string source;
};

// What LoadKubeConfig reads the environment through; the defaults read the process's.
struct KubeConfigEnvironment {
  // Returns the environment variable `name`, or nullopt when unset.
  std::function<std::optional<std::string>(const char* name)> getenv;
  // Where the in-cluster service account's token, ca.crt and namespace live.
  std::string service_account_dir = "/var/run/secrets/kubernetes.io/serviceaccount";

  static KubeConfigEnvironment Process();
};

struct KubeConfigOptions {
  // --kubeconfig FILE. When set, only this file is read, and it must exist.
  std::string explicit_path;
  // --context NAME; empty means the file's current-context.
  std::string context;
};

// Loads the configuration by client-go's rules (see the top of this file). Errors:
// InvalidArgument naming the file and field ("kubeconfig /x/config: users[\"admin\"]: ...")
// for a malformed file, a missing context, cluster or user, or a credential strata does not
// support (exec and auth-provider plugins, basic auth, insecure-skip-tls-verify);
// NotFound when an explicit file does not exist or a referenced file cannot be read;
// FailedPrecondition when there is no kubeconfig at all and not running in a pod.
Result<KubeConfig> LoadKubeConfig(const KubeConfigOptions& options,
                                  const KubeConfigEnvironment& environment);
Result<KubeConfig> LoadKubeConfig(const KubeConfigOptions& options = {});

// Parses the kubeconfig files `texts` (pairs of file name and contents, first wins, as in
// $KUBECONFIG) and resolves `context` (empty: current-context). Relative file references
// (certificate-authority, client-certificate, client-key, tokenFile) are read relative to the
// directory of the file that names them. Errors as LoadKubeConfig's.
Result<KubeConfig> ParseKubeConfig(const std::vector<std::pair<std::string, std::string>>& texts,
                                   std::string_view context = "");

// The configuration of a process running in a pod (rest.InClusterConfig): the API server at
// KUBERNETES_SERVICE_HOST:KUBERNETES_SERVICE_PORT, the service account's CA, token (as
// bearer_token_file, so it is re-read when it rotates) and namespace. FailedPrecondition when
// the variables are unset; NotFound when the token or CA file cannot be read.
Result<KubeConfig> LoadInClusterConfig(const KubeConfigEnvironment& environment);

// Standard base64 (RFC 4648, with padding; whitespace ignored), as kubeconfig's *-data fields
// hold. nullopt when `text` is not valid base64.
std::optional<std::string> DecodeBase64(std::string_view text);

}  // namespace strata::kube
