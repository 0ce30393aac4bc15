// SPDX-License-Identifier: Apache-2.0
// Google Benchmark's own flags, checked before it reads them: its parser takes
// --benchmark_min_time=nan (then runs a billion iterations a size) and aborts on
// --benchmark_repetitions=-3 (SIGABRT). A bad value is one line and exit 2, as for every other flag.
#pragma once

#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

namespace fabricbench::micro {

/// Whether `text` is a whole number (the form "100", as repetitions and iteration counts are written).
inline bool whole_number(std::string_view text) {
  return !text.empty() && text.find_first_not_of("0123456789") == std::string_view::npos;
}

/// "" where `value` of `flag` is one Google Benchmark can use, else what is wrong with it.
inline std::string benchmark_flag_problem(std::string_view flag, std::string value) {
  if (flag == "--benchmark_repetitions") {
    if (!whole_number(value) || value.size() > 7 || std::atol(value.c_str()) < 1)
      return "a whole number of repetitions, 1 or more";
    return {};
  }
  const bool iterations = flag == "--benchmark_min_time" && !value.empty() && value.back() == 'x';
  if (iterations) {
    value.pop_back();
    return whole_number(value) && value.size() <= 12 && std::atoll(value.c_str()) >= 1
               ? std::string()
               : "an iteration count (100x) of 1 or more";
  }
  if (!value.empty() && value.back() == 's') value.pop_back();
  char* end = nullptr;
  const double seconds = std::strtod(value.c_str(), &end);
  const bool number = !value.empty() && end == value.c_str() + value.size() && std::isfinite(seconds);
  const bool warmup = flag == "--benchmark_min_warmup_time";
  if (!number || seconds < 0 || (!warmup && seconds == 0) || seconds > 3600)
    return warmup ? "seconds from 0 to 3600" : "seconds above 0, at most 3600 (0.5 or 0.5s), or iterations (100x)";
  return {};
}

/// Prints one line for the first unusable value of --benchmark_min_time, --benchmark_min_warmup_time
/// or --benchmark_repetitions and returns false.
inline bool benchmark_flags_usable(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    for (const std::string_view flag :
         {"--benchmark_min_time", "--benchmark_min_warmup_time", "--benchmark_repetitions"}) {
      if (!arg.starts_with(flag) || arg.size() <= flag.size() || arg[flag.size()] != '=') continue;
      const std::string value(arg.substr(flag.size() + 1));
      if (const std::string problem = benchmark_flag_problem(flag, value); !problem.empty()) {
        const char* slash = std::strrchr(argv[0], '/');
        std::fprintf(stderr, "%s: error: %.*s: '%s' is not %s\n", slash ? slash + 1 : argv[0],
                     static_cast<int>(flag.size()), flag.data(), value.c_str(), problem.c_str());
        return false;
      }
    }
  }
  return true;
}

/// BENCHMARK_MAIN's body, after benchmark_flags_usable (exit 2 where it says no).
inline int run_benchmarks(int argc, char** argv) {
  if (!benchmark_flags_usable(argc, argv)) return 2;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

}  // namespace fabricbench::micro
