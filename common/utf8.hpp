// SPDX-License-Identifier: Apache-2.0
// Text from the command line, the machine or a log, made fit for the JSON files, which are written
// strictly: nlohmann's writer throws on a byte that is not UTF-8.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace fabricbench {

/// `value` as JSON text, a byte that is not UTF-8 in any of its strings (a Latin-1 path, tag or
/// environment value) written as U+FFFD where nlohmann's writer would throw.
inline std::string json_text(const nlohmann::json& value, int indent = -1) {
  return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

/// `text` with every byte that is not valid UTF-8 replaced by U+FFFD, as the JSON files would have
/// it (nlohmann's own replacement): for a label, a drain reason or a launcher's log line.
inline std::string valid_utf8(const std::string& text) {
  const std::string quoted = json_text(nlohmann::json(text));
  return nlohmann::json::parse(quoted).get<std::string>();
}

/// Whether `text` is UTF-8 already (nothing to replace).
inline bool is_utf8(const std::string& text) { return valid_utf8(text) == text; }

/// valid_utf8(text) with the C0 control bytes (NUL, escape, carriage return...) but line breaks
/// and tabs, and DEL, shown as '?': what a terminal acts on is not printed from a file.
inline std::string printable_utf8(const std::string& text) {
  std::string shown = valid_utf8(text);
  for (char& c : shown)
    if ((static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') || c == '\x7f') c = '?';
  return shown;
}

/// printable_utf8(text) on one line: a line break or tab (in a file name, a tag, a key) written as
/// \n or \t, so that an error stays the one line a script reads.
inline std::string one_line(const std::string& text) {
  std::string line;
  for (const char c : printable_utf8(text)) {
    if (c == '\n')
      line += "\\n";
    else if (c == '\t')
      line += "\\t";
    else
      line += c;
  }
  return line;
}

}  // namespace fabricbench
