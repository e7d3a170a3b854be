#include "common/field_errors.h"

#include <gtest/gtest.h>

namespace strata {
namespace {

TEST(FieldErrorsTest, BuildsPaths) {
  EXPECT_EQ(JoinPath("", "spec"), "spec");
  EXPECT_EQ(JoinPath("spec", "replicas"), "spec.replicas");
  EXPECT_EQ(IndexPath("spec.env", 2), "spec.env[2]");
  EXPECT_EQ(KeyPath("metadata.labels", "a/b"), "metadata.labels[a/b]");
}

TEST(FieldErrorsTest, SuggestsTheOneCandidateOneEditAway) {
  std::vector<std::string_view> fields = {"replicas", "resources", "queue"};
  EXPECT_EQ(SuggestClosest("replcas", fields), "replicas");    // deletion
  EXPECT_EQ(SuggestClosest("replicass", fields), "replicas");  // insertion
  EXPECT_EQ(SuggestClosest("replicsa", fields), "replicas");   // swap
  EXPECT_EQ(SuggestClosest("qeue", fields), "queue");
  EXPECT_EQ(SuggestClosest("priority", fields), "");
  EXPECT_EQ(SuggestClosest("ab", {"aa", "bb"}), "");  // ambiguous
}

TEST(FieldErrorsTest, CollectsErrorsInOrder) {
  FieldErrors errors;
  EXPECT_TRUE(errors.empty());
  errors.Add("spec.a", "first");
  errors.Add("", "whole document");
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors.list()[0].ToString(), "spec.a: first");
  EXPECT_EQ(errors.list()[1].ToString(), "whole document");
}

}  // namespace
}  // namespace strata
