#include "gateway/request.h"

#include <gtest/gtest.h>

#include <map>

namespace strata::gateway {
namespace {

std::string ErrorOf(std::string_view body, ApiKind kind = ApiKind::kChatCompletions) {
  auto request = ParseInferenceRequest(body, kind);
  EXPECT_FALSE(request.has_value());
  return request ? "" : request.error().message();
}

TEST(InferenceRequestTest, ParsesChat) {
  auto request = ParseInferenceRequest(
      R"({"model":"m","stream":true,"stream_options":{"include_usage":true},"max_tokens":7,
          "messages":[{"role":"system","content":"be brief"},
                      {"role":"user","content":[{"type":"text","text":"hi"}]}]})",
      ApiKind::kChatCompletions);
  ASSERT_TRUE(request.has_value()) << request.error().ToString();
  EXPECT_EQ(request->model, "m");
  EXPECT_TRUE(request->stream);
  EXPECT_TRUE(request->include_usage);
  EXPECT_EQ(request->max_tokens, 7);
  EXPECT_EQ(request->prompt_text, "system\nbe brief\nuser\nhi\n");
  EXPECT_EQ(EstimateTokens(*request, 100), 6 + 7);  // 24 bytes of prompt text
}

TEST(InferenceRequestTest, ParsesCompletion) {
  auto request =
      ParseInferenceRequest(R"({"model":"m","prompt":"abcdefgh"})", ApiKind::kCompletions);
  ASSERT_TRUE(request.has_value());
  EXPECT_FALSE(request->stream);
  EXPECT_EQ(EstimateTokens(*request, 16), 2 + 16);
}

TEST(InferenceRequestTest, ErrorsNameTheFieldOrByte) {
  EXPECT_EQ(ErrorOf(R"({"model":)"),
            "request body is not valid JSON (byte 9): unexpected end of input");
  EXPECT_EQ(ErrorOf("[1]"), "request body must be a JSON object");
  EXPECT_EQ(ErrorOf(R"({"messages":[]})"), "model: required");
  EXPECT_EQ(ErrorOf(R"({"model":"m"})"), "messages: required");
  EXPECT_EQ(ErrorOf(R"({"model":"m","messages":[{"content":"x"}]})"),
            "messages[0].role: must be a string");
  EXPECT_EQ(ErrorOf(R"({"model":"m","messages":[{"role":"user","content":5}]})"),
            "messages[0].content: must be a string or a list of text parts");
  EXPECT_EQ(ErrorOf(R"({"model":"m","stream":"yes","messages":[{"role":"user"}]})"),
            "stream: must be a boolean");
  EXPECT_EQ(ErrorOf(R"({"model":"m","max_tokens":-1,"messages":[{"role":"user"}]})"),
            "max_tokens: must be a non-negative integer");
  EXPECT_EQ(ErrorOf(R"({"model":"m","prompt":5})", ApiKind::kCompletions),
            "prompt: must be a string or a list of strings");
}

TEST(InferenceRequestTest, WronglyTypedParametersAreNamed) {
  const std::string chat = R"(,"model":"m","messages":[{"role":"user","content":"x"}]})";
  EXPECT_EQ(ErrorOf(R"({"temperature":"hot")" + chat), "temperature: must be a number");
  EXPECT_EQ(ErrorOf(R"({"top_p":[1])" + chat), "top_p: must be a number");
  EXPECT_EQ(ErrorOf(R"({"n":0)" + chat), "n: must be a positive integer");
  EXPECT_EQ(ErrorOf(R"({"n":1.5)" + chat), "n: must be a positive integer");
  EXPECT_EQ(ErrorOf(R"({"max_tokens":"5")" + chat), "max_tokens: must be a non-negative integer");
  EXPECT_EQ(ErrorOf(R"({"stream":1)" + chat), "stream: must be a boolean");
  EXPECT_EQ(ErrorOf(R"({"stop":[1])" + chat), "stop: must be a string or a list of strings");
  EXPECT_EQ(ErrorOf(R"({"stream_options":true)" + chat),
            "stream_options: must be an object whose include_usage is a boolean");
  EXPECT_EQ(ErrorOf(R"({"stream_options":{"include_usage":"yes"})" + chat),
            "stream_options: must be an object whose include_usage is a boolean");
  // Null is absent, as in OpenAI's API; numbers of any kind are the engine's to range-check.
  auto request = ParseInferenceRequest(
      R"({"temperature":null,"top_p":0.5,"n":2,"seed":-3,"stop":["a","b"],"user":"u")" + chat,
      ApiKind::kChatCompletions);
  EXPECT_TRUE(request.has_value()) << request.error().ToString();
}

