#pragma once

// For the decoders' tests: a manifest's text with one change made to it.

#include <gtest/gtest.h>

#include <string>

namespace strata::api {

// `text` with its first `from` replaced by `to`; a test failure naming `from` when it is absent.
inline std::string Edited(std::string text, const std::string& from, const std::string& to) {
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

}  // namespace strata::api
