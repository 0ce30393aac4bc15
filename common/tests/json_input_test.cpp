// SPDX-License-Identifier: Apache-2.0
#include "common/json_input.hpp"

#include <gtest/gtest.h>

#include <string>

#include "common/error.hpp"

namespace fabricbench {
namespace {

TEST(JsonNesting, CountsArraysAndObjectsButNotBracketsInStrings) {
  EXPECT_EQ(json_nesting("1"), 0u);
  EXPECT_EQ(json_nesting(R"({"rows":[{"a":[1,2]}]})"), 4u);
  EXPECT_EQ(json_nesting(R"({"tag":"[[[{{{"})"), 1u);
  EXPECT_EQ(json_nesting(R"({"tag":"quote \" then [[["})"), 1u);  // an escaped quote does not end the string
  EXPECT_EQ(json_nesting(R"({"tag":"backslash \\"} [[]])"), 2u);  // an escaped backslash does
}

TEST(JsonNesting, ADocumentDeeperThanAnyInputIsRefusedByName) {
  const std::string deep = std::string(kMaxJsonNesting + 1, '[') + std::string(kMaxJsonNesting + 1, ']');
  EXPECT_NO_THROW(check_json_nesting(deep.substr(1, deep.size() - 2), "ok.json"));
  try {
    check_json_nesting(deep, "deep.json");
    FAIL() << "a document nested beyond the limit was taken";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("deep.json: JSON nested 513 levels deep"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace fabricbench
