// SPDX-License-Identifier: Apache-2.0
// Running a CLI11 parser the way every fabricbench executable wants it.
#pragma once

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "common/error.hpp"

namespace fabricbench {

/// Parses argv with `app`. Returns the help text when --help was asked for (print it, exit 0);
/// throws UsageError with CLI11's one-line message for unknown flags or garbled values.
inline std::optional<std::string> parse_or_help(CLI::App& app, int argc, const char* const* argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    return app.help();
  } catch (const CLI::ConversionError& e) {
    // "Could not convert: --iters = 1.5": a count given a fraction (number_in let the number by).
    const std::string text = e.what();
    const std::string prefix = "Could not convert: ";
    const std::size_t equals = text.find(" = ");
    if (text.rfind(prefix, 0) != 0 || equals == std::string::npos)
      throw UsageError(fmt::format("{} (see --help)", text));
    throw UsageError(fmt::format("{}: '{}' is not a whole number (see --help)",
                                 text.substr(prefix.size(), equals - prefix.size()), text.substr(equals + 3)));
  } catch (const CLI::ParseError& e) {
    throw UsageError(fmt::format("{} (see --help)", e.what()));
  }
  return std::nullopt;
}

/// Refuses an empty value with `problem` ("an empty host name"); `name` is the value's name in --help.
inline CLI::Validator not_empty(const std::string& problem, const std::string& name) {
  return CLI::Validator([problem](std::string& value) { return value.empty() ? problem : std::string(); }, name);
}

/// For options that name a file or a folder: an empty value (an unset $OUT in a job script) is
/// refused, never taken as "no output", or the job would pass without writing anything.
inline const CLI::Validator kPathGiven = not_empty("an empty path: give a file name", "PATH");

}  // namespace fabricbench
