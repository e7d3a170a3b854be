#include "server/protobuf_body.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace strata::server {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;

// Protobuf's encoding, written here by hand as Go's generated marshallers write it.
std::string Varint(uint64_t value) {
  std::string out;
  do {
    uint8_t byte = value & 0x7f;
    value >>= 7;
    if (value != 0) byte |= 0x80;
    out.push_back(static_cast<char>(byte));
  } while (value != 0);
  return out;
}
std::string Bytes(uint32_t field, const std::string& value) {
  return Varint(uint64_t{field} << 3 | 2) + Varint(value.size()) + value;
}
std::string Number(uint32_t field, uint64_t value) {
  return Varint(uint64_t{field} << 3) + Varint(value);
}
std::string Entry(uint32_t field, const std::string& key, const std::string& value) {
  return Bytes(field, Bytes(1, key) + Bytes(2, value));
}
// What kubectl sends: the magic, then runtime.Unknown {typeMeta, raw, contentEncoding,
// contentType}, every string field written even when empty.
std::string Envelope(const std::string& kind, const std::string& raw) {
  return std::string("k8s\0", 4) + Bytes(1, Bytes(1, "v1") + Bytes(2, kind)) + Bytes(2, raw) +
         Bytes(3, "") + Bytes(4, "");
}
std::string Meta(const std::string& name, const std::string& ns) {
  return Bytes(1, Bytes(1, name) + Bytes(2, "") + Bytes(3, ns) + Bytes(4, "") + Bytes(5, "") +
                      Bytes(6, "") + Number(7, 0) + Bytes(8, "") + Entry(11, "team", "a"));
}

TEST(ProtobufBodyTest, KubectlsNamespaceConfigMapAndSecretReadAsTheirJson) {
  Result<Json> ns = KubeProtobufToJson(
      Envelope("Namespace", Meta("team-a", "") + Bytes(2, "") + Bytes(3, Bytes(1, ""))));
  ASSERT_TRUE(ns) << ns.error().ToString();
  EXPECT_EQ(*ns, Json::parse(R"({"apiVersion": "v1", "kind": "Namespace",
                                 "metadata": {"name": "team-a", "labels": {"team": "a"}}})"));

  Result<Json> config = KubeProtobufToJson(Envelope(
      "ConfigMap", Meta("settings", "team-a") + Entry(2, "GREETING", "hello") +
                       Entry(2, "EPOCHS", "3") + Entry(3, "blob", std::string("\0\1", 2))));
  ASSERT_TRUE(config) << config.error().ToString();
  EXPECT_EQ((*config)["metadata"]["namespace"], "team-a");
  EXPECT_EQ((*config)["data"], Json::parse(R"({"GREETING": "hello", "EPOCHS": "3"})"));
  EXPECT_EQ((*config)["binaryData"]["blob"], "AAE=");

  Result<Json> secret =
      KubeProtobufToJson(Envelope("Secret", Meta("creds", "team-a") + Entry(2, "token", "s3cret") +
                                                Bytes(3, "Opaque") + Number(5, 1)));
  ASSERT_TRUE(secret) << secret.error().ToString();
  EXPECT_EQ((*secret)["data"]["token"], "czNjcmV0");  // base64, as a Secret's JSON has it
  EXPECT_EQ((*secret)["type"], "Opaque");
  EXPECT_EQ((*secret)["immutable"], true);
}

TEST(ProtobufBodyTest, OtherKindsAndUnreadFieldsAreNamed) {
  Result<Json> pod = KubeProtobufToJson(Envelope("Pod", Meta("p", "default")));
  ASSERT_FALSE(pod);
  EXPECT_THAT(pod.error().message(), HasSubstr("not v1 Pod; send it as JSON"));

  Result<Json> owned =
      KubeProtobufToJson(Envelope("ConfigMap", Bytes(1, Bytes(1, "c") + Bytes(13, "owner"))));
  ASSERT_FALSE(owned);
  EXPECT_THAT(owned.error().message(), HasSubstr("field 13 of ObjectMeta is not read"));
}

TEST(ProtobufBodyTest, MalformedBodiesAreRefusedNamingTheByteNeverReadPast) {
  EXPECT_FALSE(KubeProtobufToJson("{\"kind\": \"ConfigMap\"}"));
  const std::string good =
      Envelope("ConfigMap", Meta("settings", "team-a") + Entry(2, "GREETING", "hello"));
  // Every prefix of a good body is refused or read, never read past its end (ASan checks).
  for (size_t size = 0; size < good.size(); ++size) {
    (void)KubeProtobufToJson(std::string_view(good).substr(0, size));
  }
  Result<Json> cut = KubeProtobufToJson(good.substr(0, good.size() - 3));
  ASSERT_FALSE(cut);
  EXPECT_THAT(cut.error().message(), HasSubstr("at byte"));
  // A length larger than what follows, and a varint of eleven bytes.
  std::string huge = std::string("k8s\0", 4) + Varint(2 << 3 | 2) + Varint(1ull << 40);
  EXPECT_THAT(KubeProtobufToJson(huge).error().message(), HasSubstr("past the body's end"));
  std::string endless = std::string("k8s\0", 4) + Varint(1 << 3) + std::string(11, '\xff');
  EXPECT_THAT(KubeProtobufToJson(endless).error().message(), HasSubstr("longer than 10 bytes"));
}

}  // namespace
}  // namespace strata::server
