#pragma once

// For the decoders' tests: what decoding one manifest file gives.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "api/manifest.h"

namespace strata::api {

// `text` decoded as the one file "m.yaml".
inline Result<std::vector<Object>> Decode(const std::string& text,
                                          std::vector<std::string>* warnings = nullptr) {
  return DecodeManifests({{"m.yaml", text}}, warnings);
}

// The decoding error of `text`, which must fail (a test failure when it decodes).
inline std::string ErrorOf(const std::string& text) {
  Result<std::vector<Object>> r = Decode(text);
  EXPECT_FALSE(r.has_value()) << "decoded without error:\n" << text;
  return r.has_value() ? "" : r.error().message();
}

}  // namespace strata::api
