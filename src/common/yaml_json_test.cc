#include "common/yaml_json.h"

#include <gtest/gtest.h>

namespace strata {
namespace {

TEST(YamlJsonTest, MultiDocumentWithCoreSchemaScalars) {
  auto docs = ParseYamlDocuments(R"(
kind: A
replicas: 3
ratio: 1.5
enabled: true
quoted: "3"
nothing: ~
name: three
---
---
kind: B
list: [1, two, 0x10]
)");
  ASSERT_TRUE(docs) << docs.error().message();
  ASSERT_EQ(docs->size(), 2u);
  const nlohmann::json& a = (*docs)[0].value;
  EXPECT_EQ(a["replicas"], 3);
  EXPECT_EQ(a["ratio"], 1.5);
  EXPECT_EQ(a["enabled"], true);
  EXPECT_EQ(a["quoted"], "3");
  EXPECT_TRUE(a["nothing"].is_null());
  EXPECT_EQ(a["name"], "three");
  EXPECT_EQ((*docs)[1].value["list"], nlohmann::json::parse(R"([1, "two", 16])"));
  EXPECT_EQ((*docs)[1].line, 11);
}

TEST(YamlJsonTest, JsonIsYaml) {
  auto docs = ParseYamlDocuments(R"({"kind": "A", "spec": {"n": [1, 2]}})");
  ASSERT_TRUE(docs);
  EXPECT_EQ((*docs)[0].value["spec"]["n"][1], 2);
}

TEST(YamlJsonTest, ErrorsNameTheLine) {
  auto dup = ParseYamlDocuments("a: 1\nb: 2\na: 3\n");
  ASSERT_FALSE(dup);
  EXPECT_EQ(dup.error().message(), "line 3, column 1: duplicate key \"a\"");
  auto bad = ParseYamlDocuments("a: [1, 2\n");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("line "), std::string::npos);
}

TEST(YamlJsonTest, StrayFlowIndicatorIsAnErrorNotAHang) {
  // yaml-cpp 0.7 alone loops forever on these (upstream issue jbeder/yaml-cpp#1040).
  auto comma = ParseYamlDocuments(",");
  ASSERT_FALSE(comma);
  EXPECT_EQ(comma.error().message(), "line 1, column 1: unexpected character ','");
  auto after_map = ParseYamlDocuments("{a: 1},\n");
  ASSERT_FALSE(after_map);
  EXPECT_EQ(after_map.error().message(), "line 1, column 7: unexpected character ','");
  auto empty_docs = ParseYamlDocuments("a: 1\n---\n---\nb: 2\n");
  ASSERT_TRUE(empty_docs);
  EXPECT_EQ(empty_docs->size(), 2u);
}

TEST(YamlJsonTest, AliasesExpandWithinBounds) {
  auto shared = ParseYamlDocuments("base: &base {cpu: 2, gpus: [0, 1]}\ncopy: *base\n");
  ASSERT_TRUE(shared) << shared.error().ToString();
  EXPECT_EQ((*shared)[0].value["copy"], (*shared)[0].value["base"]);

  // "Billion laughs": nine levels of ten aliases each stand for 10^9 strings.
  std::string laughs = "l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
  for (int level = 1; level <= 9; ++level) {
    const std::string previous = "*l" + std::to_string(level - 1);
    laughs += "l" + std::to_string(level) + ": &l" + std::to_string(level) + " [";
    for (int i = 0; i < 10; ++i) laughs += (i ? ", " : "") + previous;
    laughs += "]\n";
  }
  auto bomb = ParseYamlDocuments(laughs);
  ASSERT_FALSE(bomb);
  EXPECT_EQ(bomb.error().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bomb.error().message().find("expands to more than 1000000 nodes"), std::string::npos)
      << bomb.error().message();

  // Few nodes, but each alias repeats a 1 MiB string: 100 MiB.
  std::string wide = "big: &big " + std::string(1 << 20, 'x') + "\ncopies: [";
  for (int i = 0; i < 100; ++i) wide += (i ? ", " : "") + std::string("*big");
  wide += "]\n";
  auto big = ParseYamlDocuments(wide);
  ASSERT_FALSE(big);
  EXPECT_NE(big.error().message().find("expands to more than 33554432 bytes of scalars"),
            std::string::npos)
      << big.error().message();
}

TEST(YamlJsonTest, ToYamlRoundTrips) {
  nlohmann::json v = nlohmann::json::parse(R"json({
    "apiVersion": "strata.dev/v1alpha1", "kind": "Job",
    "metadata": {"name": "a", "labels": {}},
    "spec": {"replicas": 4, "command": ["python", "-c", "print('x: y')"], "flag": "true",
             "empty": "", "pods": [{"name": "w", "gpus": 8}, {"name": "m", "gpus": 1}],
             "nested": [[1, 2], []]}})json");
  std::string text = ToYaml(v);
  auto back = ParseYamlDocuments(text);
  ASSERT_TRUE(back) << back.error().message() << "\n" << text;
  EXPECT_EQ((*back)[0].value, v) << text;
}

}  // namespace
}  // namespace strata
