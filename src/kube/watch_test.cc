#include "kube/watch.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace strata::kube {
namespace {

using ::testing::HasSubstr;

TEST(DecodeWatchEventTest, EventTypesAndTheirVersion) {
  Result<WatchEvent> event = DecodeWatchEvent(
      R"({"type":"MODIFIED","object":{"kind":"Pod","metadata":{"name":"p","resourceVersion":"42"}}})",
      "watch of pods");
  ASSERT_TRUE(event) << event.error().ToString();
  EXPECT_EQ(event->type, WatchEventType::kModified);
  EXPECT_EQ(event->ResourceVersion(), "42");
  EXPECT_EQ(event->object["metadata"]["name"], "p");

  for (auto [text, type] :
       {std::pair{"ADDED", WatchEventType::kAdded}, std::pair{"DELETED", WatchEventType::kDeleted},
        std::pair{"BOOKMARK", WatchEventType::kBookmark}}) {
    event = DecodeWatchEvent(std::string(R"({"type":")") + text + R"(","object":{}})", "w");
    ASSERT_TRUE(event) << text;
    EXPECT_EQ(event->type, type);
    EXPECT_EQ(WatchEventTypeName(type), text);
    EXPECT_EQ(event->ResourceVersion(), "");
  }
}

TEST(DecodeWatchEventTest, AnErrorEventIsItsStatus) {
  Result<WatchEvent> event = DecodeWatchEvent(
      R"json({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure",)json"
      R"json("message":"too old resource version: 2 (318)","reason":"Expired","code":410}})json",
      "watch of widgets.test.strata.dev in default");
  ASSERT_FALSE(event);
  EXPECT_EQ(event.error().code(), StatusCode::kExpired);
  EXPECT_EQ(event.error().message(),
            "watch of widgets.test.strata.dev in default: Expired: too old resource version: 2 "
            "(318)");
}

TEST(DecodeWatchEventTest, ALineThatIsNoEventIsInternal) {
  for (const char* line :
       {"{", "[]", R"({"type":"ADDED"})", R"({"type":"X","object":{}})", R"({"object":{}})"}) {
    Result<WatchEvent> event = DecodeWatchEvent(line, "watch of pods");
    ASSERT_FALSE(event) << line;
    EXPECT_EQ(event.error().code(), StatusCode::kInternal) << line;
    EXPECT_THAT(event.error().message(), HasSubstr("watch of pods: malformed watch event"));
  }
}

}  // namespace
}  // namespace strata::kube
