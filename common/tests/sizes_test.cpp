// SPDX-License-Identifier: Apache-2.0
#include "common/sizes.hpp"

#include <gtest/gtest.h>

#include "common/error.hpp"

namespace fabricbench {
namespace {

TEST(ParseBytes, AcceptsPlainNumbersAndBinarySuffixes) {
  EXPECT_EQ(parse_bytes("8", "-b"), 8u);
  EXPECT_EQ(parse_bytes("64K", "-b"), 65536u);
  EXPECT_EQ(parse_bytes("64KiB", "-b"), 65536u);
  EXPECT_EQ(parse_bytes("1m", "-b"), 1048576u);
  EXPECT_EQ(parse_bytes("8G", "-b"), 8589934592u);
  EXPECT_EQ(parse_bytes("1.5K", "-b"), 1536u);
  EXPECT_EQ(parse_bytes("12B", "-b"), 12u);
}

TEST(ParseBytes, RejectsZeroNegativeGarbledAndFractionalBytes) {
  for (const char* bad : {"0", "-8", "", "abc", "12X", "1.5", "K", "8 M", "1e30G"})
    EXPECT_THROW(parse_bytes(bad, "-b"), UsageError) << bad;
}

TEST(ParseBytes, ErrorNamesTheFlagAndTheValue) {
  try {
    parse_bytes("12X", "-e/--maxbytes");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("-e/--maxbytes"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("12X"), std::string::npos);
  }
}

TEST(ParseBytes, NotANumberOrInfinityIsSaidSoNotTooLarge) {
  for (const auto& [text, why] : {std::pair{"nan", "(not a number)"}, std::pair{"inf", "(not finite)"}}) {
    try {
      parse_bytes(text, "-b");
      FAIL() << text;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  }
}

TEST(FormatBytes, UsesBinaryUnits) {
  EXPECT_EQ(format_bytes(8), "8 B");
  EXPECT_EQ(format_bytes(65536), "64 KiB");
  EXPECT_EQ(format_bytes(1536), "1.5 KiB");
  EXPECT_EQ(format_bytes(8ull << 30), "8 GiB");
}

TEST(MakeSweep, GeometricFromEightBytesToSixtyFourMegabytes) {
  const auto sizes = make_sweep({8, 64ull << 20, 2.0, std::nullopt});
  ASSERT_EQ(sizes.size(), 24u);  // 2^3 .. 2^26
  EXPECT_EQ(sizes.front(), 8u);
  EXPECT_EQ(sizes.back(), 64ull << 20);
}

TEST(MakeSweep, GeometricNeverPassesMax) {
  EXPECT_EQ(make_sweep({100, 1000, 3.0, std::nullopt}), (std::vector<std::uint64_t>{100, 300, 900}));
}

TEST(MakeSweep, ArithmeticStep) {
  EXPECT_EQ(make_sweep({1024, 4096, 2.0, 1024}), (std::vector<std::uint64_t>{1024, 2048, 3072, 4096}));
}

TEST(MakeSweep, SingleSizeWhenMinEqualsMax) {
  EXPECT_EQ(make_sweep({4096, 4096, 2.0, std::nullopt}), (std::vector<std::uint64_t>{4096}));
}

TEST(MakeSweep, SmallFactorStillAdvances) {
  const auto sizes = make_sweep({1, 4, 1.1, std::nullopt});
  EXPECT_EQ(sizes, (std::vector<std::uint64_t>{1, 2, 3, 4}));
}

}  // namespace
}  // namespace fabricbench
