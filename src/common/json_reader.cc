#include "common/json_reader.h"

#include <fmt/format.h>

#include <array>
#include <bit>
#include <cstring>
#include <limits>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace strata {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Bytes a string's text may hold as they are: not the quote, not the backslash, no control
// character, and ASCII (other bytes are checked as UTF-8). A table, since every byte of a body's
// strings goes through it.
constexpr std::array<bool, 256> kPlainStringByte = [] {
  std::array<bool, 256> table{};
  for (int c = 0x20; c < 0x80; ++c) table[c] = c != '"' && c != '\\';
  return table;
}();

// The length of the run of plain string bytes (kPlainStringByte) that starts at `p`: sixteen
// bytes at a time with SSE2 (x86-64's baseline), then eight at a time on a 64-bit word, then one
// at a time. On a word: a byte equal to the quote or the backslash shows as a zero byte of the
// word xor that byte, a byte below 0x20 by the borrow its subtraction leaves in its high bit, a
// byte at or above 0x80 by its own high bit. These tests can also flag bytes after the first
// one they find (the borrow carries upwards) but never before it, so the lowest flag is the
// first special byte.
static_assert(std::endian::native == std::endian::little, "the lowest flag is the first byte");
size_t PlainStringRun(const char* p, const char* end) {
  const char* run = p;
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\');
  const __m128i space = _mm_set1_epi8(0x20);
  while (end - run >= 16) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(run));
    // A signed comparison: bytes from 0x80 are negative, so below 0x20 too.
    const __m128i special =
        _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(bytes, quote), _mm_cmpeq_epi8(bytes, backslash)),
                     _mm_cmplt_epi8(bytes, space));
    const auto mask = static_cast<unsigned>(_mm_movemask_epi8(special));
    if (mask != 0) return static_cast<size_t>(run - p) + std::countr_zero(mask);
    run += 16;
  }
