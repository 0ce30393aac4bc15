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

TEST(JsonInput, AKeyGivenTwiceInOneObjectIsRefusedByName) {
  EXPECT_EQ(parse_json_input(R"({"a":1,"b":{"a":2},"c":[{"a":3},{"a":4}]})", "ok.json")["b"]["a"], 2);
  try {
    parse_json_input(R"({"rows":[{"size_bytes":8,"wrong":0,"wrong":5}]})", "run.json");
    FAIL() << "a key given twice was taken";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("run.json: key 'wrong' appears twice in one object"), std::string::npos)
        << e.what();
  }
  // A syntax error is left to the caller, which names the kind of file it expected.
  EXPECT_THROW(parse_json_input(R"({"a":)", "cut.json"), nlohmann::json::parse_error);
  EXPECT_TRUE(parse_json_input(R"({"a":)", "cut.json", false).is_discarded());
}

}  // namespace
}  // namespace fabricbench

namespace fabricbench {
namespace {

TEST(JsonInput, ANulByteAfterTheDocumentIsRefusedNotTheEndOfIt) {
  // nlohmann's parser stops at a NUL: a complete document followed by one read as if nothing came after.
  const std::string text = std::string("{\"a\": 1}") + '\0' + "garbage{{{";
  try {
    parse_json_input(text, "x.json");
    ADD_FAILURE() << "accepted";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "x.json: a NUL byte at byte 8: damaged, or not a text file");
  }
  EXPECT_TRUE(parse_json_input(text, "x.json", false).is_discarded());
}

}  // namespace
}  // namespace fabricbench
