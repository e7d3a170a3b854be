#include "common/field_errors.h"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace strata {
namespace {

// Optimal string alignment distance: Levenshtein plus transposition of adjacent characters,
// so "replcias" is one edit from "replicas".
size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

}  // namespace

std::string JoinPath(std::string_view parent, std::string_view field) {
  if (parent.empty()) return std::string(field);
  std::string out(parent);
  out += ".";
  out += field;
  return out;
}

std::string IndexPath(std::string_view parent, size_t index) {
  return std::string(parent) + "[" + std::to_string(index) + "]";
}

std::string KeyPath(std::string_view parent, std::string_view key) {
  return std::string(parent) + "[" + std::string(key) + "]";
}

std::string SuggestClosest(std::string_view word, const std::vector<std::string_view>& candidates) {
  // Long words are compared only against candidates of similar length, keeping this cheap on
  // hostile input.
  if (word.size() > 64) return "";
  std::string found;
  for (std::string_view candidate : candidates) {
    if (candidate.size() + 1 < word.size() || word.size() + 1 < candidate.size()) continue;
    if (EditDistance(word, candidate) != 1) continue;
    if (!found.empty()) return "";  // ambiguous
    found = candidate;
  }
  return found;
}

std::string Quoted(std::string_view text) {
  return nlohmann::json(std::string(text))
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace strata