#endif
  constexpr uint64_t kOnes = 0x0101010101010101, kHighs = 0x8080808080808080;
  const auto has_zero_byte = [](uint64_t v) { return (v - kOnes) & ~v & kHighs; };
  while (end - run >= 8) {
    uint64_t word;
    std::memcpy(&word, run, sizeof word);
    const uint64_t special = has_zero_byte(word ^ (kOnes * '"')) |
                             has_zero_byte(word ^ (kOnes * '\\')) |
                             ((word - kOnes * 0x20) & ~word & kHighs) | (word & kHighs);
    if (special != 0) return static_cast<size_t>(run - p) + std::countr_zero(special) / 8;
    run += 8;
  }
  while (run < end && kPlainStringByte[static_cast<unsigned char>(*run)]) ++run;
  return static_cast<size_t>(run - p);
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void AppendUtf8(uint32_t code_point, std::string* out) {
  if (code_point < 0x80) {
    out->push_back(static_cast<char>(code_point));
  } else if (code_point < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (code_point >> 6)));
    out->push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  } else if (code_point < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (code_point >> 12)));
    out->push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (code_point >> 18)));
    out->push_back(static_cast<char>(0x80 | ((code_point >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  }
}

}  // namespace

void JsonReader::Fail(const char* reason) {
  if (error_ != nullptr) return;
  error_ = reason;
  error_pos_ = pos_;
}

void JsonReader::SkipWhitespaceRun() {
  while (pos_ < text_.size()) {
    const char c = text_[pos_];
    if (c != ' ' && c != '\n' && c != '\r' && c != '\t') return;
    ++pos_;
  }
}

bool JsonReader::Expect(char c, const char* reason) {
  SkipWhitespace();
  if (pos_ < text_.size() && text_[pos_] == c) {
    ++pos_;
    return true;
  }
  Fail(reason);
  return false;
}

JsonType JsonReader::Peek() {
  if (!ok()) return JsonType::kInvalid;
  SkipWhitespace();
  if (pos_ >= text_.size()) {
    Fail("unexpected end of input");
    return JsonType::kInvalid;
  }
  switch (text_[pos_]) {
    case '{':
      return JsonType::kObject;
    case '[':
      return JsonType::kArray;
    case '"':
      return JsonType::kString;
    case 't':
    case 'f':
      return JsonType::kBool;
    case 'n':
      return JsonType::kNull;
    default:
      if (text_[pos_] == '-' || IsDigit(text_[pos_])) return JsonType::kNumber;
      Fail("unexpected character");
      return JsonType::kInvalid;
  }
}

bool JsonReader::Enter() {
  if (depth_ == kMaxDepth) {
    Fail("nesting too deep");
    return false;
  }
  ++pos_;
  first_[++depth_] = true;
  return true;
}

bool JsonReader::BeginObject() { return ok() && Enter(); }

bool JsonReader::BeginArray() { return ok() && Enter(); }

bool JsonReader::NextMember(char close, const char* comma_error) {
  if (!ok()) return false;
  SkipWhitespace();
  if (pos_ < text_.size() && text_[pos_] == close) {
    ++pos_;
    --depth_;
    return false;
  }
  if (!first_[depth_] && !Expect(',', comma_error)) return false;
  first_[depth_] = false;
  return true;
}

bool JsonReader::NextKey(std::string_view* key, std::string* scratch) {
  if (!NextMember('}', "expected ',' or '}'")) return false;
  SkipWhitespace();
  if (pos_ >= text_.size() || text_[pos_] != '"') {
    Fail("expected a string key");
    return false;
  }
  const size_t start = pos_;
  bool escaped = false;
  if (!ScanString(nullptr, &escaped)) return false;
  if (!escaped) {
    *key = text_.substr(start + 1, pos_ - 2 - start);  // the raw text: no copy
  } else {
    const size_t end = pos_;
    pos_ = start;
    scratch->clear();
    ScanString(scratch);
    pos_ = end;
    *key = *scratch;
  }
  return Expect(':', "expected ':'");
}

bool JsonReader::NextElement() { return NextMember(']', "expected ',' or ']'"); }

bool JsonReader::ScanUtf8() {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(text_[pos_ + i]); };
  const unsigned char lead = byte(0);
  size_t length = 0;
  uint32_t code_point = 0;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
    code_point = lead & 0x1F;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    code_point = lead & 0x0F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    code_point = lead & 0x07;
  } else {
    Fail("invalid UTF-8");
    return false;
  }
  if (pos_ + length > text_.size()) {
    Fail("invalid UTF-8");
    return false;
  }
  for (size_t i = 1; i < length; ++i) {
    if ((byte(i) & 0xC0) != 0x80) {
      Fail("invalid UTF-8");
      return false;
    }
    code_point = (code_point << 6) | (byte(i) & 0x3F);
  }
  // Overlong forms, UTF-16 surrogates and values past U+10FFFF are not UTF-8.
  if ((length == 3 && (code_point < 0x800 || (code_point >= 0xD800 && code_point <= 0xDFFF))) ||
      (length == 4 && (code_point < 0x10000 || code_point > 0x10FFFF))) {
    Fail("invalid UTF-8");
    return false;
  }
  pos_ += length;
  return true;
}

bool JsonReader::ScanEscape(std::string* out) {
  // pos_ is at the backslash.
  if (pos_ + 1 >= text_.size()) {
    Fail("unterminated string");
    return false;
  }
  const char kind = text_[pos_ + 1];
  const char* simple = nullptr;
  switch (kind) {
    case '"':
      simple = "\"";
      break;
    case '\\':
      simple = "\\";
      break;
    case '/':
      simple = "/";
      break;
    case 'b':
      simple = "\b";
      break;
    case 'f':
      simple = "\f";
      break;
    case 'n':
      simple = "\n";
      break;
    case 'r':
      simple = "\r";
      break;
    case 't':
      simple = "\t";
      break;
    case 'u':
      break;
    default:
      Fail("invalid escape");
      return false;
  }
  if (simple != nullptr) {
    if (out != nullptr) out->push_back(*simple);
    pos_ += 2;
    return true;
  }
  const auto read_hex4 = [&](size_t at, uint32_t* unit) {
    if (at + 4 > text_.size()) return false;
    *unit = 0;
    for (size_t i = 0; i < 4; ++i) {
      const int digit = HexValue(text_[at + i]);
      if (digit < 0) return false;
      *unit = *unit * 16 + static_cast<uint32_t>(digit);
    }
    return true;
  };
  uint32_t unit = 0;
  if (!read_hex4(pos_ + 2, &unit)) {
    Fail("invalid \\u escape");
    return false;
  }
  size_t consumed = 6;
  uint32_t code_point = unit;
  if (unit >= 0xD800 && unit <= 0xDBFF) {
    // A high surrogate must be followed by an escaped low one.
    uint32_t low = 0;
    if (pos_ + 12 > text_.size() || text_[pos_ + 6] != '\\' || text_[pos_ + 7] != 'u' ||
        !read_hex4(pos_ + 8, &low) || low < 0xDC00 || low > 0xDFFF) {
      Fail("unpaired UTF-16 surrogate");
      return false;
    }
    code_point = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
    consumed = 12;
  } else if (unit >= 0xDC00 && unit <= 0xDFFF) {
    Fail("unpaired UTF-16 surrogate");
    return false;
  }
  if (out != nullptr) AppendUtf8(code_point, out);
  pos_ += consumed;
  return true;
}

