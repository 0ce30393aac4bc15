// SPDX-License-Identifier: Apache-2.0
// An input file named on the command line, read whole and safely: only a regular file (a FIFO,
// device or folder is refused before anything blocks on it), at most a stated size.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace fabricbench {

/// The text of `path`; throws UsageError "FLAG PATH: ..." naming what is wrong.
std::string read_input_file(const std::string& path, std::string_view flag, std::size_t max_bytes);

}  // namespace fabricbench
