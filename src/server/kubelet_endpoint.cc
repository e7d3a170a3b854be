#include "server/kubelet_endpoint.h"

#include <nlohmann/json.hpp>

#include "api/resource_catalog.h"
#include "kube/node_access_review.h"
#include "server/pod_logs.h"

namespace strata::server {
namespace {

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

Result<std::unique_ptr<kube::KubeletServer>> StartKubeletEndpoint(const store::Store& store,
                                                                  kube::Client& client,
                                                                  const std::string& pods_dir,
                                                                  KubeletEndpointOptions options) {
  kube::KubeletServerOptions server;
  server.host = options.host;
  server.port = options.port;
  server.client_ca_pem = options.client_ca_pem.empty() ? client.ca_pem() : options.client_ca_pem;
  if (server.client_ca_pem.empty()) {
    return Err(FailedPreconditionError(
        "the kubelet endpoint needs the CA of the API server's kubelet client certificate: the "
        "kubeconfig names none (it trusts the system's CAs); give --kubelet-client-ca-file"));
  }
  auto reviewer = std::make_shared<kube::NodeAccessReviewer>(&client, &RealClock::Instance());
  const store::Store* pods = &store;
  server.authorize = [reviewer, pods, fallback = options.default_node](
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
  auto logs = std::make_shared<PodLogs>(store, pods_dir);
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
  return kube::KubeletServer::Start(std::move(server));
}

}  // namespace strata::server
