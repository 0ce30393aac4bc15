// SPDX-License-Identifier: Apache-2.0
// fb_replay's console table: one line a row, whatever the trace named its communicator.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "common/row.hpp"
#include "replay/replay_table_reporter.hpp"

namespace fabricbench::replay {
namespace {

TEST(ReplayTable, ACommunicatorHashWithALineBreakStaysOnItsRow) {
  char* text = nullptr;
  std::size_t length = 0;
  std::FILE* out = open_memstream(&text, &length);
  ASSERT_NE(out, nullptr);
  {
    const auto table = make_replay_table_reporter(out);
    ResultRow row;
    row.collective = "all_reduce";
    row.settings.set("comm", "0x1f\nREGRESSION");
    row.size_bytes = 1024;
    row.count = 256;
    row.dtype = "float";
    table->add(row);
  }
  std::fclose(out);
  const std::string printed(text, length);
  std::free(text);
  EXPECT_NE(printed.find("0x1f\\nREGRESSION"), std::string::npos) << printed;
  EXPECT_EQ(printed.find("\nREGRESSION"), std::string::npos) << printed;
}

}  // namespace
}  // namespace fabricbench::replay
