#include "common/json_reader.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <array>
#include <nlohmann/json.hpp>

namespace strata {
namespace {

// Skips one whole text; returns Finish's message ("" when valid).
std::string SkipAll(std::string_view text) {
  JsonReader reader(text);
  reader.Skip();
  Status status = reader.Finish();
  return status.ok() ? "" : status.message();
}

TEST(JsonReaderTest, ReadsFieldsAndUnescapesStrings) {
  JsonReader reader(
      R"( {"a\u00e9": "x\"\\\/\b\f\n\r\t\u0041\ud83d\ude00é", "n": -12, "f": 1.5e3,
           "l": [true, false, null, {}, []]} )");
  ASSERT_EQ(reader.Peek(), JsonType::kObject);
  ASSERT_TRUE(reader.BeginObject());
  std::string_view key;
  std::string scratch;
  ASSERT_TRUE(reader.NextKey(&key, &scratch));
  EXPECT_EQ(key, "a\xC3\xA9");
  std::string value;
  ASSERT_EQ(reader.Peek(), JsonType::kString);
  ASSERT_TRUE(reader.ReadString(&value));
  EXPECT_EQ(value, "x\"\\/\b\f\n\r\tA\xF0\x9F\x98\x80\xC3\xA9");
  ASSERT_TRUE(reader.NextKey(&key, &scratch));
  EXPECT_EQ(key, "n");
  int64_t number = 0;
  ASSERT_EQ(reader.Peek(), JsonType::kNumber);
  EXPECT_TRUE(reader.ReadInteger(&number));
  EXPECT_EQ(number, -12);
  ASSERT_TRUE(reader.NextKey(&key, &scratch));
  EXPECT_FALSE(reader.ReadInteger(&number));  // 1.5e3 is not an integer, but valid
  EXPECT_TRUE(reader.ok());
  ASSERT_TRUE(reader.NextKey(&key, &scratch));
  EXPECT_EQ(key, "l");
  reader.Skip();
  EXPECT_FALSE(reader.NextKey(&key, &scratch));
  EXPECT_TRUE(reader.Finish().ok());
}

TEST(JsonReaderTest, IntegersOutOfRangeAreNotIntegers) {
  for (std::string_view text : {"9223372036854775807", "-9223372036854775808"}) {
    JsonReader reader(text);
    int64_t value = 0;
    EXPECT_TRUE(reader.ReadInteger(&value)) << text;
  }
  JsonReader reader("9223372036854775808");
  int64_t value = 0;
  EXPECT_FALSE(reader.ReadInteger(&value));
  EXPECT_TRUE(reader.Finish().ok());
}

TEST(JsonReaderTest, SyntaxErrorsNameTheByte) {
  EXPECT_EQ(SkipAll(R"({"model":)"), "not valid JSON (byte 9): unexpected end of input");
  EXPECT_EQ(SkipAll(R"({"a":1,})"), "not valid JSON (byte 7): expected a string key");
  EXPECT_EQ(SkipAll(R"([1 2])"), "not valid JSON (byte 3): expected ',' or ']'");
  EXPECT_EQ(SkipAll(R"({"a" 1})"), "not valid JSON (byte 5): expected ':'");
  EXPECT_EQ(SkipAll("{} x"), "not valid JSON (byte 3): unexpected data after the value");
  EXPECT_EQ(SkipAll("01"), "not valid JSON (byte 1): unexpected data after the value");
  EXPECT_EQ(SkipAll("-"), "not valid JSON (byte 1): invalid number");
  EXPECT_EQ(SkipAll("1."), "not valid JSON (byte 2): invalid number");
  EXPECT_EQ(SkipAll("tru"), "not valid JSON (byte 0): invalid literal");
  EXPECT_EQ(SkipAll(R"("a\x")"), "not valid JSON (byte 2): invalid escape");
  EXPECT_EQ(SkipAll(R"("\ud800")"), "not valid JSON (byte 1): unpaired UTF-16 surrogate");
  EXPECT_EQ(SkipAll("\"a\nb\""), "not valid JSON (byte 2): control character in string");
  EXPECT_EQ(SkipAll("\"\xC0\xAF\""), "not valid JSON (byte 1): invalid UTF-8");
  EXPECT_EQ(SkipAll("\"\xED\xA0\x80\""), "not valid JSON (byte 1): invalid UTF-8");
  EXPECT_EQ(SkipAll("\"abc"), "not valid JSON (byte 4): unterminated string");
  EXPECT_EQ(SkipAll(""), "not valid JSON (byte 0): unexpected end of input");
  EXPECT_EQ(SkipAll(std::string(300, '[')), "not valid JSON (byte 256): nesting too deep");
}

// What the reader accepts is what a document parser accepts, on a mixed set of texts.
TEST(JsonReaderTest, AgreesWithADocumentParser) {
  for (std::string_view text :
       {R"({"a":[1,-0,0.5,1E+2,"\u20ac",{"b":null}]})", "[]", "  3  ", R"("\/")", "[01]", "[1,]",
        R"({"a":1 "b":2})", "\"\xF4\x90\x80\x80\"", "\"\xF0\x9F\x98\x80\"", "nul", "[-]",
        "{\"a\":\"\t\"}", R"(["\uD83D\uDE00"])", R"(["\uDE00"])", "1e", "[1.e5]"}) {
    const bool document = nlohmann::json::accept(text);
    EXPECT_EQ(SkipAll(text).empty(), document) << text;
  }
}

// Strings are scanned sixteen and eight bytes at a time: each byte that ends a plain run (quote,
// escape, control character, UTF-8) is found at every offset, in a string of every length up to
// 40 (two blocks of sixteen, one word of eight, single bytes).
TEST(JsonReaderTest, FindsTheFirstSpecialByteAtEveryOffset) {
  for (size_t length = 0; length <= 40; ++length) {
    for (size_t at = 0; at < length; ++at) {
      std::string plain(length, 'a');
      for (std::string_view special : {"\\\"", "\\n", "\xC3\xA9", "\x1F", "\"", "\x7F"}) {
        std::string text =
            "\"" + plain.substr(0, at) + std::string(special) + plain.substr(at) + "\"";
        const bool valid = special != "\x1F" && special != "\"";
        EXPECT_EQ(SkipAll(text).empty(), valid) << text;
        EXPECT_EQ(nlohmann::json::accept(text), valid) << text;
        if (!valid) continue;
        JsonReader reader(text);
        std::string value;
        ASSERT_TRUE(reader.ReadString(&value));
        EXPECT_EQ(value, nlohmann::json::parse(text).get<std::string>());
        bool empty = true;
        JsonReader emptiness(text);
        ASSERT_TRUE(emptiness.ReadStringEmptiness(&empty));
        EXPECT_FALSE(empty);
      }
      if (at == 0) {
        const std::string error = SkipAll("\"" + plain.substr(0, length / 2) + "\x01");
        EXPECT_EQ(error, fmt::format("not valid JSON (byte {}): control character in string",
                                     1 + length / 2));
      }
    }
  }
  bool empty = false;
  JsonReader reader(R"("")");
  ASSERT_TRUE(reader.ReadStringEmptiness(&empty));
  EXPECT_TRUE(empty);
}

TEST(JsonReaderTest, FindMemberSkipsNestedValuesAndStrings) {
  const std::string_view text =
      R"( {"choices":[{"message":{"content":"a \"usage\": {} ] }","usage":1}}],)"
      R"( "n" : -1.5e3, "t":true, "s":"x\\", "usage" : {"prompt_tokens":3} , "usage":2} )";
  EXPECT_EQ(FindMember(text, "usage"), R"({"prompt_tokens":3})");
  EXPECT_EQ(FindMember(text, "n"), "-1.5e3");
  EXPECT_EQ(FindMember(text, "t"), "true");
  EXPECT_EQ(FindMember(text, "s"), R"("x\\")");
  EXPECT_EQ(FindMember(text, "choices").value().back(), ']');
  EXPECT_EQ(FindMember(text, "missing"), std::nullopt);
  EXPECT_EQ(FindMember("[1]", "usage"), std::nullopt);
  EXPECT_EQ(FindMember("", "usage"), std::nullopt);
  EXPECT_EQ(FindMember(R"({"a":[1,2)", "usage"), std::nullopt);          // ends inside a value
  EXPECT_EQ(FindMember(R"({"a":"x)", "usage"), std::nullopt);            // inside a string
  EXPECT_EQ(FindMember(R"({"a" 1,"usage":2})", "usage"), std::nullopt);  // no colon: stops
  EXPECT_EQ(FindMember(R"({"us\u0061ge":1})", "usage"), std::nullopt);   // escaped key
  EXPECT_EQ(FindMember(R"({"a":1 "usage":2})", "usage"), std::nullopt);  // no comma: stops
}

