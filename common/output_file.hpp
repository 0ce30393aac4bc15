// SPDX-License-Identifier: Apache-2.0
// Result files that are never torn: written under "<path>.partial", renamed to <path> when the run
// finishes. A run that dies keeps the rows it finished in the .partial file.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace fabricbench {

/// Checks, without creating anything, that `path` can be written: its folder exists and is
/// writable and the path is not a folder. Throws UsageError naming `flag`.
void check_writable_path(const std::string& path, std::string_view flag);

class OutputFile {
 public:
  /// Creates (truncates) "<path>.partial".
  explicit OutputFile(std::string path);
  ~OutputFile();
  OutputFile(OutputFile&& other) noexcept;
  OutputFile& operator=(OutputFile&&) = delete;
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  /// Appends text with one write(2), so a killed run ends on a whole line.
  void append(std::string_view text);
  /// Writes `text` at byte `offset` (at most the current size), with one write(2): a document can
  /// grow by overwriting its closing tail with a new row and the tail again.
  void write_at(std::uint64_t offset, std::string_view text);
  /// Replaces the whole partial file atomically (temporary file + rename): for JSON documents.
  /// A file is either appended to or replaced, never both.
  void replace(std::string_view text);
  /// Renames the partial file to the final path. Later calls do nothing.
  void commit();

  const std::string& path() const { return path_; }
  std::string partial_path() const { return path_ + ".partial"; }

 private:
  std::string path_;
  int fd_ = -1;
  bool committed_ = false;
};

/// Makes SIGINT/SIGTERM print which .partial files hold the finished rows before the process
/// dies with the signal's default action.
void install_interrupt_notice();
void register_partial_file(const std::string& partial_path);

}  // namespace fabricbench
