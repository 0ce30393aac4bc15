// SPDX-License-Identifier: Apache-2.0
// JSON: {schema_version, context, rows, totals}. The document is rewritten (atomically) after every
// row, so the .partial file of an interrupted run is itself valid JSON.
#include <cmath>

#include "common/output_file.hpp"
#include "common/reporter.hpp"

namespace fabricbench {
namespace {

nlohmann::json to_json(const FieldValue& value) {
  return std::visit(
      [](const auto& v) -> nlohmann::json {
        if constexpr (std::is_same_v<std::decay_t<decltype(v)>, double>)
          return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
        else
          return v;
      },
      value);
}

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
    nlohmann::json object = nlohmann::json::object();
    for (const auto& [name, value] : fields_of(row)) object[name] = to_json(value);
    document_["rows"].push_back(std::move(object));
    file_.replace(document_.dump(1) + "\n");
  }

  void finish(const RunTotals& totals) override {
    document_["complete"] = true;
    document_["totals"] = {{"rows", totals.rows},
                           {"wrong_total", totals.wrong_total},
                           {"wall_seconds", totals.wall_seconds},
                           {"end_time", totals.end_time}};
    document_["summary"] = totals.summary;
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
