#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"

// The HTTPS endpoint a kubelet serves the API server, for a node agent that stands in for one:
// what `kubectl logs` reaches through the API server's node proxy. Boost.Asio/Beast and OpenSSL
// stay inside kubelet_server.cc.

namespace strata::kube {

// Who is asking, from the client certificate the TLS handshake verified.
struct KubeletCaller {
  std::string user;                 // the certificate's subject CN
  std::vector<std::string> groups;  // its subject O entries
};

// GET /containerLogs/{namespace}/{pod}/{container}?follow=true&tailLines=N... (the only path the
// server routes; anything else is 404).
struct ContainerLogRequest {
  std::string namespace_name;
  std::string pod;
  std::string container;
  std::map<std::string, std::string> query;  // decoded
};

// The answer: a status with a plain-text message, or 200 with a body read over time.
struct ContainerLogReply {
  int status = 200;
  std::string message;  // the body of an answer other than 200
  // Called on the server's thread, must not block: what is there now (possibly nothing), and
  // *finished once the body is complete. Polled every second while it has nothing.
  std::function<std::string(bool* finished)> read;
};

struct KubeletServerOptions {
  std::string host = "127.0.0.1";
  int port = 0;  // 0: the kernel picks one; see port()
  // The CA (PEM) that signs the clients allowed in: the API server's kubelet client
  // certificate (kube-apiserver --kubelet-client-certificate). A client without a certificate
  // it signed fails the handshake.
  std::string client_ca_pem;
  // The serving certificate and key (PEM); both empty: a self-signed one for `host`, as a
  // kubelet makes without --tls-cert-file (the API server does not verify kubelets' serving
  // certificates unless given --kubelet-certificate-authority).
  std::string certificate_pem;
  std::string key_pem;
  // Whether `caller` may read these logs (a kubelet asks for nodes/proxy of the pod's node:
  // NodeAccessReviewer): OK, or an error saying why (answered 403). Called on the server's
  // thread; may block briefly (a SubjectAccessReview), so answers are to be cached.
  std::function<Status(const KubeletCaller& caller, const ContainerLogRequest& request)> authorize;
  std::function<ContainerLogReply(const ContainerLogRequest& request)> container_logs;
  // The handshake and the request head must arrive within this; a stream with nothing to send
  // is kept open as long as the client stays.
  Duration request_timeout = std::chrono::seconds(30);
  size_t max_connections = 64;  // more wait in the listen queue
};

// A kubelet's HTTPS server on one event-loop thread: TLS 1.2+, client certificates required and
// verified against client_ca_pem, each request authorized, container logs whole or followed
// (chunked). Stop ends every response in flight.
//
// Owned by the node agent's host. Start and Stop from one thread.
class KubeletServer {
 public:
  ~KubeletServer();  // Stop()
  KubeletServer(const KubeletServer&) = delete;
  KubeletServer& operator=(const KubeletServer&) = delete;

  // Errors: InvalidArgument for bad certificates or keys (naming which); Unavailable when the
  // address cannot be bound.
  static Result<std::unique_ptr<KubeletServer>> Start(KubeletServerOptions options);

  int port() const;
  void Stop();

 private:
  struct Impl;
  explicit KubeletServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace strata::kube
