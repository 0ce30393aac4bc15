// SPDX-License-Identifier: Apache-2.0
// Importers of other tools' output into our rows (used by run_file.cpp; declared here for the
// tests and fuzzers). Each throws InputError naming `name` when the text is not what it claims.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "results/run_file.hpp"

namespace fabricbench::results {

StoredRun import_nccl_tests_text(std::string_view text, const std::string& name);
StoredRun import_nccl_tests_json(const nlohmann::json& document, const std::string& name);
StoredRun import_perftest_text(std::string_view text, const std::string& name);
StoredRun import_perftest_json(const nlohmann::json& document, const std::string& name);
/// perftest's --out_json file as written (unquoted keys, trailing commas).
StoredRun import_perftest_json_text(std::string_view text, const std::string& name);
StoredRun import_google_benchmark_json(const nlohmann::json& document, const std::string& name);

/// Splits on runs of whitespace.
std::vector<std::string> whitespace_fields(std::string_view line);
/// A number in a field of `name`, or InputError saying which.
double number_field(const std::string& text, const std::string& what, const std::string& name);
/// number_field for what a tool measured (a time, a bandwidth): never negative.
double measured_field(const std::string& text, const std::string& what, const std::string& name);

/// A whole number in [low, high] (sizes, counts, roots), or InputError: converting a wild value to
/// an integer type is undefined behaviour, and a damaged file must not reach it (found by fuzzing).
std::int64_t whole_number(double value, double low, double high, const std::string& what, const std::string& name);
std::int64_t whole_field(const std::string& text, double low, double high, const std::string& what,
                         const std::string& name);

/// `object[key]` as a whole number in [low, high]; `fallback` when absent or not a number.
std::int64_t json_whole(const nlohmann::json& object, const char* key, std::int64_t fallback, double low, double high,
                        const std::string& name);

/// The largest size or count a file may claim (2^53: still exact in a double).
inline constexpr double kMaxCount = 9007199254740992.0;

}  // namespace fabricbench::results
