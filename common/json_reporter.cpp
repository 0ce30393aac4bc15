// SPDX-License-Identifier: Apache-2.0
// JSON: {schema_version, complete, context, rows, totals, summary}. The .partial file is valid
// JSON of the rows finished so far at every moment: each row overwrites the closing "]}" with
// itself and the closing again (one write(2), so a killed run ends on a whole document). That
// costs one row's text per row, whatever the rows before it, and nothing is kept in memory. At the
// end the closing becomes totals and summary, and "complete" turns true in place.

#include <fmt/format.h>

#include "common/output_file.hpp"
#include "common/reporter.hpp"
#include "common/utf8.hpp"

namespace fabricbench {
namespace {

constexpr std::string_view kClosing = "\n]}\n";

class JsonReporter final : public Reporter {
 public:
  explicit JsonReporter(const std::string& path) : file_(path) {}

  void begin(const RunHeader& header) override {
    std::string head = fmt::format("{{\"schema_version\":{},\"complete\":", kSchemaVersion);
    complete_at_ = head.size();
    nlohmann::json context = header.context;
    if (!header.library_columns.empty()) context["library_columns"] = to_json(header.library_columns);
    head += "false,\"context\":" + json_text(context) + ",\"rows\":[";
    library_ = header.library_columns;
    end_ = head.size();
    file_.append(head + std::string(kClosing));
  }

  void add(const ResultRow& row) override {
    const std::string piece = (first_ ? "\n" : ",\n") + row_to_json_text(row, library_);
    file_.write_at(end_, piece + std::string(kClosing));
    end_ += piece.size();
    first_ = false;
  }

  void finish(const RunTotals& totals) override {
    nlohmann::json end = {{"totals",
                           {{"rows", totals.rows},
                            {"wrong_total", totals.wrong_total},
                            {"wall_seconds", totals.wall_seconds},
                            {"end_time", totals.end_time}}},
                          {"summary", to_json(totals.summary)}};
    const std::string ended_by = outputs_held_partial() && totals.ended_by.empty() ? "timeout" : totals.ended_by;
    if (!ended_by.empty()) end["ended_by"] = ended_by;
    std::string text = json_text(end);
    text.front() = ',';  // the object's members follow the rows
    file_.write_at(end_, "\n]" + text + "\n");
    // "false" and "true " are as long: the document stays valid while it turns complete.
    // A run that did not finish stays a valid document under the .partial name ("complete": false).
    if (!ended_by.empty()) return file_.keep_incomplete();
    file_.write_at(complete_at_, "true ");
    file_.commit();
  }

  void discard() noexcept override { file_.discard(); }

 private:
  OutputFile file_;
  std::vector<LibraryColumn> library_;
  std::uint64_t complete_at_ = 0;  // where the value of "complete" starts
  std::uint64_t end_ = 0;          // where the closing of the rows starts
  bool first_ = true;
};

}  // namespace

std::unique_ptr<Reporter> make_json_reporter(const std::string& path) { return std::make_unique<JsonReporter>(path); }

}  // namespace fabricbench
