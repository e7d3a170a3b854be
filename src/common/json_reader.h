#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "common/status.h"

namespace strata {

// The kind of the next JSON value.
enum class JsonType { kNull, kBool, kNumber, kString, kArray, kObject, kInvalid };

// A strict JSON (RFC 8259, UTF-8) pull reader over a complete text, for the request path: the
// gateway reads the few fields it routes and accounts by (model, stream, max_tokens, the prompt,
// usage) and skips everything else without building a document or copying it. Strings are
// validated (escapes, UTF-8, no raw control characters) even when skipped, so a body the reader
// accepts is one a document parser accepts.
//
// The first syntax error sticks: every later call returns kInvalid, false or nothing, and
// Finish reports the byte offset. Nesting deeper than kMaxDepth is an error too (it bounds the
// recursion of Skip).
//
// Use: Peek at the next value, then consume it with exactly one of Read*, Skip or
// BeginObject/BeginArray followed by NextKey/NextElement until they return false.
//
// Owned by one parse; not thread-safe. `text` must outlive the reader.
class JsonReader {
 public:
  static constexpr int kMaxDepth = 256;

  explicit JsonReader(std::string_view text) : text_(text) {}

  // The kind of the next value (skipping whitespace); kInvalid after an error or when no value
  // starts here.
  JsonType Peek();

  // REQUIRES: Peek() returned the matching kind. Return false on a syntax error.
  bool BeginObject();
  bool BeginArray();
  // Inside an object: reads the next key and its colon and returns true, the value being next;
  // returns false at the closing brace (consumed) or on an error. `*key` views the text, or
  // `scratch` when the key had escapes.
  bool NextKey(std::string_view* key, std::string* scratch);
  // Inside an array: true when another element follows; false at the closing bracket
  // (consumed) or on an error.
  bool NextElement();

  // Consume the next value when it has the method's kind; otherwise return false and consume
  // nothing (the caller Peeks first, or Skips after a false).
  //
  // Appends the unescaped string to `out`.
  bool ReadString(std::string* out);
  // Consumes a string without copying it; `*empty` tells whether its value is empty.
  bool ReadStringEmptiness(bool* empty);
  bool ReadBool(bool* value);
  // Sets `*value` and returns true when the number is an integer that fits int64_t; a number
  // that is not (a fraction, an exponent, out of range) is consumed and false returned.
  bool ReadInteger(int64_t* value);
  // Consumes the next value whatever it is.
  void Skip();

  // After the top-level value: OK when nothing but whitespace follows and no error happened;
  // otherwise kInvalidArgument "not valid JSON (byte N): <reason>".
  Status Finish();

  bool ok() const { return error_ == nullptr; }

 private:
  void Fail(const char* reason);
  // Inline: it runs before every token, and most find one at once.
  void SkipWhitespace() {
    if (pos_ < text_.size() && static_cast<unsigned char>(text_[pos_]) > ' ') return;
    SkipWhitespaceRun();
  }
  void SkipWhitespaceRun();
  bool Expect(char c, const char* reason);
  // Inside a container: consumes its `close` character and returns false, or (before every
  // member but the first) the separating comma and returns true.
  bool NextMember(char close, const char* comma_error);
  // Scans a string at pos_ (the opening quote); appends its unescaped value to `out` unless
  // null, and sets `*escaped` (when not null) to whether it had escapes. Returns false on an
  // error.
  bool ScanString(std::string* out, bool* escaped = nullptr);
  bool ScanEscape(std::string* out);
  bool ScanUtf8();
  // Scans a number at pos_; reports whether it had a fraction or exponent.
  bool ScanNumber(bool* integral);
  bool ScanLiteral(std::string_view word);
  bool Enter();

  std::string_view text_;
  size_t pos_ = 0;
  int depth_ = 0;
  // Per open container: whether its next member is its first (no comma before it).
  bool first_[kMaxDepth + 1] = {};
  const char* error_ = nullptr;
  size_t error_pos_ = 0;
};

// Finds the member `key` of the object `text` is, and returns its value's text (nullopt when
// `text` is not an object, or has no such member before the scan meets something it cannot
// read). A structural scan, not a strict reading: it finds where strings and nested values end
// and validates nothing else, for a text the gateway relays as it is and reads one member of (a
// replica's answer). The value is then read strictly with a JsonReader. Keys are compared as
// they are written: one with escapes does not match; the first match wins.
std::optional<std::string_view> FindMember(std::string_view text, std::string_view key);

// FindMember for several keys in one scan: values[i] gets the value of the first member named
// keys[i], or stays nullopt. REQUIRES: as many values as keys.
void FindMembers(std::string_view text, std::span<const std::string_view> keys,
                 std::span<std::optional<std::string_view>> values);

// The value of the object's last member when it is named `key`, found by FindMember's
// structural scan run from the end of `text`: nullopt when `text` does not end an object, its
// last member has another name, or the scan meets something it cannot read. For members that
// writers put last (OpenAI-compatible servers end an answer with `usage`), read without scanning
// what comes before them. The scan validates nothing else.
std::optional<std::string_view> FindLastMember(std::string_view text, std::string_view key);

}  // namespace strata
