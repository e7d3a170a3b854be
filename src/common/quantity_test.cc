#include "common/quantity.h"

#include <gtest/gtest.h>

namespace strata {
namespace {

int64_t Milli(std::string_view text) {
  Result<Quantity> q = Quantity::Parse(text);
  EXPECT_TRUE(q) << text << ": " << (q ? "" : q.error().message());
  return q ? q->milli() : -1;
}

std::string ErrorOf(std::string_view text) {
  Result<Quantity> q = Quantity::Parse(text);
  EXPECT_FALSE(q) << text << " parsed as " << (q ? q->ToString() : "");
  return q ? "" : q.error().message();
}

TEST(QuantityTest, Grammar) {
  EXPECT_EQ(Milli("500m"), 500);
  EXPECT_EQ(Milli("1"), 1000);
  EXPECT_EQ(Milli("1.5"), 1500);
  EXPECT_EQ(Milli("2e3"), 2'000'000);
  EXPECT_EQ(Milli("2E3"), 2'000'000);
  EXPECT_EQ(Milli("1k"), 1'000'000);
  EXPECT_EQ(Milli("100Mi"), 100LL * 1024 * 1024 * 1000);
  EXPECT_EQ(Milli("24Gi"), 24LL * 1024 * 1024 * 1024 * 1000);
  EXPECT_EQ(Milli("1P"), 1'000'000'000'000'000'000LL);
  EXPECT_EQ(Milli(".5"), 500);
  EXPECT_EQ(Milli("5."), 5000);
  EXPECT_EQ(Milli("+3"), 3000);
  EXPECT_EQ(Milli("-250m"), -250);
  EXPECT_EQ(Milli("0"), 0);
  EXPECT_EQ(Milli("000.000"), 0);
  EXPECT_EQ(Milli("1e-3"), 1);
  EXPECT_EQ(Milli("1.5Gi"), 1536LL * 1024 * 1024 * 1000);
  EXPECT_EQ(Milli("0.5Ki"), 512'000);
}

TEST(QuantityTest, SubMilliPrecisionRoundsAwayFromZero) {
  EXPECT_EQ(Milli("0.0001"), 1);
  EXPECT_EQ(Milli("1.0001"), 1001);
  EXPECT_EQ(Milli("-0.0001"), -1);
  EXPECT_EQ(Milli("1e-40"), 1);
  EXPECT_EQ(Milli("1.000000000000000000000001"), 1001);
  EXPECT_EQ(Milli("1.000000000000000000000000"), 1000);
}

TEST(QuantityTest, ExactArithmetic) {
  Quantity a = *Quantity::Parse("100m");
  Quantity b = *Quantity::Parse("200m");
  EXPECT_EQ((a + b).milli(), 300);
  EXPECT_EQ((b - a).milli(), 100);
  EXPECT_EQ((a * 10).ToString(), "1");
  // Three tenths sum to exactly three tenths, unlike binary floating point.
  EXPECT_EQ(*Quantity::Parse("0.1") + *Quantity::Parse("0.2"), *Quantity::Parse("0.3"));
  EXPECT_EQ(*Quantity::Parse("1Ki"), *Quantity::Parse("1024"));
  EXPECT_LT(*Quantity::Parse("999m"), *Quantity::Parse("1"));
}

TEST(QuantityTest, Units) {
  EXPECT_EQ(Quantity::Parse("1500m")->Units(), 2);
  EXPECT_EQ(Quantity::Parse("2")->Units(), 2);
  EXPECT_EQ(Quantity::Parse("-1500m")->Units(), -1);
}

TEST(QuantityTest, CanonicalText) {
  auto canon = [](std::string_view text) { return Quantity::Parse(text)->ToString(); };
  EXPECT_EQ(canon("1.5"), "1500m");
  EXPECT_EQ(canon("1000"), "1k");
  EXPECT_EQ(canon("1024Mi"), "1Gi");
  EXPECT_EQ(canon("24Gi"), "24Gi");
  EXPECT_EQ(canon("1536Mi"), "1536Mi");
  EXPECT_EQ(canon("0.5Ki"), "512");
  EXPECT_EQ(canon("2e3"), "2e3");
  EXPECT_EQ(canon("1.5e3"), "1500");
  EXPECT_EQ(canon("1e-3"), "1e-3");
  EXPECT_EQ(canon("100Mi"), "100Mi");
  EXPECT_EQ(canon("0"), "0");
  // Found by the fuzzer: the largest values print with 19 digits and must parse back.
  EXPECT_EQ(canon("8040380044441144.4400"), "8040380044441144440m");
  for (std::string_view text :
       {"500m", "24Gi", "1k", "2e3", "7", "3Ti", "12M", "8040380044441144.4400", "-9e15"}) {
    Quantity q = *Quantity::Parse(text);
    EXPECT_EQ(*Quantity::Parse(q.ToString()), q) << text;
  }
}

TEST(QuantityTest, ErrorsSayWhatWasWrong) {
  EXPECT_EQ(ErrorOf("24GiB"), "\"24GiB\": unknown suffix \"GiB\"; did you mean \"Gi\"?");
  EXPECT_EQ(ErrorOf("24GB"), "\"24GB\": unknown suffix \"GB\"; did you mean \"G\"?");
  EXPECT_EQ(ErrorOf("1gi"), "\"1gi\": unknown suffix \"gi\"; did you mean \"Gi\"?");
  EXPECT_EQ(ErrorOf("1K"), "\"1K\": unknown suffix \"K\"; did you mean \"k\"?");
  EXPECT_EQ(ErrorOf("3 cores"), "\"3 cores\": unexpected whitespace");
  EXPECT_EQ(ErrorOf("2xyz"),
            "\"2xyz\": unknown suffix \"xyz\" (expected one of m, k, M, G, T, P, E, Ki, Mi, Gi, "
            "Ti, Pi, Ei, or e<exponent>)");
  EXPECT_EQ(ErrorOf(""), "empty quantity");
  EXPECT_EQ(ErrorOf("Gi"), "\"Gi\": expected a number at the start");
  EXPECT_EQ(ErrorOf("three"), "\"three\": expected a number at the start");
  EXPECT_EQ(ErrorOf("1.2.3"), "\"1.2.3\": more than one decimal point");
  // Milli-units in 64 bits hold up to about 9.2e15 units (8 PiB of memory).
  EXPECT_EQ(ErrorOf("1E"), "\"1E\": too large for a quantity");
  EXPECT_EQ(ErrorOf("16Ei"), "\"16Ei\": too large for a quantity");
  EXPECT_EQ(ErrorOf("1e100"), "\"1e100\": too large for a quantity");
  // Found by the fuzzer: 20 significant digits times 2^60 times 1000 must not overflow.
  EXPECT_EQ(ErrorOf("82227000000704667799.40Ei"),
            "\"82227000000704667799.40Ei\": too large for a quantity");
  EXPECT_EQ(ErrorOf("12345678901234567"), "\"12345678901234567\": too large for a quantity");
}

}  // namespace
}  // namespace strata
