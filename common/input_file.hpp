// SPDX-License-Identifier: Apache-2.0
// An input file named on the command line, read whole and safely: only a regular file (a FIFO,
// device or folder is refused before anything blocks on it), at most a stated size.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace fabricbench {

/// The text of `path`; throws UsageError "FLAG PATH: ..." naming what is wrong.
std::string read_input_file(const std::string& path, std::string_view flag, std::size_t max_bytes);

/// Up to `bytes` of the start of `path`, a regular file (through links); nullopt for anything else
/// or an unreadable file. What a file begins with, read without blocking on a FIFO.
std::optional<std::string> regular_file_head(const std::string& path, std::size_t bytes);

}  // namespace fabricbench
