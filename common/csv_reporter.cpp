// SPDX-License-Identifier: Apache-2.0
// CSV: a header line, then one line per (size, placement), appended as each row finishes.
#include <fmt/format.h>

#include <type_traits>

#include "common/output_file.hpp"
#include "common/reporter.hpp"

namespace fabricbench {
namespace {

std::string to_text(const FieldValue& value) {
  return std::visit(
      [](const auto& v) -> std::string {
        if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::string>)
          return csv_escape(v);
        else
          return fmt::format("{}", v);  // shortest text that reads back to the same double
      },
      value);
}

class CsvReporter final : public Reporter {
 public:
  explicit CsvReporter(const std::string& path) : file_(path) {}

  void begin(const RunHeader& run) override {
    library_ = run.library_columns;
    std::string header;
    for (const std::string& name : column_names(library_)) {
      if (!header.empty()) header += ',';
      header += name;
    }
    file_.append(header + "\n");
  }

  void add(const ResultRow& row) override {
    // Appended piece by piece: `"," + text` builds a temporary that GCC 12 at -O3 flags with a
    // false -Wrestrict.
    std::string line;
    for (const auto& [name, value] : fields_of(row, library_)) {
      if (!line.empty()) line += ',';
      line += to_text(value);
    }
    file_.append(line + "\n");
  }

  // A run that did not finish keeps its rows under the .partial name: a final name means complete.
  // (While a timeout is being reported, commit() keeps the .partial name itself.)
  void finish(const RunTotals& totals) override {
    if (totals.ended_by.empty())
      file_.commit();
    else
      file_.keep_incomplete();
  }

  void discard() noexcept override { file_.discard(); }

 private:
  OutputFile file_;
  std::vector<LibraryColumn> library_;
};

}  // namespace

std::unique_ptr<Reporter> make_csv_reporter(const std::string& path) { return std::make_unique<CsvReporter>(path); }

}  // namespace fabricbench
