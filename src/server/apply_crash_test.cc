// The multi-document apply writes one object at a time: a failure at any write names the
// documents applied before it, and applying the same body again ends where an apply without
// faults ends.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "server/object_codec.h"
#include "server/rest_api.h"
#include "store/fault_injecting_store.h"

namespace strata::server {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kBody[] = R"(apiVersion: strata.dev/v1alpha1
kind: ResourceFlavor
metadata: {name: h100}
---
apiVersion: strata.dev/v1alpha1
kind: Queue
metadata: {name: team-a}
spec:
  flavors: [{name: h100, resources: [{name: gpu, nominal: 32}]}]
---
apiVersion: strata.dev/v1alpha1
kind: Job
metadata: {name: train, namespace: team-a}
spec:
  replicas: 2
  queue: team-a
  resources: {gpu: 8}
  template: {command: [python, train.py]}
---
apiVersion: strata.dev/v1alpha1
kind: Service
metadata: {name: llm, namespace: team-a}
spec:
  model: llama
  engine: {command: [strata, engine-sim]}
  resources: {gpu: 1}
)";

constexpr const char* kNames[] = {"ResourceFlavor \"h100\"", "Queue \"team-a\"",
                                  "Job \"team-a/train\"", "Service \"team-a/llm\""};

// Every object's kind, name and spec, as text.
std::string Objects(const store::Store& store) {
  std::string out;
  for (const char* kind : {"ResourceFlavor", "Queue", "Job", "Service"}) {
    Result<store::ListResult> listed = store.List({kind, std::nullopt, {}});
    EXPECT_TRUE(listed.has_value());
    for (const store::Object& object : listed->items) {
      out +=
          object.key.Describe() + " " + object.body.value("spec", nlohmann::json()).dump() + "\n";
    }
  }
  return out;
}

RestApiOptions Options() {
  RestApiOptions options;
  options.tokens.push_back({"admin", "admin", {}});
  return options;
}

// The namespace the documents are in, made beforehand so that each write the test counts is
// one document's.
void MakeNamespace(store::Store& store) {
  api::Namespace ns;
  ns.metadata.name = "team-a";
  Result<store::Object> object = ToStoreObject(api::Object(std::move(ns)));
  ASSERT_TRUE(object);
  ASSERT_TRUE(store.Create(std::move(*object)));
}

net::HttpRequest ApplyRequest() {
  net::HttpRequest request;
  request.method = "POST";
  request.target = std::string(RestApi::kApplyPath);
  request.headers.push_back({"Content-Type", "application/yaml"});
  request.headers.push_back({"Authorization", "Bearer admin"});
  request.body = kBody;
  return request;
}

TEST(ApplyCrashTest, AFailedWriteNamesWhatWasAppliedAndApplyingAgainFinishes) {
  std::string clean;
  {
    std::unique_ptr<store::Store> store = store::NewMemoryStore({});
    MakeNamespace(*store);
    metrics::Registry registry;
    RestApi api(*store, registry, Options());
    ASSERT_EQ(api.Handle(ApplyRequest()).response.status, 200);
    clean = Objects(*store);
  }
  for (int n = 1; n <= 4; ++n) {
    SCOPED_TRACE("write " + std::to_string(n));
    std::unique_ptr<store::Store> base = store::NewMemoryStore({});
    MakeNamespace(*base);
    store::FaultInjectingStore faulty(*base);
    metrics::Registry registry;
    RestApi api(faulty, registry, Options());
    faulty.FailAt(n, store::FaultInjectingStore::Fault::kDie);
    ApiReply failed = api.Handle(ApplyRequest());
    EXPECT_EQ(failed.response.status, 503);
    const std::string message =
        nlohmann::json::parse(failed.response.body).value("message", std::string());
    EXPECT_THAT(message, HasSubstr("document " + std::to_string(n) + " (" + kNames[n - 1]));
    for (int applied = 1; applied < n; ++applied) {
      EXPECT_THAT(message, HasSubstr(std::string(kNames[applied - 1]) + " created"));
    }
    if (n == 1) {
      EXPECT_THAT(message, HasSubstr("no document was applied"));
    }
    for (int later = n + 1; later <= 4; ++later) {
      EXPECT_THAT(message, Not(HasSubstr(kNames[later - 1])));
    }
    faulty.Revive();
    ApiReply again = api.Handle(ApplyRequest());
    ASSERT_EQ(again.response.status, 200) << again.response.body;
    EXPECT_EQ(Objects(*base), clean);
  }
}

}  // namespace
}  // namespace strata::server
