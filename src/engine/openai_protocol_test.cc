#include "engine/openai_protocol.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace strata::engine {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

TEST(ParseCompletionRequestTest, ReadsCompletionFields) {
  Result<CompletionRequest> request = ParseCompletionRequest(
      R"({"model":"m","prompt":"hi there","max_tokens":5,"stream":true,
          "stream_options":{"include_usage":true},"temperature":0.7})",
      false);
  ASSERT_TRUE(request.has_value()) << request.error().ToString();
  EXPECT_EQ(request->model, "m");
  EXPECT_EQ(request->prompt_text, "hi there");
  EXPECT_EQ(request->max_tokens, 5);
  EXPECT_TRUE(request->stream);
  EXPECT_TRUE(request->include_usage);
  EXPECT_EQ(ParseCompletionRequest(R"({"model":"m","prompt":["one"]})", false)->max_tokens,
            kDefaultCompletionMaxTokens);
}

TEST(ParseCompletionRequestTest, RendersChatMessagesInOrder) {
  Result<CompletionRequest> request = ParseCompletionRequest(
      R"({"model":"m","messages":[{"role":"system","content":"be brief"},
          {"role":"user","content":"hello"}],"max_completion_tokens":7})",
      true);
  ASSERT_TRUE(request.has_value()) << request.error().ToString();
  EXPECT_EQ(request->prompt_text, "<|system|>\nbe brief\n<|user|>\nhello\n<|assistant|>\n");
  EXPECT_EQ(request->max_tokens, 7);
}

TEST(ParseCompletionRequestTest, JoinsTheTextPartsOfAContentList) {
  Result<CompletionRequest> request = ParseCompletionRequest(
      R"({"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"hel"},
          {"type":"text","text":"lo"}]}]})",
      true);
  ASSERT_TRUE(request.has_value()) << request.error().ToString();
  EXPECT_EQ(request->prompt_text, "<|user|>\nhello\n<|assistant|>\n");
}

TEST(ParseCompletionRequestTest, ErrorsNameTheField) {
  struct Case {
    std::string body;
    bool chat;
    std::string message;
  };
  std::vector<Case> cases = {
      {"{", false, "body: not valid JSON"},
      {"[]", false, "body: must be a JSON object"},
      {R"({"prompt":"x"})", false, "model: is required"},
      {R"({"model":"m"})", false, "prompt: is required"},
      {R"({"model":"m","prompt":7})", false, "prompt: must be a string"},
      {R"({"model":"m","prompt":"x","max_tokens":0})", false, "max_tokens: must be an integer"},
      {R"({"model":"m","prompt":"x","max_tokens":"5"})", false, "max_tokens: must be an integer"},
      {R"({"model":"m","prompt":"x","n":2})", false, "n: only 1 is supported"},
      {R"({"model":"m","prompt":"x","stream":"yes"})", false, "stream: must be a boolean"},
      {R"({"model":"m","prompt":"x","stream_options":{"include_usage":true}})", false,
       "stream_options: is only allowed with stream"},
      {R"({"model":"m","messages":[]})", true, "messages: must be a non-empty list"},
      {R"({"model":"m","messages":[{"role":"user"}]})", true, "messages[0].content: must be"},
      {R"({"model":"m","messages":[{"role":"user","content":[{"type":"image_url",
          "image_url":{"url":"data:,"}}]}]})",
       true, "messages[0].content[0].type: \"image_url\" is not supported"},
      {R"({"model":"m","messages":[{"role":"user","content":[{"type":"text"}]}]})", true,
       "messages[0].content[0].text: must be a string"},
      {R"({"model":"m","messages":[{"role":"user","content":7}]})", true,
       "messages[0].content: must be a string or a list of text parts"},
  };
  for (const Case& c : cases) {
    Result<CompletionRequest> request = ParseCompletionRequest(c.body, c.chat);
    ASSERT_FALSE(request.has_value()) << c.body;
    EXPECT_EQ(request.error().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(request.error().message(), HasSubstr(c.message)) << c.body;
  }
  EXPECT_EQ(ParamOf("max_tokens: must be an integer"), "max_tokens");
  EXPECT_EQ(ParamOf("body: not valid JSON"), "");
}

TEST(ResponseJsonTest, ShapesMatchOpenAi) {
  CompletionIdentity chat{
      .id = "chatcmpl-1", .created = 5, .model = "m", .chat = true, .include_usage = true};
  json chunk = json::parse(StreamChunk(chat, " hi", ""));
  EXPECT_EQ(chunk["object"], "chat.completion.chunk");
  EXPECT_EQ(chunk["choices"][0]["delta"]["content"], " hi");
  EXPECT_TRUE(chunk["choices"][0]["finish_reason"].is_null());
  EXPECT_TRUE(chunk.contains("usage") && chunk["usage"].is_null());
  json usage = json::parse(UsageChunk(chat, 3, 4));
  EXPECT_TRUE(usage["choices"].empty());
  EXPECT_EQ(usage["usage"]["total_tokens"], 7);
  EXPECT_EQ(json::parse(ChatRoleChunk(chat))["choices"][0]["delta"]["role"], "assistant");

  CompletionIdentity text{.id = "cmpl-1", .created = 5, .model = "m"};
  json full = json::parse(FullResponse(text, "abc", "length", 2, 3));
  EXPECT_EQ(full["object"], "text_completion");
  EXPECT_EQ(full["choices"][0]["text"], "abc");
  EXPECT_EQ(full["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(full["usage"]["completion_tokens"], 3);
  EXPECT_FALSE(json::parse(StreamChunk(text, "x", "length")).contains("usage"));

  json error = json::parse(ErrorBody("bad \xff", "BadRequestError", "max_tokens", 400));
  EXPECT_EQ(error["error"]["param"], "max_tokens");
  EXPECT_EQ(error["error"]["code"], 400);
}

}  // namespace
}  // namespace strata::engine
