#include "node/env_resolution.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/encode.h"

namespace strata::node {
namespace {

using ::testing::HasSubstr;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

void Put(store::Store& store, const api::Object& object) {
  store::Object raw;
  raw.key = {std::string(object.kind()), object.namespace_name(), object.name()};
  raw.body = api::EncodeObject(object);
  ASSERT_TRUE(store.Create(std::move(raw)).has_value());
}

api::ConfigMap Config(std::string name, std::map<std::string, std::string> data) {
  api::ConfigMap config;
  config.metadata.name = std::move(name);
  config.metadata.namespace_name = "team";
  config.data = std::move(data);
  return config;
}

api::Secret MakeSecret(std::string name, std::map<std::string, std::string> data) {
  api::Secret secret;
  secret.metadata.name = std::move(name);
  secret.metadata.namespace_name = "team";
  secret.data = std::move(data);
  return secret;
}

api::EnvVar From(std::string name, api::EnvSourceKind kind, std::string object, std::string key,
                 bool optional = false) {
  api::EnvVarSource source;
  source.kind = kind;
  source.name = std::move(object);
  source.key = std::move(key);
  source.optional = optional;
  return {std::move(name), "", source};
}

api::EnvVar Literal(std::string name, std::string value) {
  return {std::move(name), std::move(value), std::nullopt};
}

api::EnvVar Field(std::string name, std::string path) {
  api::EnvVarSource source;
  source.kind = api::EnvSourceKind::kField;
  source.path = std::move(path);
  return {std::move(name), "", source};
}

api::EnvVar Resource(std::string name, std::string resource, std::string divisor) {
  api::EnvVarSource source;
  source.kind = api::EnvSourceKind::kResourceField;
  source.path = std::move(resource);
  if (!divisor.empty()) source.divisor = *Quantity::Parse(divisor);
  return {std::move(name), "", source};
}

class EnvResolutionTest : public ::testing::Test {
 protected:
  EnvResolutionTest() {
    pod_.metadata.name = "trainer-0";
    pod_.metadata.namespace_name = "team";
    pod_.metadata.uid = "uid-1";
    pod_.metadata.labels = {{"app", "mnist"}};
    pod_.metadata.annotations = {{"note", "first"}};
    pod_.spec.node_name = "node-a";
    pod_.spec.resources.cpu = *Quantity::Parse("1500m");
    pod_.spec.resources.memory = *Quantity::Parse("2Gi");
    pod_.spec.resources.cpu_limit = *Quantity::Parse("2");
  }

  // The resolved environment as a map (a later name replaces an earlier one).
  Result<std::map<std::string, std::string>> Resolve() {
    ASSIGN_OR_RETURN(std::vector<api::EnvVar> env,
                     ResolvePodEnvironment(pod_, placement_, *store_));
    std::map<std::string, std::string> out;
    for (const api::EnvVar& e : env) {
      EXPECT_FALSE(e.value_from) << e.name;
      out[e.name] = e.value;
    }
    return out;
  }