TEST(InferenceRequestTest, ErrorsGiveOpenAisParam) {
  auto param = [](std::string_view body) {
    auto request = ParseInferenceRequest(body, ApiKind::kChatCompletions);
    EXPECT_FALSE(request.has_value());
    return request ? std::string("(parsed)") : std::string(ParseErrorParam(request.error()));
  };
  EXPECT_EQ(param(R"({"model":"m","temperature":"hot","messages":[{"role":"u","content":"x"}]})"),
            "temperature");
  EXPECT_EQ(param(R"({"model":"m","messages":[{"role":"u","content":5}]})"), "messages[0].content");
  EXPECT_EQ(param(R"({"model":)"), "");
  EXPECT_EQ(param("[1]"), "");
}

TEST(InferenceRequestTest, ContentPartsNeedATypeAndTextPartsAText) {
  const auto body = [](std::string_view parts) {
    return R"({"model":"m","messages":[{"role":"user","content":)" + std::string(parts) + "}]}";
  };
  const std::string shape = "messages[0].content: must be a string or a list of text parts";
  EXPECT_EQ(ErrorOf(body(R"([{"text":"no type"}])")), shape);
  EXPECT_EQ(ErrorOf(body(R"([{"type":"text"}])")), shape);
  EXPECT_EQ(ErrorOf(body(R"([{"type":"text","text":7}])")), shape);
  EXPECT_EQ(ErrorOf(body(R"(["bare"])")), shape);
  // Text before type, and a part of another type passed on uncounted.
  auto request = ParseInferenceRequest(
      body(R"([{"text":"a","type":"text"},{"type":"input_audio","input_audio":{"data":"x"}},
               {"type":"text","text":"b"}])"),
      ApiKind::kChatCompletions);
  ASSERT_TRUE(request.has_value()) << request.error().ToString();
  EXPECT_EQ(request->prompt_text, "user\nab\n");
}

TEST(InferenceRequestTest, ReadsOnlyWhatRoutingNeedsWhateverTheKeyOrder) {
  auto request = ParseInferenceRequest(
      R"({"tools":[{"type":"function","function":{"name":"f","parameters":{"model":"no"}}}],
          "messages":[{"content":"first","name":"x","role":"user"},
                      {"role":"assistant","content":null,"tool_calls":[{"id":"a"}]},
                      {"role":"user","content":[{"type":"image_url","image_url":{"url":"u"}},
                                                {"type":"text","text":"second"}]}],
          "max_completion_tokens":9,"max_tokens":null,"model":"m","stream":null,
          "stream_options":{"include_usage":false}})",
      ApiKind::kChatCompletions);
  ASSERT_TRUE(request.has_value()) << request.error().ToString();
  EXPECT_EQ(request->model, "m");
  EXPECT_FALSE(request->stream);
  EXPECT_FALSE(request->include_usage);
  EXPECT_EQ(request->max_tokens, 9);
  EXPECT_EQ(request->prompt_text, "user\nfirst\nassistant\n\nuser\nsecond\n");

  auto completion = ParseInferenceRequest(R"({"prompt":["ab","cd"],"model":"m","max_tokens":3})",
                                          ApiKind::kCompletions);
  ASSERT_TRUE(completion.has_value());
  EXPECT_EQ(completion->prompt_text, "abcd");
  EXPECT_EQ(completion->max_tokens, 3);
}

