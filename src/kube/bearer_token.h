#pragma once

#include <mutex>
#include <string>

#include "common/clock.h"

namespace strata::kube {

// The bearer token a Client sends, read from a file that may be rotated under it (a projected
// service-account token is replaced well before it expires), as client-go's cached token
// source: the file is re-read once a minute, and at once after the server answered 401.
// Without a file, the token given at construction is used as is.
//
// Owned by its Client; thread-safe.
class BearerTokenSource {
 public:
  static constexpr Duration kRereadPeriod = std::chrono::minutes(1);

  // `token`: the current token (read by the caller at load time); `file`: where it is renewed,
  // or empty. `clock` outlives the source.
  BearerTokenSource(std::string token, std::string file, const Clock* clock);

  // The token to send now ("" for none). When the file is due for a re-read and cannot be read
  // or is empty, the last token read keeps being used.
  std::string Token();

  // Makes the next Token() re-read the file (after a 401). Returns false when there is no file,
  // so retrying with the same token is pointless.
  bool Invalidate();

 private:
  std::mutex mutex_;
  std::string token_;
  const std::string file_;
  const Clock* clock_;
  TimePoint read_at_;
  bool stale_ = false;
};

}  // namespace strata::kube
