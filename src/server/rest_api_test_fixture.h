#pragma once

// The REST API's tests' fixture: a RestApi behind a real listener over a memory store, and the
// manifests several tests apply.

#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>

#include "client/api_client.h"
#include "metrics/metrics.h"
#include "net/http_message.h"
#include "server/api_listener.h"
#include "server/rest_api.h"
#include "store/fault_injecting_store.h"
#include "store/store.h"

namespace strata::server {

inline constexpr char kJob[] = R"(apiVersion: strata.dev/v1alpha1
kind: Job
metadata:
  name: train
  namespace: team-a
spec:
  replicas: 2
  resources: {gpu: 8}
  template: {command: [python, train.py]}
)";

inline constexpr char kPyTorchJob[] = R"(apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: resnet
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers:
            - name: pytorch
              image: pytorch
              command: [python, train.py]
              resources: {limits: {nvidia.com/gpu: 8}}
)";

inline constexpr char kQueues[] = R"(apiVersion: strata.dev/v1alpha1
kind: ResourceFlavor
metadata: {name: h100}
---
apiVersion: strata.dev/v1alpha1
kind: Queue
metadata: {name: team-a}
spec:
  cohort: pool
  flavors:
    - name: h100
      resources: [{name: gpu, nominal: 32}]
)";

// A RestApi behind a real listener on an ephemeral loopback port, over a memory store.
class RestApiTest : public ::testing::Test {
 protected:
  void Start(RestApiOptions options = {}, size_t history_limit = 10000,
             size_t max_body_bytes = 64 * 1024) {
    store::StoreOptions store_options;
    store_options.history_limit = history_limit;
    store_ = store::NewMemoryStore(store_options);
    faults_ = std::make_unique<store::FaultInjectingStore>(*store_);
    if (options.tokens.empty()) options.tokens.push_back({kAdmin, "admin", {}});
    api_ = std::make_unique<RestApi>(*faults_, registry_, std::move(options));
    ApiListenerOptions listener_options;
    listener_options.max_body_bytes = max_body_bytes;
    listener_ = std::make_unique<ApiListener>(
        listener_options, [this](const net::HttpRequest& r) { return api_->Handle(r); });
    ASSERT_TRUE(listener_->Start().ok());
    client_ = Client(kAdmin);
  }

  static inline constexpr char kAdmin[] = "admin-token";

  std::unique_ptr<client::ApiClient> Client(std::string token) {
    auto client = client::ApiClient::Create("http://127.0.0.1:" + std::to_string(listener_->port()),
                                            std::move(token));
    EXPECT_TRUE(client.has_value());
    return std::move(*client);
  }

  // The reply of the API itself (no listener) to `method` on `target` as the admin, its status
  // code and its body as JSON (discarded when it is not JSON).
  std::pair<int, nlohmann::json> Send(std::string method, std::string target, std::string body = "",
                                      std::string content_type = "application/yaml",
                                      std::string accept = "application/json") {
    net::HttpRequest request;
    request.method = std::move(method);
    request.target = std::move(target);
    request.body = std::move(body);
    request.headers.push_back({"Content-Type", std::move(content_type)});
    request.headers.push_back({"Accept", std::move(accept)});
    request.headers.push_back({"Authorization", std::string("Bearer ") + kAdmin});
    ApiReply reply = api_->Handle(request);
    return {reply.response.status, nlohmann::json::parse(reply.response.body, nullptr, false)};
  }

  Result<nlohmann::json> Post(std::string_view path, std::string body) {
    return client_->Call("POST", path, std::move(body), "application/yaml");
  }

  metrics::Registry registry_;
  std::unique_ptr<store::Store> store_;
  // What the API writes through: a test may make one of its writes fail.
  std::unique_ptr<store::FaultInjectingStore> faults_;
  std::unique_ptr<RestApi> api_;
  std::unique_ptr<ApiListener> listener_;
  std::unique_ptr<client::ApiClient> client_;
};

}  // namespace strata::server