TEST(JsonReaderTest, FindMembersFillsEveryKeyInOneScan) {
  const std::string_view text =
      R"({"completion_tokens":8,"prompt_tokens":17,"x":{"prompt_tokens":1}})";
  const std::array<std::string_view, 3> keys = {"prompt_tokens", "completion_tokens", "absent"};
  std::array<std::optional<std::string_view>, 3> values;
  FindMembers(text, keys, values);
  EXPECT_EQ(values[0], "17");
  EXPECT_EQ(values[1], "8");
  EXPECT_EQ(values[2], std::nullopt);
  // What was found before the scan stopped is kept.
  std::array<std::optional<std::string_view>, 3> partial;
  FindMembers(R"({"completion_tokens":8 "prompt_tokens":17})", keys, partial);
  EXPECT_EQ(partial[1], "8");
  EXPECT_EQ(partial[0], std::nullopt);
}

TEST(JsonReaderTest, FindLastMemberReadsTheObjectBackwards) {
  const std::string_view answer =
      R"({"choices":[{"message":{"content":"say \"usage\": {} ]","role":"assistant"}}],)"
      R"("usage" : {"prompt_tokens":17,"s":"}{\\","t":[1,{"u":"\""}],"completion_tokens":8}} )"
      "\r\n";
  EXPECT_EQ(FindLastMember(answer, "usage"),
            R"({"prompt_tokens":17,"s":"}{\\","t":[1,{"u":"\""}],"completion_tokens":8})");
  EXPECT_EQ(FindLastMember(answer, "usage"), FindMember(answer, "usage"));
  EXPECT_EQ(FindLastMember(answer, "choices"), std::nullopt);  // not the last member
  EXPECT_EQ(FindLastMember(R"({"usage":1})", "usage"), "1");
  EXPECT_EQ(FindLastMember(R"({"a":[],"usage":null})", "usage"), "null");
  EXPECT_EQ(FindLastMember(R"({"a":0,"usage":"x\\"})", "usage"), R"("x\\")");
  EXPECT_EQ(FindLastMember(R"({"a":0,"usage":[{"b":"]"}]})", "usage"), R"([{"b":"]"}])");
}

