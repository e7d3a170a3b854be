#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace strata {

// One problem found in a manifest document: the field's path ("spec.template.env[2].name") and
// what is wrong with it. Rendered as "<path>: <message>".
struct FieldError {
  std::string path;
  std::string message;

  std::string ToString() const { return path.empty() ? message : path + ": " + message; }
  bool operator==(const FieldError&) const = default;
};

// Collects every error found while decoding one document, so that a user sees all of them at
// once rather than one per attempt, and every warning: a field accepted although it means
// nothing in this mode (an image pull policy when pods run as local processes), which `apply`
// reports so that nothing is ignored silently. Owned by the decoding call; not thread-safe.
class FieldErrors {
 public:
  void Add(std::string path, std::string message) {
    errors_.push_back({std::move(path), std::move(message)});
  }
  void Warn(std::string path, std::string message) {
    warnings_.push_back({std::move(path), std::move(message)});
  }
  bool empty() const { return errors_.empty(); }
  size_t size() const { return errors_.size(); }
  const std::vector<FieldError>& list() const { return errors_; }
  const std::vector<FieldError>& warnings() const { return warnings_; }

 private:
  std::vector<FieldError> errors_;
  std::vector<FieldError> warnings_;
};

// "spec" + "replicas" -> "spec.replicas"; "" + "spec" -> "spec".
std::string JoinPath(std::string_view parent, std::string_view field);
// "spec.env" + 2 -> "spec.env[2]".
std::string IndexPath(std::string_view parent, size_t index);
// "spec.nodeLabels" + "a.b/c" -> "spec.nodeLabels[a.b/c]".
std::string KeyPath(std::string_view parent, std::string_view key);

// The candidate one edit (insertion, deletion, substitution or swap of neighbours) away from
// `word`, if exactly one is; otherwise empty. Used for "did you mean" hints.
std::string SuggestClosest(std::string_view word, const std::vector<std::string_view>& candidates);

// `text` as a JSON string literal: "three" -> "\"three\"".
std::string Quoted(std::string_view text);

}  // namespace strata
