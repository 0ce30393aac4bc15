// SPDX-License-Identifier: Apache-2.0
// The one parsing layer of numeric flags: what a flag's text means is what parse_number reads, in
// decimal, whatever the option's type (CLI11 alone reads "010" as octal 8 and "0x10" as 16).
#include "common/numbers.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "common/cli.hpp"
#include "common/error.hpp"

namespace fabricbench {
namespace {

// -n TEXT through a flag as the executables declare theirs; the value, or the error's text.
std::string parsed_iterations(const std::string& text) {
  CLI::App app("test");
  int iterations = 20;
  app.add_option("-n,--iters", iterations)->transform(number_in(NumberRange::between(1, 1e6)));
  const std::vector<std::string> argv = {"test", "-n", text};
  std::vector<const char*> pointers;
  for (const std::string& a : argv) pointers.push_back(a.c_str());
  try {
    parse_or_help(app, static_cast<int>(pointers.size()), pointers.data());
  } catch (const UsageError& e) {
    return e.what();
  }
  return std::to_string(iterations);
}

TEST(KernelNumber, OnlyDecimalDigitsWithOneFraction) {
  EXPECT_EQ(parse_kernel_number("262144", "x", NumberRange::at_least(0)), 262144);
  EXPECT_EQ(parse_kernel_number("2.5", "x", NumberRange::at_least(0)), 2.5);
  for (const char* text : {"1e6", "+5", "-5", "0x10", " 5", "5 ", ".5", "5.", "1.2.3", "", "nan", "inf"}) {
    try {
      parse_kernel_number(text, "f", NumberRange::at_least(0));
      ADD_FAILURE() << text;
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()), fmt::format("f: '{}' is not a number as the kernel writes one", text));
    }
  }
  EXPECT_THROW(parse_kernel_number("2147483648", "x", NumberRange::between(0, 2147483647)), UsageError);
}

TEST(NumberIn, AFlagMeansWhatItsDecimalTextSays) {
  EXPECT_EQ(parsed_iterations("010"), "10");  // not octal 8
  EXPECT_EQ(parsed_iterations("1e3"), "1000");
  EXPECT_EQ(parsed_iterations("+7"), "7");
  EXPECT_NE(parsed_iterations("0x10").find("'0x10' is not a number"), std::string::npos);
  EXPECT_NE(parsed_iterations("nan").find("is not a number"), std::string::npos);
  EXPECT_NE(parsed_iterations("inf").find("is not finite"), std::string::npos);
  EXPECT_NE(parsed_iterations("1000001").find("out of range (must be 1 to 1e+06)"), std::string::npos);
  EXPECT_NE(parsed_iterations("2.5").find("--iters"), std::string::npos);  // not an integer
}

}  // namespace
}  // namespace fabricbench
