// SPDX-License-Identifier: Apache-2.0
#include "common/reporter.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <limits>

#include "common/output_file.hpp"

namespace fabricbench {
namespace {

namespace fs = std::filesystem;

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("fabricbench-test-" + std::to_string(::getpid()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
};

ResultRow sample_row() {
  ResultRow r;
  r.benchmark = "fb_all_reduce";
  r.backend = "mpi";
  r.collective = "all_reduce";
  r.dtype = "float";
  r.op = "sum";
  r.placement = "in-place";
  r.size_bytes = 1048576;
  r.count = 262144;
  r.ranks = 3;
  r.hosts = 1;
  r.time_s = Summary{20, 1e-4, 1.25e-4, 1.3e-4, 2e-4, 3.5e-4, 1.0 / 3.0 * 1e-5};
  r.algbw_mean_bytes_per_s = 1048576 / 1.3e-4;
  r.wrong = 0;
  r.tags = KeyValues::parse("fabric=ib,hdr;note=\"quoted\"");
  r.library.set("engine", "warp");
  r.library.set("lanes", std::int64_t{12});
  r.library.set("label_only", "x");
  return r;
}

// A backend's own columns: two in the files, one a Prometheus label only.
std::vector<LibraryColumn> sample_library() {
  return {{"engine", std::string(), "", true},
          {"lanes", std::int64_t{0}, "", true},
          {"absent", std::int64_t{0}, "", true},
          {"label_only", std::string(), "lbl", false}};
}

// A signal after a file was finished under its name must not send the user to its .partial.
TEST(InterruptNoticeDeathTest, NamesOnlyFilesStillPartial) {
  TempDir dir;
  const std::string done = (dir.path / "done.csv").string(), open = (dir.path / "open.csv").string();
  EXPECT_EXIT(
      {
        install_interrupt_notice();
        OutputFile finished(done);
        OutputFile unfinished(open);
        finished.append("x\n");
        finished.commit();
        std::raise(SIGTERM);
      },
      ::testing::ExitedWithCode(3),
      "terminated \\(SIGTERM\\); finished rows are kept in: [^ ]*open\\.csv\\.partial\n$");
  EXPECT_EXIT(
      {
        install_interrupt_notice();
        OutputFile finished(done);
        finished.commit();
        std::raise(SIGINT);
      },
      ::testing::ExitedWithCode(3), "interrupted \\(SIGINT\\) after its files were finished\n$");
}

TEST(CsvSplit, UndoesEscaping) {
  const std::string tricky = "a,\"b\"\nc";
  EXPECT_EQ(csv_split(csv_escape(tricky) + ",x"), (std::vector<std::string>{tricky, "x"}));
}

TEST(CsvReporter, RoundTripsEveryFieldAndRenamesOnFinish) {
  TempDir dir;
  const std::string path = (dir.path / "run.csv").string();
  const ResultRow row = sample_row();
  {
    auto csv = make_csv_reporter(path);
    RunHeader header;
    header.library_columns = sample_library();
    csv->begin(header);
    csv->add(row);
    EXPECT_TRUE(fs::exists(path + ".partial"));
    EXPECT_FALSE(fs::exists(path));
    csv->finish({});
  }
  ASSERT_TRUE(fs::exists(path));
  EXPECT_FALSE(fs::exists(path + ".partial"));
  std::ifstream in(path);
  std::string header, line;
  std::getline(in, header);
  std::getline(in, line);
  const auto names = csv_split(header);
  const auto values = csv_split(line);
  EXPECT_EQ(names, column_names(sample_library()));
  ASSERT_EQ(values.size(), names.size());
  // The library's file columns sit before settings, a row without a value writes the empty one,
  // a label-only column has no column.
  const auto settings = std::find(names.begin(), names.end(), "settings") - names.begin();
  ASSERT_GE(settings, 3);
  EXPECT_EQ(names[static_cast<std::size_t>(settings) - 3], "engine");
  EXPECT_EQ(values[static_cast<std::size_t>(settings) - 2], "12");
  EXPECT_EQ(values[static_cast<std::size_t>(settings) - 1], "0");
  EXPECT_EQ(std::find(names.begin(), names.end(), "label_only"), names.end());
  const auto fields = fields_of(row, sample_library());
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const FieldValue& v = fields[i].second;
    if (const auto* d = std::get_if<double>(&v))
      EXPECT_DOUBLE_EQ(std::stod(values[i]), *d) << names[i];
    else if (const auto* s = std::get_if<std::string>(&v))
      EXPECT_EQ(values[i], *s) << names[i];
    else if (const auto* u = std::get_if<std::uint64_t>(&v))
      EXPECT_EQ(values[i], std::to_string(*u)) << names[i];
    else
      EXPECT_EQ(values[i], std::to_string(std::get<std::int64_t>(v))) << names[i];
  }
}

TEST(JsonReporter, PartialFileIsValidJsonAndFinalHasTotals) {
  TempDir dir;
  const std::string path = (dir.path / "run.json").string();
  auto json = make_json_reporter(path);
  json->begin({nlohmann::json{{"argv", {"fb_all_reduce"}}}, "title", 2, {}, {}});
  json->add(sample_row());
  {
    std::ifstream partial(path + ".partial");
    const auto doc = nlohmann::json::parse(partial);
    EXPECT_FALSE(doc["complete"].get<bool>());
    EXPECT_EQ(doc["rows"].size(), 1u);
  }
  RunTotals totals;
  totals.rows = 1;
  json->finish(totals);
  std::ifstream final_file(path);
  const auto doc = nlohmann::json::parse(final_file);
  EXPECT_TRUE(doc["complete"].get<bool>());
  EXPECT_EQ(doc["schema_version"].get<int>(), kSchemaVersion);
  EXPECT_EQ(doc["rows"][0]["size_bytes"].get<std::uint64_t>(), 1048576u);
  EXPECT_DOUBLE_EQ(doc["rows"][0]["time_mean_s"].get<double>(), 1.3e-4);
  EXPECT_EQ(doc["rows"][0]["tags"].get<std::string>(), sample_row().tags.text());
  EXPECT_EQ(doc["context"]["argv"][0].get<std::string>(), "fb_all_reduce");
}

TEST(JsonReporter, EveryRowKeepsTheDocumentValidAndAStoppedRunStaysIncomplete) {
  TempDir dir;
  const std::string path = (dir.path / "run.json").string();
  auto json = make_json_reporter(path);
  json->begin({nlohmann::json{{"argv", {"fb_sendrecv"}}}, "title", 3, {}, {}});
  for (int i = 1; i <= 3; ++i) {
    ResultRow row = sample_row();
    row.size_bytes = static_cast<std::uint64_t>(i);
    json->add(row);
    std::ifstream partial(path + ".partial");
    const auto doc = nlohmann::json::parse(partial);  // valid after every row
    ASSERT_EQ(doc["rows"].size(), static_cast<std::size_t>(i));
    EXPECT_EQ(doc["rows"].back()["size_bytes"].get<int>(), i);
  }
  RunTotals totals;
  totals.rows = 3;
  totals.ended_by = "[rank 1 on n2] timeout: ...";
  json->finish(totals);
  // An incomplete run never takes the final name: its document stays, valid, under .partial.
  EXPECT_FALSE(std::filesystem::exists(path));
  std::ifstream final_file(path + ".partial");
  const auto doc = nlohmann::json::parse(final_file);
  EXPECT_FALSE(doc["complete"].get<bool>());
  EXPECT_EQ(doc["ended_by"].get<std::string>(), totals.ended_by);
  EXPECT_EQ(doc["totals"]["rows"].get<int>(), 3);
}

TEST(RowJson, TheDirectTextReadsBackAsTheDocumentsRow) {
  ResultRow row = sample_row();
  row.settings.set("note", "a \"quoted\"\\ path\nwith\tcontrol \x01 bytes");
  row.time_s.p999 = std::numeric_limits<double>::quiet_NaN();
  row.busbw_peak_bytes_per_s = 1.0 / 3;
  row.sample_seconds = {1e-6, 2.5e-6, 0.1};
  row.library = {};
  row.library.set("engine", "warp");
  const std::vector<LibraryColumn> library = {{"engine", std::string(), "", true}};
  const nlohmann::json direct = nlohmann::json::parse(row_to_json_text(row, library));
  nlohmann::json expected = row_to_json(row);
  EXPECT_EQ(direct, expected);
  EXPECT_EQ(direct["engine"], "warp");
  EXPECT_TRUE(direct["time_p999_s"].is_null());
  EXPECT_EQ(direct["samples_s"].size(), 3u);
}

}  // namespace
}  // namespace fabricbench
