// SPDX-License-Identifier: Apache-2.0
// JSON: {schema_version, context, rows, totals}. The document is rewritten (atomically) after every
// row, so the .partial file of an interrupted run is itself valid JSON.

#include "common/output_file.hpp"
#include "common/reporter.hpp"

namespace fabricbench {
namespace {

class JsonReporter final : public Reporter {
 public:
  explicit JsonReporter(const std::string& path) : file_(path) {}

  void begin(const RunHeader& header) override {
    document_ = {{"schema_version", kSchemaVersion},
                 {"complete", false},
                 {"context", header.context},
                 {"rows", nlohmann::json::array()}};
    file_.replace(document_.dump(1) + "\n");
  }

  void add(const ResultRow& row) override {
    document_["rows"].push_back(row_to_json(row));
    file_.replace(document_.dump(1) + "\n");
  }

  void finish(const RunTotals& totals) override {
    document_["complete"] = totals.ended_by.empty();
    document_["totals"] = {{"rows", totals.rows},
                           {"wrong_total", totals.wrong_total},
                           {"wall_seconds", totals.wall_seconds},
                           {"end_time", totals.end_time}};
    if (!totals.ended_by.empty()) document_["ended_by"] = totals.ended_by;
    document_["summary"] = to_json(totals.summary);
    file_.replace(document_.dump(1) + "\n");
    file_.commit();
  }

 private:
  OutputFile file_;
  nlohmann::json document_;
};

}  // namespace

std::unique_ptr<Reporter> make_json_reporter(const std::string& path) { return std::make_unique<JsonReporter>(path); }

}  // namespace fabricbench