bool JsonReader::ScanString(std::string* out, bool* escaped) {
  ++pos_;  // the opening quote
  while (true) {
    // The common case, plain ASCII text, is copied a run at a time.
    const size_t run = pos_ + PlainStringRun(text_.data() + pos_, text_.data() + text_.size());
    if (out != nullptr) out->append(text_.data() + pos_, run - pos_);
    pos_ = run;
    if (pos_ >= text_.size()) {
      Fail("unterminated string");
      return false;
    }
    const unsigned char c = static_cast<unsigned char>(text_[pos_]);
    if (c == '"') {
      ++pos_;
      return true;
    }
    if (c == '\\') {
      if (escaped != nullptr) *escaped = true;
      if (!ScanEscape(out)) return false;
    } else if (c < 0x20) {
      Fail("control character in string");
      return false;
    } else {
      const size_t start = pos_;
      if (!ScanUtf8()) return false;
      if (out != nullptr) out->append(text_.data() + start, pos_ - start);
    }
  }
}

bool JsonReader::ScanNumber(bool* integral) {
  *integral = true;
  if (text_[pos_] == '-') ++pos_;
  if (pos_ >= text_.size() || !IsDigit(text_[pos_])) {
    Fail("invalid number");
    return false;
  }
  if (text_[pos_] == '0') {
    ++pos_;
  } else {
    while (pos_ < text_.size() && IsDigit(text_[pos_])) ++pos_;
  }
  if (pos_ < text_.size() && text_[pos_] == '.') {
    *integral = false;
    ++pos_;
    if (pos_ >= text_.size() || !IsDigit(text_[pos_])) {
      Fail("invalid number");
      return false;
    }
    while (pos_ < text_.size() && IsDigit(text_[pos_])) ++pos_;
  }
  if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
    *integral = false;
    ++pos_;
    if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
    if (pos_ >= text_.size() || !IsDigit(text_[pos_])) {
      Fail("invalid number");
      return false;
    }
    while (pos_ < text_.size() && IsDigit(text_[pos_])) ++pos_;
  }
  return true;
}

bool JsonReader::ScanLiteral(std::string_view word) {
  if (text_.substr(pos_, word.size()) != word) {
    Fail("invalid literal");
    return false;
  }
  pos_ += word.size();
  return true;
}

bool JsonReader::ReadString(std::string* out) {
  return Peek() == JsonType::kString && ScanString(out);
}

bool JsonReader::ReadStringEmptiness(bool* empty) {
  if (Peek() != JsonType::kString) return false;
  const size_t start = pos_;
  if (!ScanString(nullptr)) return false;
  *empty = pos_ - start == 2;  // an escape always stands for at least one character
  return true;
}

bool JsonReader::ReadBool(bool* value) {
  if (Peek() != JsonType::kBool) return false;
  *value = text_[pos_] == 't';
  return ScanLiteral(*value ? "true" : "false");
}

bool JsonReader::ReadInteger(int64_t* value) {
  if (Peek() != JsonType::kNumber) return false;
  const size_t start = pos_;
  bool integral = false;
  if (!ScanNumber(&integral) || !integral) return false;
  const bool negative = text_[start] == '-';
  uint64_t magnitude = 0;
  for (size_t i = negative ? start + 1 : start; i < pos_; ++i) {
    const uint64_t digit = static_cast<uint64_t>(text_[i] - '0');
    if (magnitude > (std::numeric_limits<uint64_t>::max() - digit) / 10) return false;
    magnitude = magnitude * 10 + digit;
  }
  const uint64_t limit = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  if (magnitude > limit + (negative ? 1 : 0)) return false;
  *value = negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
  return true;
}

