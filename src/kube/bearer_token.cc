#include "kube/bearer_token.h"

#include <cctype>
#include <fstream>
#include <sstream>

namespace strata::kube {

BearerTokenSource::BearerTokenSource(std::string token, std::string file, const Clock* clock)
    : token_(std::move(token)), file_(std::move(file)), clock_(clock), read_at_(clock->Now()) {}

std::string BearerTokenSource::Token() {
  std::lock_guard lock(mutex_);
  TimePoint now = clock_->Now();
  if (!file_.empty() && (stale_ || now - read_at_ >= kRereadPeriod)) {
    std::ifstream in(file_, std::ios::binary);
    std::ostringstream contents;
    if (in) contents << in.rdbuf();
    std::string token = contents.str();
    while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back()))) {
      token.pop_back();
    }
    if (!token.empty()) token_ = std::move(token);
    read_at_ = now;
    stale_ = false;
  }
  return token_;
}

bool BearerTokenSource::Invalidate() {
  std::lock_guard lock(mutex_);
  if (file_.empty()) return false;
  stale_ = true;
  return true;
}

}  // namespace strata::kube
