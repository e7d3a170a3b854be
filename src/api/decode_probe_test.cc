#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/decoded_for_test.h"
#include "api/edited_for_test.h"
#include "api/encode.h"
#include "api/job.h"
#include "api/manifest.h"
#include "api/service.h"

namespace strata::api {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A Deployment whose server declares port 8000 as "http" and carries all three probes.
constexpr const char* kDeployment = R"(
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - name: server
          command: [python3, -m, http.server]
          ports: [{name: http, containerPort: 8000}]
          livenessProbe:
            httpGet:
              path: /healthz
              port: http
              scheme: HTTPS
              httpHeaders: [{name: X-Probe, value: liveness}]
            initialDelaySeconds: 5
            terminationGracePeriodSeconds: 2
          readinessProbe:
            tcpSocket: {port: 9000}
            periodSeconds: 2
            successThreshold: 2
          startupProbe:
            exec: {command: [cat, /tmp/started]}
            failureThreshold: 30
            timeoutSeconds: 3
)";

const ProcessTemplate& Engine(const std::vector<Object>& objects) {
  return objects.at(0).As<Service>()->spec.engine;
}

TEST(DecodeProbeTest, KubernetesProbesKeepTheirFieldsAndADeclaredPortIsTheReplicasOwn) {
  Result<std::vector<Object>> decoded = Decode(kDeployment);
  ASSERT_TRUE(decoded.has_value()) << decoded.error().message();
  const ProcessTemplate& t = Engine(*decoded);
  ASSERT_TRUE(t.liveness_probe.has_value());
  const Probe& live = *t.liveness_probe;
  EXPECT_EQ(live.action, ProbeAction::kHttpGet);
  EXPECT_EQ(live.port, 0);  // "http" is 8000, which strata gives the replica as its own port
  EXPECT_EQ(live.path, "/healthz");
  EXPECT_THAT(live.http_headers, ElementsAre(HttpHeader{"X-Probe", "liveness"}));
  EXPECT_EQ(live.scheme, "HTTPS");
  EXPECT_EQ(live.initial_delay_seconds, 5);
  EXPECT_EQ(live.period_seconds, 10);
  EXPECT_EQ(live.timeout_seconds, 1);
  EXPECT_EQ(live.failure_threshold, 3);
  EXPECT_EQ(live.success_threshold, 1);
  EXPECT_EQ(live.termination_grace_period_seconds, 2);
  ASSERT_TRUE(t.readiness_probe.has_value());
  EXPECT_EQ(t.readiness_probe->action, ProbeAction::kTcpSocket);
  EXPECT_EQ(t.readiness_probe->port, 9000);  // not declared: that port itself
  EXPECT_EQ(t.readiness_probe->success_threshold, 2);
  ASSERT_TRUE(t.startup_probe.has_value());
  EXPECT_EQ(t.startup_probe->action, ProbeAction::kExec);
  EXPECT_THAT(t.startup_probe->command, ElementsAre("cat", "/tmp/started"));
  EXPECT_EQ(t.startup_probe->timeout_seconds, 3);
  EXPECT_EQ(t.startup_probe->failure_threshold, 30);
}

TEST(DecodeProbeTest, NativeFormRoundTrips) {
  Result<std::vector<Object>> decoded = Decode(kDeployment);
  ASSERT_TRUE(decoded.has_value()) << decoded.error().message();
  nlohmann::json encoded = EncodeObject(decoded->at(0));
  EXPECT_EQ(encoded["spec"]["engine"]["livenessProbe"]["httpGet"]["path"], "/healthz");
  EXPECT_FALSE(encoded["spec"]["engine"]["livenessProbe"]["httpGet"].contains("port"));
  Result<Object> again = DecodeObject(encoded);
  ASSERT_TRUE(again.has_value()) << again.error().message();
  EXPECT_EQ(Engine({*again}), Engine(*decoded));
}

TEST(DecodeProbeTest, TrainingPodsNameTheirPortsAndResolveNamesToNumbers) {
  constexpr const char* kPod = R"(
apiVersion: v1
kind: Pod
metadata: {name: trainer}
spec:
  containers:
    - name: main
      command: [python3, train.py]
      ports: [{name: metrics, containerPort: 9090}]
      livenessProbe: {httpGet: {path: /, port: metrics}}
)";
  Result<std::vector<Object>> decoded = Decode(kPod);
  ASSERT_TRUE(decoded.has_value()) << decoded.error().message();
  EXPECT_EQ(decoded->at(0).As<Pod>()->spec.template_.liveness_probe->port, 9090);

  constexpr const char* kJob = R"(
apiVersion: strata.dev/v1alpha1
kind: Job
metadata: {name: train}
spec:
  template:
    command: [python3, train.py]
    livenessProbe: {httpGet: {path: /}}
)";
  EXPECT_THAT(ErrorOf(kJob), HasSubstr("spec.template.livenessProbe.httpGet.port: required: only "
                                       "a Service's replicas have a port of their own"));
}