TEST(InferenceRequestTest, ShapeErrorsNameTheFirstBadField) {
  EXPECT_EQ(ErrorOf(R"({"model":"m","messages":[]})"), "messages: must be a non-empty list");
  EXPECT_EQ(ErrorOf(R"({"model":"m","messages":{"role":"user"}})"),
            "messages: must be a non-empty list");
  EXPECT_EQ(ErrorOf(R"({"model":"m","messages":[{"role":"user"},"hi"]})"),
            "messages[1]: must be an object");
  EXPECT_EQ(ErrorOf(R"({"model":"m","messages":[{"role":"user","content":["hi"]}]})"),
            "messages[0].content: must be a string or a list of text parts");
  EXPECT_EQ(ErrorOf(R"({"model":"","messages":[{"role":"user"}]})"),
            "model: must be a non-empty string");
  EXPECT_EQ(ErrorOf(R"({"model":"m","max_tokens":1.5,"messages":[{"role":"user"}]})"),
            "max_tokens: must be a non-negative integer");
  EXPECT_EQ(ErrorOf(R"({"model":"m","prompt":["a",["b"]]})", ApiKind::kCompletions),
            "prompt: must be a string or a list of strings");
  EXPECT_EQ(ErrorOf(R"({"model":"m"})", ApiKind::kCompletions), "prompt: required");
  // A syntax error anywhere wins over a field error before it.
  EXPECT_EQ(ErrorOf(R"({"model":5,"messages":[}])"),
            "request body is not valid JSON (byte 23): unexpected character");
}

GatewayConfig TwoVersions() {
  GatewayConfig config;
  ModelConfig model;
  model.name = "llama";
  model.adapters = {"sql-lora"};
  model.versions = {{"v1", 3, {"h:1"}}, {"v2", 1, {"h:2"}}, {"canary", 0, {"h:3"}}};
  config.models.push_back(model);
  return config;
}

TEST(ModelRouterTest, SplitsByWeightAndHonoursPins) {
  GatewayConfig config = TwoVersions();
  ModelRouter router(config.models);
  std::map<size_t, int> counts;
  for (int i = 0; i < 100; ++i) ++counts[router.Resolve("llama", "", i / 100.0)->version];
  EXPECT_EQ(counts, (std::map<size_t, int>{{0, 75}, {1, 25}}));
  EXPECT_EQ(router.Resolve("llama", "", 0.9999999999)->version, 1u);
  EXPECT_EQ(router.Resolve("llama", "canary", 0.1)->version, 2u);
  auto bad = router.Resolve("llama", "v9", 0.1);
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().code(), StatusCode::kNotFound);
}

TEST(ModelRouterTest, AdapterNamesRouteToTheirModel) {
  GatewayConfig config = TwoVersions();
  ModelRouter router(config.models);
  auto route = router.Resolve("sql-lora", "", 0.0);
  ASSERT_TRUE(route.has_value());
  EXPECT_EQ(route->model, 0u);
  EXPECT_EQ(route->adapter, "sql-lora");
  EXPECT_EQ(router.Resolve("gpt-5", "", 0.0).error().message(),
            "model \"gpt-5\" is not served here");
  auto list = nlohmann::json::parse(router.ModelsListBody());
  ASSERT_EQ(list["data"].size(), 2u);
  EXPECT_EQ(list["data"][1]["id"], "sql-lora");
}

TEST(ModelRouterTest, RetrievesOneModelAsItsListEntry) {
  GatewayConfig config = TwoVersions();
  ModelRouter router(config.models);
  auto list = nlohmann::json::parse(router.ModelsListBody());
  for (const auto& entry : list["data"]) {
    const std::string* body = router.ModelBody(entry["id"].get<std::string>());
    ASSERT_NE(body, nullptr) << entry.dump();
    EXPECT_EQ(nlohmann::json::parse(*body), entry);
    EXPECT_EQ(entry["object"], "model");
    EXPECT_TRUE(entry["created"].is_number_integer());
    EXPECT_EQ(entry["owned_by"], "strata");
  }
  EXPECT_EQ(router.ModelBody("gpt-5"), nullptr);
}

}  // namespace
}  // namespace strata::gateway
