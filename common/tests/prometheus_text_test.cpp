// SPDX-License-Identifier: Apache-2.0
#include "common/prometheus_text.hpp"

#include <gtest/gtest.h>

#include <limits>

#include "common/row.hpp"

namespace fabricbench::prom {
namespace {

TEST(PrometheusText, LabelValuesEscapeBackslashQuoteAndNewline) {
  EXPECT_EQ(escape_label_value("say \"hi\" \\ twice\nthen"), "say \\\"hi\\\" \\\\ twice\\nthen");
  EXPECT_EQ(escape_label_value("<script>"), "<script>");  // the format escapes nothing else
}

TEST(PrometheusText, NamesAndValuesAsTheFormatSpellsThem) {
  EXPECT_EQ(sanitize_name("rail-0.x"), "rail_0_x");
  EXPECT_EQ(sanitize_name("0day"), "_0day");
  EXPECT_EQ(format_value(1.5e9), "1500000000");
  EXPECT_EQ(format_value(2.5e-06), "2.5e-06");
  EXPECT_EQ(format_value(std::numeric_limits<double>::quiet_NaN()), "NaN");
  EXPECT_EQ(format_value(-std::numeric_limits<double>::infinity()), "-Inf");
}

TEST(PrometheusText, OneHelpAndTypePerFamilyAndOneValuePerSeries) {
  Exposition doc;
  doc.gauge("fb_x", "first", {{"a", "1"}}, 1);
  doc.gauge("fb_y", "other", {}, 3);
  doc.gauge("fb_x", "first", {{"a", "2"}}, 2);
  doc.gauge("fb_x", "first", {{"a", "1"}}, 9);  // same series again: dropped
  EXPECT_EQ(doc.text(),
            "# HELP fb_x first\n# TYPE fb_x gauge\nfb_x{a=\"1\"} 1\nfb_x{a=\"2\"} 2\n"
            "# HELP fb_y other\n# TYPE fb_y gauge\nfb_y 3\n");
}

TEST(PrometheusText, RowLabelsUseTheInspectorNames) {
  ResultRow row;
  row.benchmark = "fb_all_reduce";
  row.collective = "all_reduce";
  row.size_bytes = 1048576;
  row.ranks = 16;
  row.hosts = 2;
  row.host = "node07";
  row.library.set("function", "AllReduce");
  row.library.set("algorithm", "");  // unknown: no label
  row.library.set("channels", std::int64_t{4});
  const std::vector<LibraryColumn> library = {{"function", std::string(), "coll", false},
                                              {"algorithm", std::string(), "coll_algo", true},
                                              {"channels", std::int64_t{0}, "", true}};
  const Labels labels = labels_of(row, library);
  auto value = [&](const std::string& name) {
    for (const auto& [k, v] : labels)
      if (k == name) return v;
    return std::string("(none)");
  };
  EXPECT_EQ(value("coll"), "AllReduce");
  EXPECT_EQ(value("coll_msg_size_bytes"), "1048576");
  EXPECT_EQ(value("n_ranks"), "16");
  EXPECT_EQ(value("nnodes"), "2");
  EXPECT_EQ(value("hostname"), "node07");
  EXPECT_EQ(value("pair"), "(none)");  // -1: not a pair row, no label
  EXPECT_EQ(value("coll_algo"), "(none)");
  EXPECT_EQ(value("channels"), "(none)");  // a column without a label stays out
}

}  // namespace
}  // namespace fabricbench::prom