TEST(DecodeProbeTest, BadValuesNameTheirField) {
  const std::string path = "spec.template.spec.containers[0].";
  EXPECT_THAT(ErrorOf(Edited(kDeployment, "tcpSocket: {port: 9000}",
                             "tcpSocket: {port: 9000}\n            exec: {command: [\"true\"]}")),
              HasSubstr(path + "readinessProbe: give exactly one of httpGet, tcpSocket and exec"));
  EXPECT_THAT(ErrorOf(Edited(kDeployment, "port: http", "port: admin")),
              HasSubstr(path + "livenessProbe.httpGet.port: names no port of the container"));
  EXPECT_THAT(ErrorOf(Edited(kDeployment, "port: 9000", "port: 70000")),
              HasSubstr(path + "readinessProbe.tcpSocket.port: must be between 1 and 65535"));
  EXPECT_THAT(ErrorOf(Edited(kDeployment, "periodSeconds: 2", "periodSeconds: 0")),
              HasSubstr(path + "readinessProbe.periodSeconds: must be at least 1, got 0"));
  EXPECT_THAT(ErrorOf(Edited(kDeployment, "timeoutSeconds: 3", "timeoutSeconds: -1")),
              HasSubstr(path + "startupProbe.timeoutSeconds: must be at least 1"));
  EXPECT_THAT(ErrorOf(Edited(kDeployment, "initialDelaySeconds: 5", "initialDelaySeconds: -5")),
              HasSubstr(path + "livenessProbe.initialDelaySeconds: must be at least 0"));
  EXPECT_THAT(ErrorOf(Edited(kDeployment, "failureThreshold: 30", "successThreshold: 2")),
              HasSubstr(path + "startupProbe.successThreshold: must be 1 for a liveness"));
  EXPECT_THAT(
      ErrorOf(Edited(kDeployment, "successThreshold: 2", "terminationGracePeriodSeconds: 3")),
      HasSubstr(path + "readinessProbe.terminationGracePeriodSeconds: must not be set"));
  EXPECT_THAT(ErrorOf(Edited(kDeployment, "path: /healthz", "path: healthz")),
              HasSubstr(path + "livenessProbe.httpGet.path: must start with /"));
  EXPECT_THAT(ErrorOf(Edited(kDeployment, "name: X-Probe", "name: \"X Probe\"")),
              HasSubstr(path + "livenessProbe.httpGet.httpHeaders[0].name: is not an HTTP"));
  EXPECT_THAT(ErrorOf(Edited(kDeployment, "exec: {command: [cat, /tmp/started]}", "exec: {}")),
              HasSubstr(path + "startupProbe.exec.command"));
  EXPECT_THAT(
      ErrorOf(Edited(kDeployment, "exec: {command: [cat, /tmp/started]}", "grpc: {port: 8000}")),
      HasSubstr(path + "startupProbe.grpc: not supported by strata"));
  EXPECT_THAT(ErrorOf(Edited(kDeployment, "port: http", "port: http\n              host: x")),
              HasSubstr(path + "livenessProbe.httpGet.host: not supported by strata"));
}

// KServe's examples give probes that its config completes: no handler, or HTTPS to the engine
// that KServe serves over TLS. strata runs that engine itself, over HTTP.
TEST(DecodeProbeTest, LLMInferenceServiceProbesOfTheEngineStrataRuns) {
  constexpr const char* kService = R"(
apiVersion: serving.kserve.io/v1alpha1
kind: LLMInferenceService
metadata: {name: opt}
spec:
  model: {uri: "hf://facebook/opt-125m", name: facebook/opt-125m}
  router: {route: {}}
  template:
    containers:
      - name: main
        livenessProbe:
          initialDelaySeconds: 30
          periodSeconds: 30
        readinessProbe:
          httpGet: {path: /health, port: 8000, scheme: HTTPS}
          failureThreshold: 60
)";
  std::vector<std::string> warnings;
  Result<std::vector<Object>> decoded = Decode(kService, &warnings);
  ASSERT_TRUE(decoded.has_value()) << decoded.error().message();
  const ProcessTemplate& t = Engine(*decoded);
  ASSERT_TRUE(t.liveness_probe.has_value());
  EXPECT_EQ(t.liveness_probe->path, "/health");
  EXPECT_EQ(t.liveness_probe->port, 0);
  EXPECT_EQ(t.liveness_probe->period_seconds, 30);
  ASSERT_TRUE(t.readiness_probe.has_value());
  EXPECT_EQ(t.readiness_probe->port, 0);
  EXPECT_EQ(t.readiness_probe->failure_threshold, 60);
  std::string all;
  for (const std::string& w : warnings) all += w + "\n";
  EXPECT_THAT(all, HasSubstr("livenessProbe: no handler: GET /health on the engine's port"));
  EXPECT_THAT(all, HasSubstr("readinessProbe.httpGet.scheme: HTTPS read as HTTP"));

  EXPECT_EQ(t.readiness_probe->scheme, "HTTP");
  // With its own command, the user's engine is what it says: HTTPS stays HTTPS.
  // (And its probes have handlers: KServe's config gives none to a command of the user's.)
  std::string own = Edited(kService, "- name: main", "- name: main\n        command: [my-server]");
  decoded = Decode(Edited(own, "initialDelaySeconds: 30", "tcpSocket: {port: 8000}"));
  ASSERT_TRUE(decoded.has_value()) << decoded.error().message();
  EXPECT_EQ(Engine(*decoded).readiness_probe->scheme, "HTTPS");
}

}  // namespace
}  // namespace strata::api
