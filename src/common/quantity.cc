#include "common/quantity.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <limits>
#include <vector>

#include "common/check.h"

namespace strata {
namespace {

using Int128 = __int128;

struct Suffix {
  std::string_view text;
  int decimal_power;  // value = number * 10^decimal_power * 2^binary_power
  int binary_power;
  Quantity::Format format;
};

constexpr std::array<Suffix, 14> kSuffixes = {{
    {"", 0, 0, Quantity::Format::kDecimalSI},
    {"m", -3, 0, Quantity::Format::kDecimalSI},
    {"k", 3, 0, Quantity::Format::kDecimalSI},
    {"M", 6, 0, Quantity::Format::kDecimalSI},
    {"G", 9, 0, Quantity::Format::kDecimalSI},
    {"T", 12, 0, Quantity::Format::kDecimalSI},
    {"P", 15, 0, Quantity::Format::kDecimalSI},
    {"E", 18, 0, Quantity::Format::kDecimalSI},
    {"Ki", 0, 10, Quantity::Format::kBinarySI},
    {"Mi", 0, 20, Quantity::Format::kBinarySI},
    {"Gi", 0, 30, Quantity::Format::kBinarySI},
    {"Ti", 0, 40, Quantity::Format::kBinarySI},
    {"Pi", 0, 50, Quantity::Format::kBinarySI},
    {"Ei", 0, 60, Quantity::Format::kBinarySI},
}};

constexpr int kMaxSignificantDigits = 20;
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

std::string Quote(std::string_view s) {
  std::string out = "\"";
  out += s;
  out += "\"";
  return out;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  }
  return true;
}

int EditDistance(std::string_view a, std::string_view b) {
  std::vector<int> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = static_cast<int>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      int subst = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, subst});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

// The known suffix a user most likely meant: same letters in another case first ("gi" -> "Gi"),
// then one edit away, preferring a suffix that the text starts with ("GiB" -> "Gi", "GB" -> "G").
std::string_view SuggestSuffix(std::string_view unknown) {
  for (const Suffix& s : kSuffixes) {
    if (!s.text.empty() && EqualsIgnoreCase(s.text, unknown)) return s.text;
  }
  std::string_view best;
  for (const Suffix& s : kSuffixes) {
    if (s.text.empty() || EditDistance(s.text, unknown) != 1) continue;
    bool is_prefix = unknown.substr(0, s.text.size()) == s.text;
    bool best_is_prefix = !best.empty() && unknown.substr(0, best.size()) == best;
    if (best.empty() || (is_prefix && !best_is_prefix) ||
        (is_prefix == best_is_prefix && s.text.size() > best.size())) {
      best = s.text;
    }
  }
  return best;
}

Status ParseError(std::string_view text, std::string_view what) {
  std::string message = Quote(text);
  message += ": ";
  message += what;
  return InvalidArgumentError(std::move(message));
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Parses an exponent suffix "e-3" / "E12". Returns false if `s` is not of that shape.
bool ParseExponent(std::string_view s, int* exponent) {
  if (s.size() < 2 || (s[0] != 'e' && s[0] != 'E')) return false;
  size_t i = 1;
  bool negative = false;
  if (s[i] == '+' || s[i] == '-') {
    negative = s[i] == '-';
    ++i;
  }
  if (i == s.size()) return false;
  int value = 0;
  for (; i < s.size(); ++i) {
    if (!IsDigit(s[i])) return false;
    value = std::min(value * 10 + (s[i] - '0'), 100000);
  }
  *exponent = negative ? -value : value;
  return true;
}

Int128 Pow10(int n) {
  Int128 r = 1;
  for (int i = 0; i < n; ++i) r *= 10;
  return r;
}

}  // namespace

Quantity Quantity::FromUnits(int64_t units, Format format) {
  int64_t milli;
  STRATA_CHECK(!__builtin_mul_overflow(units, 1000, &milli));
  return Quantity(milli, format);
}

