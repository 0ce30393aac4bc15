// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: every reader of stored results (our CSV and JSON, nccl-tests, perftest and
// Google Benchmark importers, the replay's trace reader, the NCCL Inspector and alltoallv matrix
// imports) must turn any input into rows or one InputError - never a crash, a hang or another
// exception. The first byte picks the format (0: detect; one past the last: a trace, two past:
// Inspector files, the ranks' or processes' files split at \x1e; 0xAA: an alltoallv matrix; 0xAB:
// Flight Recorder dumps, split likewise), so
// each reader is reached even by inputs that detection would send elsewhere.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "results/alltoallv_import.hpp"
#include "results/flight_recorder_import.hpp"
#include "results/run_file.hpp"
#include "results/trace_file.hpp"
#include "results/trace_import.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using fabricbench::results::Format;
  if (size == 0) return 0;
  constexpr int kFormats = static_cast<int>(Format::kGoogleBenchmarkJson) + 1;
  const int choice = data[0] % (kFormats + 2);
  std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  // The files of one trace or one Inspector dump, at most 8.
  const auto split = [&text] {
    std::vector<fabricbench::results::NamedText> files;
    while (!text.empty() && files.size() < 8) {
      const std::size_t end = std::min(text.find('\x1e'), text.size());
      files.push_back({"fuzz", std::string(text.substr(0, end))});
      text.remove_prefix(std::min(end + 1, text.size()));
    }
    return files;
  };
  try {
    if (data[0] == 0xAA) {
      (void)fabricbench::results::import_alltoallv_matrix(text, "fuzz", {});
      return 0;
    }
    if (data[0] == 0xAB) {
      std::vector<fabricbench::results::NamedText> files = split();
      for (std::size_t r = 0; r < files.size(); ++r) files[r].name = "fr.rank" + std::to_string(r) + ".json";
      fabricbench::results::SkippedCalls skipped;
      (void)fabricbench::results::import_flight_recorder(files, &skipped);
      return 0;
    }
    if (choice == kFormats) {
      std::vector<fabricbench::results::RankTrace> ranks;
      for (const auto& file : split()) ranks.push_back(fabricbench::results::parse_rank_trace(file.text, file.name));
      fabricbench::results::check_traces(ranks, "fuzz");
      return 0;
    }
    if (choice == kFormats + 1) {
      (void)fabricbench::results::import_inspector(split());
      return 0;
    }
    const auto run = fabricbench::results::parse_run(text, "fuzz", static_cast<Format>(choice));
    (void)run;
  } catch (const fabricbench::UsageError&) {
    // InputError (a UsageError): the one outcome allowed besides rows
  }
  return 0;
}
