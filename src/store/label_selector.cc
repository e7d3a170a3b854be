#include "store/label_selector.h"

#include <algorithm>

namespace strata::store {
namespace {

bool IsValueChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

// Keys may carry a DNS prefix: "strata.dev/team".
bool IsKeyChar(char c) { return IsValueChar(c) || c == '/'; }

}  // namespace

// Recursive descent over the selector text; every error names the byte offset where parsing
// stopped.
class LabelSelector::Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  Result<std::vector<Requirement>> ParseAll() {
    std::vector<Requirement> requirements;
    SkipSpaces();
    if (AtEnd()) return requirements;
    while (true) {
      ASSIGN_OR_RETURN(Requirement requirement, ParseRequirement());
      requirements.push_back(std::move(requirement));
      SkipSpaces();
      if (AtEnd()) return requirements;
      if (!Consume(',')) return Error("expected ',' or the end of the selector");
    }
  }

 private:
  Result<Requirement> ParseRequirement() {
    SkipSpaces();
    if (Consume('!')) {
      SkipSpaces();
      ASSIGN_OR_RETURN(std::string key, ParseKey());
      return Requirement{std::move(key), Operator::kDoesNotExist, {}};
    }
    ASSIGN_OR_RETURN(std::string key, ParseKey());
    SkipSpaces();
    if (AtEnd() || Peek() == ',') return Requirement{std::move(key), Operator::kExists, {}};
    if (ConsumeText("!=")) return WithSingleValue(std::move(key), Operator::kNotEquals, "'!='");
    if (ConsumeText("==")) return WithSingleValue(std::move(key), Operator::kEquals, "'=='");
    if (Consume('=')) return WithSingleValue(std::move(key), Operator::kEquals, "'='");
    size_t word_start = pos_;
    std::string word = ReadWhile(IsValueChar);
    if (word == "in" || word == "notin") {
      ASSIGN_OR_RETURN(std::vector<std::string> values, ParseValueSet(word));
      return Requirement{std::move(key), word == "in" ? Operator::kIn : Operator::kNotIn,
                         std::move(values)};
    }
    pos_ = word_start;
    return Error("expected '=', '==', '!=', 'in', 'notin', ',' or the end after label key '" + key +
                 "'");
  }

  Result<Requirement> WithSingleValue(std::string key, Operator op, std::string_view after) {
    SkipSpaces();
    std::string value = ReadWhile(IsValueChar);
    if (!AtEnd() && Peek() != ',' && Peek() != ' ' && Peek() != '\t') {
      return Error("invalid character in the value after " + std::string(after));
    }
    return Requirement{std::move(key), op, {std::move(value)}};
  }

  Result<std::vector<std::string>> ParseValueSet(const std::string& op) {
    SkipSpaces();
    if (!Consume('(')) return Error("expected '(' after '" + op + "'");
    std::vector<std::string> values;
    while (true) {
      SkipSpaces();
      std::string value = ReadWhile(IsValueChar);
      SkipSpaces();
      if (value.empty()) return Error("expected a value in the set after '" + op + "'");
      values.push_back(std::move(value));
      if (Consume(')')) return values;
      if (!Consume(',')) return Error("expected ',' or ')' in the set after '" + op + "'");
    }
  }

  Result<std::string> ParseKey() {
    std::string key = ReadWhile(IsKeyChar);
    if (key.empty()) return Error("expected a label key");
    return key;
  }

  template <typename Predicate>
  std::string ReadWhile(Predicate predicate) {
    size_t start = pos_;
    while (!AtEnd() && predicate(Peek())) ++pos_;
    return std::string(text_.substr(start, pos_ - start));
  }

  void SkipSpaces() {
    while (!AtEnd() && (Peek() == ' ' || Peek() == '\t')) ++pos_;
  }
  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek() const { return text_[pos_]; }
  bool Consume(char c) {
    if (AtEnd() || Peek() != c) return false;
    ++pos_;
    return true;
  }
  bool ConsumeText(std::string_view s) {
    if (text_.substr(pos_, s.size()) != s) return false;
    pos_ += s.size();
    return true;
  }
  tl::unexpected<Status> Error(const std::string& what) const {
    return Err(
        InvalidArgumentError("label selector: offset " + std::to_string(pos_) + ": " + what));
  }

  std::string_view text_;
  size_t pos_ = 0;
};

Result<LabelSelector> LabelSelector::Parse(std::string_view text) {
  ASSIGN_OR_RETURN(std::vector<Requirement> requirements, Parser(text).ParseAll());
  LabelSelector selector;
  selector.requirements_ = std::move(requirements);
  return selector;
}

bool LabelSelector::Matches(const Labels& labels) const {
  return std::all_of(requirements_.begin(), requirements_.end(),
                     [&](const Requirement& r) { return Satisfies(r, labels); });
}

bool LabelSelector::Satisfies(const Requirement& requirement, const Labels& labels) const {
  auto it = labels.find(requirement.key);
  bool present = it != labels.end();
  auto listed = [&] {
    return present && std::find(requirement.values.begin(), requirement.values.end(), it->second) !=
                          requirement.values.end();
  };
  switch (requirement.op) {
    case Operator::kEquals:
    case Operator::kIn:
      return listed();
    case Operator::kNotEquals:
    case Operator::kNotIn:
      return !listed();
    case Operator::kExists:
      return present;
    case Operator::kDoesNotExist:
      return !present;
  }
  return false;
}

std::string LabelSelector::ToString() const {
  std::string out;
  for (const Requirement& r : requirements_) {
    if (!out.empty()) out += ',';
    auto values = [&] {
      std::string list;
      for (const std::string& value : r.values) list += (list.empty() ? "" : ",") + value;
      return " (" + list + ")";
    };
    switch (r.op) {
      case Operator::kEquals:
        out += r.key + "=" + r.values.front();
        break;
      case Operator::kNotEquals:
        out += r.key + "!=" + r.values.front();
        break;
      case Operator::kIn:
        out += r.key + " in" + values();
        break;
      case Operator::kNotIn:
        out += r.key + " notin" + values();
        break;
      case Operator::kExists:
        out += r.key;
        break;
      case Operator::kDoesNotExist:
        out += "!" + r.key;
        break;
    }
  }
  return out;
}

}  // namespace strata::store