  std::unique_ptr<store::Store> store_ = store::NewMemoryStore({});
  api::Pod pod_;
  PodPlacement placement_{"10.0.0.7", "10.0.0.7", *Quantity::Parse("64"),
                          *Quantity::Parse("256Gi")};
};

TEST_F(EnvResolutionTest, ReadsKeysOfConfigMapsAndSecretsWithTheirBytes) {
  Put(*store_, Config("settings", {{"EPOCHS", "3"}}));
  Put(*store_, MakeSecret("hf", {{"token", std::string("hf_\0x", 5)}}));
  pod_.spec.template_.env = {
      From("EPOCHS", api::EnvSourceKind::kConfigMapKey, "settings", "EPOCHS"),
      From("HF_TOKEN", api::EnvSourceKind::kSecretKey, "hf", "token")};
  auto env = Resolve();
  ASSERT_TRUE(env) << env.error().ToString();
  EXPECT_THAT(
      *env, UnorderedElementsAre(Pair("EPOCHS", "3"), Pair("HF_TOKEN", std::string("hf_\0x", 5))));
}

TEST_F(EnvResolutionTest, EnvFromFirstThenEnvInOrderWithReferencesToEarlierNames) {
  api::ConfigMap config = Config("settings", {{"LR", "0.1"}, {"MODE", "from-config"}});
  config.binary_data = {{"BLOB", "bytes"}};
  Put(*store_, config);
  Put(*store_, MakeSecret("creds", {{"USER", "ada"}}));
  pod_.spec.template_.env_from = {{false, "settings", "", false}, {true, "creds", "DB_", false}};
  pod_.spec.template_.env = {
      Literal("MODE", "explicit"),                                    // replaces envFrom's
      Literal("URL", "postgres://$(DB_USER)@db/$(LATER)?lr=$$(LR)"),  // LATER is not yet
      From("REF", api::EnvSourceKind::kConfigMapKey, "settings", "MODE"), Literal("LATER", "x"),
      Literal("COPY", "$(REF)")};
  auto env = Resolve();
  ASSERT_TRUE(env) << env.error().ToString();
  EXPECT_THAT(*env, UnorderedElementsAre(Pair("LR", "0.1"), Pair("MODE", "explicit"),
                                         Pair("BLOB", "bytes"), Pair("DB_USER", "ada"),
                                         Pair("URL", "postgres://ada@db/$(LATER)?lr=$(LR)"),
                                         Pair("REF", "from-config"), Pair("LATER", "x"),
                                         Pair("COPY", "from-config")));
}

TEST_F(EnvResolutionTest, AMissingObjectOrKeyNamesIt) {
  pod_.spec.template_.env = {From("HF_TOKEN", api::EnvSourceKind::kSecretKey, "hf", "token")};
  auto missing = Resolve();
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(missing.error().message(), HasSubstr("secret \"hf\" not found (env HF_TOKEN)"));

  Put(*store_, MakeSecret("hf", {{"other", "v"}}));
  auto no_key = Resolve();
  ASSERT_FALSE(no_key);
  EXPECT_THAT(no_key.error().message(),
              HasSubstr("couldn't find key token in Secret team/hf (env HF_TOKEN)"));

  pod_.spec.template_.env = {};
  pod_.spec.template_.env_from = {{false, "absent", "", false}};
  auto no_config = Resolve();
  ASSERT_FALSE(no_config);
  EXPECT_THAT(no_config.error().message(), HasSubstr("configmap \"absent\" not found"));
}

TEST_F(EnvResolutionTest, OptionalSourcesThatAreMissingLeaveTheVariableUnset) {
  Put(*store_, Config("settings", {{"A", "1"}}));
  pod_.spec.template_.env_from = {{true, "absent", "", true}};
  pod_.spec.template_.env = {
      From("NO_OBJECT", api::EnvSourceKind::kSecretKey, "absent", "k", true),
      From("NO_KEY", api::EnvSourceKind::kConfigMapKey, "settings", "missing", true),
      From("A", api::EnvSourceKind::kConfigMapKey, "settings", "A", true)};
  auto env = Resolve();
  ASSERT_TRUE(env) << env.error().ToString();
  EXPECT_THAT(*env, UnorderedElementsAre(Pair("A", "1")));
}

TEST_F(EnvResolutionTest, EnvFromMayNotSetANameStrataReserves) {
  Put(*store_, Config("ranks", {{"RANK", "7"}}));
  pod_.spec.template_.env_from = {{false, "ranks", "", false}};
  auto env = Resolve();
  ASSERT_FALSE(env);
  EXPECT_THAT(env.error().message(), HasSubstr("sets RANK, which strata reserves"));
  pod_.spec.template_.env_from = {{false, "ranks", "MY_", false}};
  EXPECT_TRUE(Resolve());
}

TEST_F(EnvResolutionTest, FieldsAndResourcesOfThePod) {
  pod_.spec.template_.env = {Field("POD", "metadata.name"),
                             Field("NS", "metadata.namespace"),
                             Field("UID", "metadata.uid"),
                             Field("APP", "metadata.labels['app']"),
                             Field("NOTE", "metadata.annotations['note']"),
                             Field("NONE", "metadata.labels['absent']"),
                             Field("NODE", "spec.nodeName"),
                             Field("POD_IP", "status.podIP"),
                             Field("HOST_IP", "status.hostIP"),
                             Field("SA", "spec.serviceAccountName"),
                             Resource("CPU_REQUEST_M", "requests.cpu", "1m"),
                             Resource("CPU_REQUEST", "requests.cpu", ""),
                             Resource("CPU_LIMIT", "limits.cpu", ""),
                             Resource("MEM_MI", "requests.memory", "1Mi"),
                             Resource("MEM_LIMIT_GI", "limits.memory", "1Gi")};
  auto env = Resolve();
  ASSERT_TRUE(env) << env.error().ToString();
  EXPECT_THAT(
      *env, UnorderedElementsAre(Pair("POD", "trainer-0"), Pair("NS", "team"), Pair("UID", "uid-1"),
                                 Pair("APP", "mnist"), Pair("NOTE", "first"), Pair("NONE", ""),
                                 Pair("NODE", "node-a"), Pair("POD_IP", "10.0.0.7"),
                                 Pair("HOST_IP", "10.0.0.7"), Pair("SA", "default"),
                                 Pair("CPU_REQUEST_M", "1500"), Pair("CPU_REQUEST", "2"),
                                 Pair("CPU_LIMIT", "2"), Pair("MEM_MI", "2048"),
                                 // No memory limit: the reservation is what is enforced.
                                 Pair("MEM_LIMIT_GI", "2")));
  pod_.spec.resources = {};
  pod_.spec.template_.env = {Resource("CPU_LIMIT", "limits.cpu", "")};
  auto unlimited = Resolve();
  ASSERT_TRUE(unlimited);
  EXPECT_THAT(*unlimited, UnorderedElementsAre(Pair("CPU_LIMIT", "64")));  // the node's
}

}  // namespace
}  // namespace strata::node
