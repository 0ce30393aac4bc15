// SPDX-License-Identifier: Apache-2.0
// Result files that are never torn and never replace what the user pointed at. A regular file
// (or one a symlink leads to) is written under "<target>.partial" and renamed onto the target
// when the run finishes, so a run that dies keeps the rows it finished in the .partial file and
// the symlink stays a symlink. Anything else - a character device such as /dev/null or
// /dev/stdout, a FIFO - is written in place, whole, when the run finishes: it is never replaced
// by a regular file (as root, that would break the device for every other program). A block
// device or a socket is refused.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace fabricbench {

/// Checks, without creating anything, that `path` can be written: its folder exists and is
/// writable, the path is not a folder, a block device or a socket, and nothing but a stale file of
/// fabricbench's own stands at its ".partial" (never a symlink or hard link, which would be written
/// through). Throws UsageError naming `flag`.
void check_writable_path(const std::string& path, std::string_view flag);

/// A path given on the command line, with the flag (or "input") that gave it.
struct NamedPath {
  std::string flag;
  std::string path;
};

/// Refuses, before any work, an output that is one of the inputs or that two output flags name:
/// the same file however it is spelled (resolved path, or device and inode), including an
/// output's own ".partial"; and any output inside an input that is a folder (a trace, a recorded
/// tree). Empty paths are skipped. Throws UsageError naming both flags.
void check_distinct_files(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs = {});

/// Refuses one file named twice among `inputs`, however spelled (resolved path, or device and
/// inode): UsageError naming both and `why`.
void check_distinct_inputs(const std::vector<NamedPath>& inputs, std::string_view why);

/// What becomes of a regular target's ".partial" when the OutputFile goes away neither committed
/// nor kept (a write failed): a run's rows stay for the user (cut back to whole rows); a document
/// written whole (a report, a health verdict) is removed.
enum class Unfinished { kKeep, kRemove };

class OutputFile {
 public:
  /// A regular target: creates "<target>.partial" (a stale one of a stopped run is replaced; one a
  /// live run holds is refused) and locks it while it is written. Anything else: opens nothing yet.
  explicit OutputFile(std::string path, Unfinished unfinished = Unfinished::kKeep);
  ~OutputFile();
  OutputFile(OutputFile&& other) noexcept;
  OutputFile& operator=(OutputFile&&) = delete;
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  /// Appends text with one write(2), so a killed run ends on a whole line; a failed write is
  /// undone (the file cut back to where it ended).
  void append(std::string_view text);
  /// Writes `text` at byte `offset` (at most the current size), with one write(2): a document can
  /// grow by overwriting its closing tail with a new row and the tail again.
  void write_at(std::uint64_t offset, std::string_view text);
  /// The run finished: the partial file is renamed onto the target, or the text is written to
  /// the device or FIFO. Later calls do nothing.
  void commit();
  /// The run did not finish: the partial file stays under its .partial name (never the final one),
  /// and nothing is written to a device. Later calls do nothing.
  void keep_incomplete();
  /// Nothing was measured (the run was refused after this file was opened): the partial file is
  /// removed, and nothing is written to a device. Later calls do nothing.
  void discard() noexcept;

  const std::string& path() const { return path_; }
  /// Where the rows are while the run goes on; "" for a target written in place.
  std::string partial_path() const { return in_place_ ? std::string() : target_ + ".partial"; }
  bool in_place() const { return in_place_; }

 private:
  void remove_partial() noexcept;  // the .partial file and its entry in the interrupt notice
  std::string path_;               // as given
  std::string target_;             // a symlink's regular file, else the path given
  bool in_place_ = false;
  bool stream_ = false;  // /dev/stdout and the like: written through the process's own descriptor
  std::string pending_;  // what a target written in place gets at commit()
  int fd_ = -1;          // the .partial file; for a FIFO, the FIFO, held open from the start
  bool done_ = false;
  bool remove_unfinished_ = false;
};

/// From now on no output gets its final name (a timeout is being reported: the process ends with
/// exit 3 however the main thread's run ends). Any thread; async-signal-safe.
void hold_outputs_partial() noexcept;
/// Whether hold_outputs_partial() was called.
bool outputs_held_partial() noexcept;

/// Who says what an interrupt left: a rank with files open (the others of a job die quietly), or
/// always (a tool run by hand, fb_compare | head: "its output was closed (SIGPIPE)").
enum class Notice { kWithFiles, kAlways };
/// Makes SIGINT, SIGTERM, SIGHUP and SIGPIPE print which .partial files hold the finished rows,
/// then exit 3 (README's runtime failure). A signal already ignored (nohup) stays ignored.
void install_interrupt_notice(Notice when = Notice::kWithFiles);
/// For a program whose children must finish (fb_sweep's launches, fb_health's probes): a closed
/// standard output (`| head`) no longer kills it silently (141); its writes fail (EPIPE), it goes
/// on, and the lost table makes its exit code 3 (run_tool). Children get SIGPIPE's default back at
/// exec, as a handler (not SIG_IGN) is not inherited. A SIGPIPE already ignored stays ignored.
void carry_on_when_output_closes();
void register_partial_file(const std::string& partial_path);
/// The file was finished under its name: a signal no longer names its .partial path.
void forget_partial_file(const std::string& partial_path);

}  // namespace fabricbench