TEST(JsonReaderTest, FindLastMemberRefusesWhatIsNotTheObjectsLastMember) {
  // "usage" inside the last string value, its quotes escaped.
  EXPECT_EQ(FindLastMember(R"({"a":"x,\"usage\":1"})", "usage"), std::nullopt);
  // An odd run of backslashes escapes the quote; an even one does not.
  EXPECT_EQ(FindLastMember(R"({"a":"\\\"usage\":1"})", "usage"), std::nullopt);
  EXPECT_EQ(FindLastMember(R"({"us\"age":1})", "usage"), std::nullopt);
  EXPECT_EQ(FindLastMember("{}", "usage"), std::nullopt);
  EXPECT_EQ(FindLastMember("", "usage"), std::nullopt);
  EXPECT_EQ(FindLastMember(R"(["usage",1])", "usage"), std::nullopt);
  EXPECT_EQ(FindLastMember(R"("usage":1})", "usage"), std::nullopt);        // no brace or comma
  EXPECT_EQ(FindLastMember(R"({"usage" 1})", "usage"), std::nullopt);       // no colon
  EXPECT_EQ(FindLastMember(R"({"usage":})", "usage"), std::nullopt);        // no value
  EXPECT_EQ(FindLastMember(R"({"usage":{"a":1})", "usage"), std::nullopt);  // unbalanced
  EXPECT_EQ(FindLastMember(R"({"usage":"x})", "usage"), std::nullopt);      // unterminated string
}

TEST(JsonReaderTest, MemberScansStayInsideEveryPieceOfAnAnswer) {
  const std::string answer =
      R"({"choices":[{"text":"a\\\"b}{"}],"usage":{"prompt_tokens":3,"completion_tokens":4}})";
  for (size_t start = 0; start <= answer.size(); ++start) {
    for (size_t end = start; end <= answer.size(); ++end) {
      const std::string piece = answer.substr(start, end - start);  // its own allocation
      const std::optional<std::string_view> last = FindLastMember(piece, "usage");
      const std::optional<std::string_view> first = FindMember(piece, "usage");
      for (const auto& found : {last, first}) {
        if (!found) continue;
        EXPECT_GE(found->data(), piece.data());
        EXPECT_LE(found->data() + found->size(), piece.data() + piece.size());
      }
      if (start == 0 && end == answer.size()) {
        EXPECT_EQ(last, first);
      }
    }
  }
}

}  // namespace
}  // namespace strata