void JsonReader::Skip() {
  switch (Peek()) {
    case JsonType::kObject: {
      if (!BeginObject()) return;
      std::string_view key;
      std::string scratch;
      while (NextKey(&key, &scratch)) Skip();
      return;
    }
    case JsonType::kArray:
      if (!BeginArray()) return;
      while (NextElement()) Skip();
      return;
    case JsonType::kString:
      ScanString(nullptr);
      return;
    case JsonType::kNumber: {
      bool integral = false;
      ScanNumber(&integral);
      return;
    }
    case JsonType::kBool:
      ScanLiteral(text_[pos_] == 't' ? "true" : "false");
      return;
    case JsonType::kNull:
      ScanLiteral("null");
      return;
    case JsonType::kInvalid:
      return;
  }
}

Status JsonReader::Finish() {
  if (ok()) {
    SkipWhitespace();
    if (pos_ < text_.size()) Fail("unexpected data after the value");
  }
  if (ok()) return Status::Ok();
  return InvalidArgumentError(fmt::format("not valid JSON (byte {}): {}", error_pos_, error_));
}

namespace {

// The structural scan of FindMember. Each Skip* moves `pos` past one element of `text` and
// returns false when the text ends first or has no such element there.
class MemberScan {
 public:
  explicit MemberScan(std::string_view text) : text_(text) {}

  // Fills values[i] with the first member named keys[i] until every key has one, the object
  // ends or the scan meets something it cannot read.
  void Find(std::span<const std::string_view> keys,
            std::span<std::optional<std::string_view>> values) {
    size_t missing = keys.size();
    SkipWhitespace();
    if (!Take('{')) return;
    for (bool first = true; missing > 0; first = false) {
      SkipWhitespace();
      if (Take('}')) return;
      if (!first && !Take(',')) return;
      SkipWhitespace();
      const size_t key_start = pos_ + 1;
      if (!SkipString()) return;
      const std::string_view name = text_.substr(key_start, pos_ - 1 - key_start);
      SkipWhitespace();
      if (!Take(':')) return;
      SkipWhitespace();
      const size_t value_start = pos_;
      if (!SkipValue()) return;
      for (size_t i = 0; i < keys.size(); ++i) {
        if (!values[i] && name == keys[i]) {
          values[i] = text_.substr(value_start, pos_ - value_start);
          --missing;
        }
      }
    }
  }

 private:
  void SkipWhitespace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' ||
                                   text_[pos_] == '\r' || text_[pos_] == '\t')) {
      ++pos_;
    }
  }
  bool Take(char c) {
    if (pos_ >= text_.size() || text_[pos_] != c) return false;
    ++pos_;
    return true;
  }
  // A string at pos_: to the first quote after it that an odd run of backslashes does not
  // escape.
  bool SkipString() {
    if (!Take('"')) return false;
    while (pos_ < text_.size()) {
      const void* quote = std::memchr(text_.data() + pos_, '"', text_.size() - pos_);
      if (quote == nullptr) return false;
      const size_t at = static_cast<size_t>(static_cast<const char*>(quote) - text_.data());
      size_t backslashes = 0;
      while (at - backslashes > pos_ && text_[at - backslashes - 1] == '\\') ++backslashes;
      pos_ = at + 1;
      if (backslashes % 2 == 0) return true;
    }
    return false;
  }
  // Any value: a string, an object or array to its matching close (strings inside skipped),
  // or a number or literal to the next delimiter.
  bool SkipValue() {
    if (pos_ >= text_.size()) return false;
    const char c = text_[pos_];
    if (c == '"') return SkipString();
    if (c != '{' && c != '[') {
      const size_t start = pos_;
      while (pos_ < text_.size() && text_[pos_] != ',' && text_[pos_] != '}' &&
             text_[pos_] != ']' && text_[pos_] != ' ' && text_[pos_] != '\n' &&
             text_[pos_] != '\r' && text_[pos_] != '\t') {
        ++pos_;
      }
      return pos_ > start;
    }
    size_t depth = 0;
    while (pos_ < text_.size()) {
      switch (text_[pos_]) {
        case '"':
          if (!SkipString()) return false;
          continue;
        case '{':
        case '[':
          ++depth;
          break;
        case '}':
        case ']':
          if (--depth == 0) {
            ++pos_;
            return true;
          }
          break;
        default:
          break;
      }
      ++pos_;
    }
    return false;
  }

  std::string_view text_;
  size_t pos_ = 0;
};

