#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace strata {

// A Kubernetes resource quantity ("500m", "24Gi", "1.5", "2e3", "1k", "100Mi"), held exactly as
// a signed 64-bit count of milli-units. Parsing follows Kubernetes' grammar:
//
//   quantity  ::= sign? number suffix
//   number    ::= digits | digits "." digits? | "." digits
//   suffix    ::= "" | "m" | "k" | "M" | "G" | "T" | "P" | "E"          (decimal SI)
//              |  "Ki" | "Mi" | "Gi" | "Ti" | "Pi" | "Ei"               (binary SI)
//              |  ("e" | "E") sign? digits                               (decimal exponent)
//
// Precision finer than one milli-unit rounds away from zero, as Kubernetes does ("0.0001" is
// 1m). The range is that of int64 milli-units, about +-9.2e15 units (8 PiB); larger values are
// an error. Arithmetic is exact; overflow is a broken invariant (CHECK), since parsed values are
// bounded far below it. A value type: cheap to copy, thread-compatible.
class Quantity {
 public:
  // How the quantity was written; ToString() keeps the family.
  enum class Format { kDecimalSI, kBinarySI, kDecimalExponent };

  Quantity() = default;

  static Quantity FromMilli(int64_t milli, Format format = Format::kDecimalSI) {
    return Quantity(milli, format);
  }
  // REQUIRES: |units| * 1000 fits in int64.
  static Quantity FromUnits(int64_t units, Format format = Format::kDecimalSI);

  // Parses `text`. On failure the error (kInvalidArgument) quotes the text and says what was
  // wrong, e.g. "\"24GiB\": unknown suffix \"GiB\"; did you mean \"Gi\"?".
  static Result<Quantity> Parse(std::string_view text);

  int64_t milli() const { return milli_; }
  // Whole units, rounded up (towards +infinity), like Kubernetes' Quantity.Value().
  int64_t Units() const;
  Format format() const { return format_; }
  bool IsZero() const { return milli_ == 0; }

  // The canonical text, in the family it was written in: "1500m", "24Gi", "2k", "2e3".
  std::string ToString() const;

  Quantity operator+(const Quantity& other) const;
  Quantity operator-(const Quantity& other) const;
  Quantity operator*(int64_t factor) const;
  Quantity& operator+=(const Quantity& other) { return *this = *this + other; }
  Quantity& operator-=(const Quantity& other) { return *this = *this - other; }

  // Compares values only; the format does not matter ("1Ki" == "1024").
  bool operator==(const Quantity& other) const { return milli_ == other.milli_; }
  std::strong_ordering operator<=>(const Quantity& other) const { return milli_ <=> other.milli_; }

 private:
  Quantity(int64_t milli, Format format) : milli_(milli), format_(format) {}

  int64_t milli_ = 0;
  Format format_ = Format::kDecimalSI;
};

}  // namespace strata
