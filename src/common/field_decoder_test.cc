#include "common/field_decoder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>

namespace strata {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::Pair;

// The error message of `result`, which must have failed.
template <typename T>
std::string ErrorOf(const Result<T>& result) {
  EXPECT_FALSE(result.has_value());
  return result.has_value() ? "" : result.error().message();
}

// The object `text` at "spec". A decoder points into the JSON it reads, so the parsed documents
// live as long as the test program.
FieldDecoder Decode(std::string_view text, std::initializer_list<std::string_view> known) {
  static std::vector<std::unique_ptr<json>> documents;
  documents.push_back(std::make_unique<json>(json::parse(text)));
  Result<FieldDecoder> decoder = FieldDecoder::Of(*documents.back(), "spec", known);
  if (!decoder) ADD_FAILURE() << decoder.error().message();
  return decoder.value_or(*FieldDecoder::OfAnyFields(json(), "spec"));
}

TEST(FieldDecoderTest, RefusesUnknownFieldsWithAHint) {
  json value = json::parse(R"({"replicas": 1, "replcas": 2})");
  EXPECT_EQ(ErrorOf(FieldDecoder::Of(value, "spec", {"replicas", "queue"})),
            "spec.replcas: unknown field; did you mean \"replicas\"?");
  EXPECT_EQ(ErrorOf(FieldDecoder::Of(json::parse(R"({"zzz": 1})"), "", {"replicas"})),
            "zzz: unknown field");
  EXPECT_EQ(ErrorOf(FieldDecoder::Of(json::array(), "spec", {})), "spec: must be a mapping");
  EXPECT_TRUE(FieldDecoder::OfAnyFields(value, "row").has_value());
}

TEST(FieldDecoderTest, AbsentAndNullFieldsReadAsTheFallback) {
  FieldDecoder spec = Decode(R"({"name": null})", {"name", "count", "on", "list", "sub"});
  EXPECT_FALSE(spec.Has("name"));
  EXPECT_EQ(*spec.String("name", "main"), "main");
  EXPECT_EQ(*spec.Integer("count", 7), 7);
  EXPECT_TRUE(*spec.Bool("on", true));
  EXPECT_TRUE(spec.StringList("list")->empty());
  EXPECT_FALSE(spec.Object("sub", {"x"})->Has("x"));
  EXPECT_FALSE(spec.OptionalQuantity("count")->has_value());
  EXPECT_EQ(ErrorOf(spec.RequiredString("name")), "spec.name: required");
  EXPECT_EQ(ErrorOf(spec.StringList("list", Presence::kRequired)), "spec.list: required");
}

TEST(FieldDecoderTest, NamesTheFieldOfEveryWrongType) {
  FieldDecoder spec = Decode(
      R"({"name": 3, "count": "3", "on": "yes", "weight": -1.5,
                                  "mode": "Sometimes", "labels": {"team": 1},
                                  "values": ["a", 2], "memory": "80Qi", "cpu": "-1",
                                  "empty": ""})",
      {"name", "count", "on", "weight", "mode", "labels", "values", "memory", "cpu", "empty"});
  EXPECT_EQ(ErrorOf(spec.String("name")), "spec.name: must be a string");
  EXPECT_EQ(ErrorOf(spec.RequiredString("empty")), "spec.empty: must be a non-empty string");
  EXPECT_EQ(ErrorOf(spec.Integer("count", 0)), "spec.count: must be an integer");
  EXPECT_EQ(ErrorOf(spec.Bool("on", false)), "spec.on: must be true or false");
  EXPECT_EQ(ErrorOf(spec.Number("weight", 1, 0)), "spec.weight: must be a number >= 0");
  EXPECT_EQ(ErrorOf(spec.Choice("mode", {"Required", "Preferred"}, "Required")),
            "spec.mode: must be \"Required\" or \"Preferred\"");
  EXPECT_EQ(ErrorOf(spec.StringMap("labels")), "spec.labels.team: must be a string");
  EXPECT_EQ(ErrorOf(spec.StringList("values")), "spec.values[1]: must be a string");
  EXPECT_THAT(ErrorOf(spec.OptionalQuantity("memory")), ::testing::StartsWith("spec.memory: "));
  EXPECT_EQ(ErrorOf(spec.OptionalQuantity("cpu")), "spec.cpu: must not be negative");
  EXPECT_EQ(ErrorOf(spec.Object("name", {})), "spec.name: must be a mapping");
}

TEST(FieldDecoderTest, ChecksIntegerRanges) {
  FieldDecoder spec = Decode(R"({"small": -1, "big": 65, "huge": 18446744073709551615, "ok": 64})",
                             {"small", "big", "huge", "ok"});
  EXPECT_EQ(ErrorOf(spec.Integer("small", 0, 0)), "spec.small: must be a non-negative integer");
  EXPECT_EQ(ErrorOf(spec.Integer("big", 0, 0, 64)), "spec.big: must be an integer from 0 to 64");
  EXPECT_EQ(ErrorOf(spec.Integer("huge", 0)), "spec.huge: must be an integer");
  EXPECT_EQ(ErrorOf(spec.Integer("small", 0, 1)), "spec.small: must be an integer >= 1");
  EXPECT_EQ(*spec.Integer("ok", 0, 0, 64), 64);
  EXPECT_EQ(ErrorOf(spec.RequiredInteger("absent", 1)), "spec.absent: must be an integer >= 1");
}

TEST(FieldDecoderTest, ReadsNestedObjectsAndListsAtTheirPaths) {
  FieldDecoder root = Decode(R"({"models": [{"name": "a"}, {"name": "b", "wieght": 2}],
                                  "prices": {"H100": 2.5, "A100": 1.5}, "labels": {"team": "a"},
                                  "levels": ["block", "rack"], "memory": "80Gi", "cpu": 1.5})",
                             {"models", "prices", "labels", "levels", "memory", "cpu"});
  EXPECT_EQ(ErrorOf(root.ObjectList("models", {"name", "weight"})),
            "spec.models[1].wieght: unknown field; did you mean \"weight\"?");
  Result<std::vector<FieldDecoder>> models = root.ObjectList("models", {"name", "wieght"});
  ASSERT_TRUE(models.has_value());
  ASSERT_EQ(models->size(), 2u);
  EXPECT_EQ((*models)[1].path(), "spec.models[1]");
  EXPECT_EQ(*(*models)[1].RequiredString("name"), "b");
  EXPECT_EQ(ErrorOf(root.ObjectList("levels", {})), "spec.levels[0]: must be a mapping");
  EXPECT_EQ(ErrorOf(root.ObjectList("absent", {}, Presence::kRequired)), "spec.absent: required");

  Result<FieldDecoder> prices = root.Mapping("prices");
  ASSERT_TRUE(prices.has_value());
  EXPECT_THAT(prices->Keys(), ElementsAre("A100", "H100"));
  EXPECT_EQ(*prices->Number("H100", 0, 0), 2.5);
  EXPECT_THAT(*root.StringMap("labels"), ElementsAre(Pair("team", "a")));
  EXPECT_THAT(*root.StringList("levels", Presence::kRequired), ElementsAre("block", "rack"));
  EXPECT_EQ((*root.OptionalQuantity("memory"))->milli(), 80LL * 1024 * 1024 * 1024 * 1000);
  EXPECT_EQ((*root.OptionalQuantity("cpu"))->milli(), 1500);
}

}  // namespace
}  // namespace strata