bool IsJsonWhitespace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// The structural scan of FindLastMember: MemberScan's, from the end of the text backwards.
// `end_` is one past the next byte to read; each Skip* moves it to the first byte of one element
// and returns false when the text starts first or has no such element there.
class LastMemberScan {
 public:
  explicit LastMemberScan(std::string_view text) : text_(text), end_(text.size()) {}

  std::optional<std::string_view> Find(std::string_view key) {
    SkipWhitespace();
    if (!Take('}')) return std::nullopt;
    SkipWhitespace();
    const size_t value_end = end_;
    if (!SkipValue()) return std::nullopt;
    const std::string_view value = text_.substr(end_, value_end - end_);
    SkipWhitespace();
    if (!Take(':')) return std::nullopt;
    SkipWhitespace();
    const size_t key_end = end_;
    if (!SkipString()) return std::nullopt;
    const std::string_view name = text_.substr(end_ + 1, key_end - end_ - 2);
    SkipWhitespace();
    // The member is the object's: a comma or the object's brace comes before it.
    if (end_ == 0 || (text_[end_ - 1] != ',' && text_[end_ - 1] != '{')) return std::nullopt;
    if (name != key) return std::nullopt;
    return value;
  }

 private:
  void SkipWhitespace() {
    while (end_ > 0 && IsJsonWhitespace(text_[end_ - 1])) --end_;
  }
  bool Take(char c) {
    if (end_ == 0 || text_[end_ - 1] != c) return false;
    --end_;
    return true;
  }
  // Whether the quote at `at` is escaped: an odd run of backslashes before it. Outside strings
  // JSON has no backslash, so the run belongs to the string the quote is in.
  bool Escaped(size_t at) const {
    size_t backslashes = 0;
    while (at > backslashes && text_[at - backslashes - 1] == '\\') ++backslashes;
    return backslashes % 2 == 1;
  }
  // A string ending at end_: back to the first quote before its last that is not escaped
  // (inside a string every quote is).
  bool SkipString() {
    if (end_ == 0 || text_[end_ - 1] != '"' || Escaped(end_ - 1)) return false;
    size_t at = end_ - 1;
    while (at > 0) {
      const void* quote = memrchr(text_.data(), '"', at);
      if (quote == nullptr) return false;
      at = static_cast<size_t>(static_cast<const char*>(quote) - text_.data());
      if (!Escaped(at)) {
        end_ = at;
        return true;
      }
    }
    return false;
  }
  // Any value ending at end_: a string, an object or array back to its matching open (strings
  // inside skipped), or a number or literal back to the previous delimiter (a quote there
  // leaves it empty: no value).
  bool SkipValue() {
    if (end_ == 0) return false;
    const char c = text_[end_ - 1];
    if (c == '"') return SkipString();
    if (c != '}' && c != ']') {
      const size_t value_end = end_;
      while (end_ > 0 && text_[end_ - 1] != ',' && text_[end_ - 1] != ':' &&
             text_[end_ - 1] != '{' && text_[end_ - 1] != '[' && text_[end_ - 1] != '"' &&
             !IsJsonWhitespace(text_[end_ - 1])) {
        --end_;
      }
      return end_ < value_end;
    }
    size_t depth = 0;
    while (end_ > 0) {
      switch (text_[end_ - 1]) {
        case '"':
          if (!SkipString()) return false;
          continue;
        case '}':
        case ']':
          ++depth;
          break;
        case '{':
        case '[':
          if (--depth == 0) {
            --end_;
            return true;
          }
          break;
        default:
          break;
      }
      --end_;
    }
    return false;
  }

  std::string_view text_;
  size_t end_;
};

}  // namespace

std::optional<std::string_view> FindMember(std::string_view text, std::string_view key) {
  std::optional<std::string_view> value;
  MemberScan(text).Find(std::span(&key, 1), std::span(&value, 1));
  return value;
}

void FindMembers(std::string_view text, std::span<const std::string_view> keys,
                 std::span<std::optional<std::string_view>> values) {
  MemberScan(text).Find(keys, values);
}

std::optional<std::string_view> FindLastMember(std::string_view text, std::string_view key) {
  return LastMemberScan(text).Find(key);
}

}  // namespace strata
