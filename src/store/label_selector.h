#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "store/object.h"

namespace strata::store {

// A Kubernetes label selector: a conjunction of requirements, parsed from the syntax of
// `kubectl get -l` and `?labelSelector=`:
//   a=b  a==b  a!=b  a in (x,y)  a notin (x)  a  !a      joined by ',' (AND)
// The empty selector matches everything. `a!=b` and `a notin (...)` also match objects without
// the label `a`, as in Kubernetes. An immutable value; thread-safe to share once built.
class LabelSelector {
 public:
  // Matches every object.
  LabelSelector() = default;

  // Parses `text`. On failure returns InvalidArgument whose message names the byte offset and
  // what was expected there: "label selector: offset 4: expected a value after '='".
  static Result<LabelSelector> Parse(std::string_view text);

  // True when `labels` satisfy every requirement.
  bool Matches(const Labels& labels) const;

  bool MatchesEverything() const { return requirements_.empty(); }

  // The selector in the syntax Parse reads, as `?labelSelector=` sends it to another API
  // server: "a=b,c notin (x,y),!d". Parse(ToString()) selects the same objects.
  std::string ToString() const;

 private:
  enum class Operator { kEquals, kNotEquals, kIn, kNotIn, kExists, kDoesNotExist };
  struct Requirement {
    std::string key;
    Operator op;
    std::vector<std::string> values;
  };
  class Parser;

  bool Satisfies(const Requirement& requirement, const Labels& labels) const;

  std::vector<Requirement> requirements_;
};

}  // namespace strata::store
