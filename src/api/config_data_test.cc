#include "api/config_data.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/encode.h"
#include "api/manifest.h"
#include "api/served_form.h"

namespace strata::api {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

Result<std::vector<Object>> Decode(const std::string& text) {
  return DecodeManifests({{"config.yaml", text}});
}

std::string ErrorOf(const std::string& text) {
  Result<std::vector<Object>> r = Decode(text);
  return r ? "<decoded>" : r.error().message();
}

TEST(ConfigDataTest, AConfigMapKeepsTextAndBytesAndServesThemAsKubernetes) {
  auto objects = Decode(R"(
apiVersion: v1
kind: ConfigMap
metadata: {name: job-code, namespace: ml}
data:
  main.py: |
    print("hello")
  EPOCHS: "3"
binaryData:
  blob.bin: AAH/
immutable: true
)");
  ASSERT_TRUE(objects) << objects.error().message();
  const ConfigMap* config = (*objects)[0].As<ConfigMap>();
  ASSERT_NE(config, nullptr);
  EXPECT_EQ(config->metadata.namespace_name, "ml");
  EXPECT_THAT(config->data,
              ElementsAre(Pair("EPOCHS", "3"), Pair("main.py", "print(\"hello\")\n")));
  EXPECT_THAT(config->binary_data, ElementsAre(Pair("blob.bin", std::string("\0\1\xff", 3))));
  EXPECT_TRUE(config->immutable);

  nlohmann::json served = EncodeObject(*config);
  ToServedForm(served);
  EXPECT_EQ(served["apiVersion"], "v1");
  EXPECT_EQ(served["binaryData"]["blob.bin"], "AAH/");
  EXPECT_EQ(served["data"]["EPOCHS"], "3");
  // What a client read it may write back.
  auto again = DecodeObject(served);
  ASSERT_TRUE(again) << again.error().message();
  EXPECT_EQ(*again->As<ConfigMap>(), *config);
}

TEST(ConfigDataTest, ASecretMergesStringDataIntoBase64Data) {
  auto objects = Decode(R"(
apiVersion: v1
kind: Secret
metadata: {name: hf-token}
type: kubernetes.io/basic-auth
data:
  username: YWRh
  password: b2xk
stringData:
  password: new-password
)");
  ASSERT_TRUE(objects) << objects.error().message();
  const Secret* secret = (*objects)[0].As<Secret>();
  ASSERT_NE(secret, nullptr);
  EXPECT_EQ(secret->metadata.namespace_name, "default");
  EXPECT_EQ(secret->type, "kubernetes.io/basic-auth");
  EXPECT_THAT(secret->data, ElementsAre(Pair("password", "new-password"), Pair("username", "ada")));
  nlohmann::json stored = EncodeObject(*secret);
  EXPECT_EQ(stored["data"]["password"], "bmV3LXBhc3N3b3Jk");
  EXPECT_FALSE(stored.contains("stringData"));
}

TEST(ConfigDataTest, BadDataIsNamed) {
  EXPECT_THAT(ErrorOf(R"(
apiVersion: v1
kind: Secret
metadata: {name: s}
data: {token: "not base64!"}
)"),
              HasSubstr("data[token]: must be base64"));
  EXPECT_THAT(ErrorOf(R"(
apiVersion: v1
kind: ConfigMap
metadata: {name: c}
data: {"bad key": x}
)"),
              HasSubstr("a valid config key must consist of alphanumeric characters"));
  EXPECT_THAT(ErrorOf(R"(
apiVersion: v1
kind: ConfigMap
metadata: {name: c}
data: {k: x}
binaryData: {k: eA==}
)"),
              HasSubstr("binaryData[k]: duplicate of data[k]"));
  EXPECT_THAT(ErrorOf(R"(
apiVersion: v1
kind: ConfigMap
metadata: {name: c}
dta: {k: x}
)"),
              HasSubstr("dta"));
}

TEST(ConfigDataTest, AnImmutableObjectKeepsItsData) {
  ConfigMap config;
  config.metadata.name = "c";
  config.metadata.namespace_name = "default";
  config.data = {{"k", "v"}};
  nlohmann::json mutable_body = EncodeObject(config);
  config.immutable = true;
  nlohmann::json current = EncodeObject(config);
  ConfigMap changed = config;
  changed.data["k"] = "w";
  ConfigMap relabelled = config;
  relabelled.metadata.labels = {{"team", "a"}};

  EXPECT_TRUE(CheckImmutableUpdate(mutable_body, current).ok());
  EXPECT_TRUE(CheckImmutableUpdate(current, EncodeObject(relabelled)).ok());
  Status refused = CheckImmutableUpdate(current, EncodeObject(changed));
  EXPECT_THAT(refused.message(), HasSubstr("data: Forbidden: field is immutable"));
  EXPECT_THAT(CheckImmutableUpdate(current, mutable_body).message(), HasSubstr("immutable"));
}

TEST(ConfigDataTest, EnvValueFromAndEnvFromSurviveTheStoreAndTheV1Form) {
  auto objects = Decode(R"(
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: main
    command: [sh, -c, env]
    envFrom:
    - configMapRef: {name: settings}
      prefix: CFG_
    - secretRef: {name: creds, optional: true}
    env:
    - name: TOKEN
      valueFrom: {secretKeyRef: {name: hf, key: token}}
    - name: POD
      valueFrom: {fieldRef: {fieldPath: "metadata.labels['app']"}}
    - name: MEM
      valueFrom: {resourceFieldRef: {resource: limits.memory, divisor: 1Mi}}
)");
  ASSERT_TRUE(objects) << objects.error().message();
  const Pod* pod = (*objects)[0].As<Pod>();
  ASSERT_NE(pod, nullptr);
  const ProcessTemplate& t = pod->spec.template_;
  ASSERT_EQ(t.env_from.size(), 2u);
  EXPECT_EQ(t.env_from[0], (EnvFromSource{false, "settings", "CFG_", false}));
  EXPECT_EQ(t.env_from[1], (EnvFromSource{true, "creds", "", true}));
  ASSERT_EQ(t.env.size(), 3u);
  EXPECT_EQ(t.env[0].value_from->kind, EnvSourceKind::kSecretKey);
  EXPECT_EQ(t.env[0].value_from->key, "token");
  EXPECT_EQ(t.env[1].value_from->path, "metadata.labels['app']");
  EXPECT_EQ(t.env[2].value_from->divisor.ToString(), "1Mi");

  nlohmann::json stored = EncodeObject(*pod);
  auto again = DecodeObject(stored);
  ASSERT_TRUE(again) << again.error().message();
  EXPECT_EQ(again->As<Pod>()->spec.template_, t);
  ToServedForm(stored);
  const nlohmann::json& container = stored["spec"]["containers"][0];
  EXPECT_EQ(container["env"][0]["valueFrom"]["secretKeyRef"]["name"], "hf");
  EXPECT_EQ(container["envFrom"][0]["prefix"], "CFG_");
}

TEST(ConfigDataTest, BadEnvSourcesAreNamed) {
  const std::string head = R"(
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: main
    command: [env]
)";
  EXPECT_THAT(ErrorOf(head + R"(
    env:
    - name: A
      value: x
      valueFrom: {fieldRef: {fieldPath: metadata.name}}
)"),
              HasSubstr("env[0].value: may not be given with valueFrom"));
  EXPECT_THAT(ErrorOf(head + R"(
    env:
    - name: A
      valueFrom: {fieldRef: {fieldPath: spec.containers}}
)"),
              HasSubstr("fieldPath: unsupported value \"spec.containers\""));
  EXPECT_THAT(ErrorOf(head + R"(
    env:
    - name: A
      valueFrom:
        fieldRef: {fieldPath: metadata.name}
        secretKeyRef: {name: s, key: k}
)"),
              HasSubstr("give exactly one of"));
  EXPECT_THAT(ErrorOf(head + R"(
    env:
    - name: A
      valueFrom: {secretKeyRef: {name: s}}
)"),
              HasSubstr("key"));
  EXPECT_THAT(ErrorOf(head + R"(
    envFrom:
    - prefix: X_
)"),
              HasSubstr("give one of configMapRef and secretRef"));
}

}  // namespace
}  // namespace strata::api
