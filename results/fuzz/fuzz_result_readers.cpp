// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: every reader of stored results (our CSV and JSON, nccl-tests, perftest and
// Google Benchmark importers) must turn any input into rows or one InputError - never a crash,
// a hang or another exception. The first byte picks the format (0: detect), so each importer is
// reached even by inputs that detection would send elsewhere.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "results/run_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using fabricbench::results::Format;
  if (size == 0) return 0;
  constexpr int kFormats = static_cast<int>(Format::kGoogleBenchmarkJson) + 1;
  const auto format = static_cast<Format>(data[0] % kFormats);
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    const auto run = fabricbench::results::parse_run(text, "fuzz", format);
    (void)run;
  } catch (const fabricbench::UsageError&) {
    // InputError (a UsageError): the one outcome allowed besides rows
  }
  return 0;
}