Result<Quantity> Quantity::Parse(std::string_view text) {
  if (text.empty()) return Err(InvalidArgumentError("empty quantity"));
  size_t i = 0;
  bool negative = false;
  if (text[i] == '+' || text[i] == '-') {
    negative = text[i] == '-';
    ++i;
  }
  // Mantissa digits without the decimal point, and how many of them follow it.
  std::string digits;
  int fraction_digits = 0;
  bool seen_point = false;
  bool seen_digit = false;
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (IsDigit(c)) {
      seen_digit = true;
      if (seen_point) ++fraction_digits;
      digits.push_back(c);
    } else if (c == '.') {
      if (seen_point) return Err(ParseError(text, "more than one decimal point"));
      seen_point = true;
    } else {
      break;
    }
  }
  if (!seen_digit) {
    if (i < text.size() && std::isspace(static_cast<unsigned char>(text[i])))
      return Err(ParseError(text, "unexpected whitespace"));
    return Err(ParseError(text, "expected a number at the start"));
  }
  std::string_view suffix_text = text.substr(i);

  int exponent = 0;
  int binary_power = 0;
  Format format = Format::kDecimalSI;
  const Suffix* suffix = nullptr;
  for (const Suffix& s : kSuffixes) {
    if (s.text == suffix_text) suffix = &s;
  }
  if (suffix != nullptr) {
    exponent = suffix->decimal_power;
    binary_power = suffix->binary_power;
    format = suffix->format;
  } else if (ParseExponent(suffix_text, &exponent)) {
    format = Format::kDecimalExponent;
  } else {
    for (char c : suffix_text) {
      if (std::isspace(static_cast<unsigned char>(c)))
        return Err(ParseError(text, "unexpected whitespace"));
    }
    std::string message = "unknown suffix " + Quote(suffix_text);
    std::string_view suggestion = SuggestSuffix(suffix_text);
    if (!suggestion.empty()) {
      message += "; did you mean " + Quote(suggestion) + "?";
    } else {
      message += " (expected one of m, k, M, G, T, P, E, Ki, Mi, Gi, Ti, Pi, Ei, or e<exponent>)";
    }
    return Err(ParseError(text, message));
  }

  // Drop leading zeros and trailing fractional zeros; they carry no value.
  size_t first = digits.find_first_not_of('0');
  digits = first == std::string::npos ? "" : digits.substr(first);
  while (fraction_digits > 0 && !digits.empty() && digits.back() == '0') {
    digits.pop_back();
    --fraction_digits;
  }
  if (digits.empty()) return Quantity(0, format);
  // Digits past the 20th can only matter below one milli-unit (any value with 20 significant
  // digits at or above the milli-unit is out of range anyway): drop them, remembering whether
  // they were all zero, so that rounding away from zero stays exact.
  bool dropped_nonzero = false;
  if (static_cast<int>(digits.size()) > kMaxSignificantDigits) {
    int dropped = static_cast<int>(digits.size()) - kMaxSignificantDigits;
    dropped_nonzero = digits.find_first_not_of('0', kMaxSignificantDigits) != std::string::npos;
    digits.resize(kMaxSignificantDigits);
    fraction_digits -= dropped;
  }
  Int128 mantissa = 0;
  for (char c : digits) mantissa = mantissa * 10 + (c - '0');
  mantissa <<= binary_power;  // < 10^20 * 2^60 < 2^127: fits

  // milli = mantissa * 10^(exponent + 3 - fraction_digits), rounded away from zero.
  int power = exponent + 3 - fraction_digits;
  Int128 milli;
  if (power >= 0) {
    if (power > 38) return Err(ParseError(text, "too large for a quantity"));
    milli = mantissa;
    for (int p = 0; p < power && milli <= kMax; ++p) milli *= 10;  // stops before overflowing
  } else if (-power > 38) {
    milli = 1;  // a positive value below one milli-unit
  } else {
    Int128 divisor = Pow10(-power);
    milli = mantissa / divisor;
    if (mantissa % divisor != 0 || dropped_nonzero) ++milli;
  }
  if (milli > kMax) return Err(ParseError(text, "too large for a quantity"));
  int64_t value = static_cast<int64_t>(milli);
  return Quantity(negative ? -value : value, format);
}

int64_t Quantity::Units() const {
  int64_t units = milli_ / 1000;
  if (milli_ % 1000 > 0) ++units;
  return units;
}

std::string Quantity::ToString() const {
  if (milli_ == 0) return "0";
  bool whole = milli_ % 1000 == 0;
  int64_t units = milli_ / 1000;
  switch (format_) {
    case Format::kBinarySI:
      if (whole) {
        static constexpr std::array<std::string_view, 7> kBinary = {"",   "Ki", "Mi", "Gi",
                                                                    "Ti", "Pi", "Ei"};
        int k = 0;
        int64_t n = units;
        while (k < 6 && n % 1024 == 0) {
          n /= 1024;
          ++k;
        }
        return std::to_string(n) + std::string(kBinary[k]);
      }
      break;  // fractional binary quantities print as decimal SI, as in Kubernetes
    case Format::kDecimalExponent: {
      if (!whole) return std::to_string(milli_) + "e-3";
      int e = 0;
      int64_t n = units;
      while (n % 1000 == 0) {
        n /= 1000;
        e += 3;
      }
      return e == 0 ? std::to_string(n) : std::to_string(n) + "e" + std::to_string(e);
    }
    case Format::kDecimalSI:
      break;
  }
  if (!whole) return std::to_string(milli_) + "m";
  static constexpr std::array<std::string_view, 7> kDecimal = {"", "k", "M", "G", "T", "P", "E"};
  int k = 0;
  int64_t n = units;
  while (k < 6 && n % 1000 == 0) {
    n /= 1000;
    ++k;
  }
  return std::to_string(n) + std::string(kDecimal[k]);
}

Quantity Quantity::operator+(const Quantity& other) const {
  int64_t sum;
  STRATA_CHECK(!__builtin_add_overflow(milli_, other.milli_, &sum));
  return Quantity(sum, format_);
}

Quantity Quantity::operator-(const Quantity& other) const {
  int64_t diff;
  STRATA_CHECK(!__builtin_sub_overflow(milli_, other.milli_, &diff));
  return Quantity(diff, format_);
}

Quantity Quantity::operator*(int64_t factor) const {
  int64_t product;
  STRATA_CHECK(!__builtin_mul_overflow(milli_, factor, &product));
  return Quantity(product, format_);
}

}  // namespace strata
