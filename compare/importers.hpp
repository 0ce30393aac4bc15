// SPDX-License-Identifier: Apache-2.0
// Importers of other tools' output into our rows (used by run_file.cpp; declared here for the
// tests and fuzzers). Each throws InputError naming `name` when the text is not what it claims.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "compare/run_file.hpp"

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

}  // namespace fabricbench::results
