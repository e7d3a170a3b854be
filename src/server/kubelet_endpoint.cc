#include "server/kubelet_endpoint.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "api/annotations.h"
#include "api/resource_catalog.h"
#include "kube/node_access_review.h"
#include "server/control_plane.h"
#include "server/pod_logs.h"

namespace strata::server {
namespace {

// An IPv6 address in brackets, as in a URL; anything else as it is.
std::string Bracketed(const std::string& host) {
  return host.find(':') != std::string::npos ? "[" + host + "]" : host;
}

int HttpStatusOf(StatusCode code) {
  switch (code) {
    case StatusCode::kNotFound:
      return 404;
    case StatusCode::kInvalidArgument:
    case StatusCode::kFailedPrecondition:
      return 400;
    case StatusCode::kPermissionDenied:
      return 403;
    default:
      return 500;
  }
}

}  // namespace

Result<std::unique_ptr<kube::KubeletServer>> StartNodesKubelet(
    const store::Store& store, kube::Client& client, const KubeletEndpointOptions& options,
    std::vector<api::Node>& nodes, std::ostream& out) {
  Result<std::pair<std::string, int>> address = ParseListenAddress(options.listen);
  if (!address) {
    return Err(InvalidArgumentError("--kubelet-listen: " + address.error().message()));
  }
  kube::KubeletServerOptions server;
  server.host = address->first;
  server.port = address->second;
  server.client_ca_pem = client.ca_pem();
  if (!options.client_ca_file.empty()) {
    std::ifstream file(options.client_ca_file);
    std::stringstream pem;
    pem << file.rdbuf();
    if (!file || pem.str().empty()) {
      return Err(InvalidArgumentError("--kubelet-client-ca-file \"" + options.client_ca_file +
                                      "\": cannot be read"));
    }
    server.client_ca_pem = pem.str();
  }
  if (server.client_ca_pem.empty()) {
    return Err(FailedPreconditionError(
        "the kubelet endpoint needs the CA of the API server's kubelet client certificate: the "
        "kubeconfig names none (it trusts the system's CAs); give --kubelet-client-ca-file"));
  }
  auto reviewer = std::make_shared<kube::NodeAccessReviewer>(&client, &RealClock::Instance());
  const store::Store* pods = &store;
  const std::string first_node = nodes.empty() ? "" : nodes.front().metadata.name;
  server.authorize = [reviewer, pods, fallback = first_node](
                         const kube::KubeletCaller& caller,
                         const kube::ContainerLogRequest& request) -> Status {
    std::string node = fallback;
    Result<store::Object> pod = pods->Get({"Pod", request.namespace_name, request.pod});
    if (pod) {
      std::string bound =
          pod->body.value(nlohmann::json::json_pointer("/spec/nodeName"), std::string());
      if (!bound.empty()) node = bound;
    }
    return reviewer->Review(caller, node, "proxy");
  };
  auto logs = std::make_shared<PodLogs>(store, options.pods_dir);
  server.container_logs = [logs](const kube::ContainerLogRequest& request) {
    api::ResourcePath path;
    path.namespace_name = request.namespace_name;
    path.name = request.pod;
    path.subresource = "log";
    std::map<std::string, std::string> query = request.query;
    query["container"] = request.container;
    kube::ContainerLogReply reply;
    Result<ApiReply> served = logs->Serve(path, query);
    if (!served) {
      reply.status = HttpStatusOf(served.error().code());
      reply.message = served.error().message();
      return reply;
    }
    if (served->stream) {
      std::shared_ptr<ResponseStream> stream = std::move(served->stream);
      reply.read = [stream](bool* finished) { return stream->Read(finished); };
      return reply;
    }
    reply.read = [body = std::move(served->response.body)](bool* finished) mutable {
      *finished = true;
      return std::move(body);
    };
    return reply;
  };
  ASSIGN_OR_RETURN(std::unique_ptr<kube::KubeletServer> started,
                   kube::KubeletServer::Start(std::move(server)));
  const std::string& host = address->first;
  const bool any_address = host == "0.0.0.0" || host == "::";
  const std::string port = std::to_string(started->port());
  for (api::Node& node : nodes) {
    auto own = node.metadata.annotations.find(api::kNodeAddressAnnotation);
    std::string reached = !any_address                             ? host
                          : own != node.metadata.annotations.end() ? own->second
                                                                   : node.metadata.name;
    node.metadata.annotations[api::kKubeletEndpointAnnotation] = Bracketed(reached) + ":" + port;
  }
  out << "strata: kubelet endpoint (kubectl logs) on https://" << Bracketed(host) << ":" << port
      << "\n";
  return started;
}

}  // namespace strata::server
