// SPDX-License-Identifier: Apache-2.0
// Records users already have, made replayable: NCCL Inspector's output (NCCL's
// plugins/profiler/inspector: one `<host>-pid<P>.log` per process, a JSON object per completed
// operation of one of its communicators) turned into fabricbench's trace (trace_file.hpp), and a
// trace written into a folder. What Inspector does not record is said in docs/replay.md.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "results/trace_file.hpp"

namespace fabricbench::results {

/// A file's name (for messages) and its text.
struct NamedText {
  std::string name;
  std::string text;
};

/// One process's Inspector file each; ranks from the communicator that spans every process (else
/// the files' order). Every rank's trace is read back and checked as load_trace() checks a
/// folder. Throws InputError naming the file and what is wrong.
std::vector<RankTrace> import_inspector(const std::vector<NamedText>& files);

/// Whether `folder` holds an entry whose name `wanted` accepts; an Inspector file (`<host>-pid<P>.log`).
bool holds_named(const std::string& folder, const std::function<bool(const std::string&)>& wanted);
bool holds_inspector_files(const std::string& folder);

/// The files of `folder` whose name `wanted` accepts, read in name order (`what` names them in
/// messages): at most 65,536, each at most `max_bytes`; one that is not a regular file (a FIFO, a
/// device, a dangling link) is refused, never read. Throws InputError.
std::vector<NamedText> dump_files(const std::string& folder, const std::string& what,
                                  const std::function<bool(const std::string&)>& wanted,
                                  std::size_t max_bytes = kMaxTraceFileBytes);

/// Every regular `*.log` file of an Inspector dump folder, in name order. Throws InputError.
std::vector<NamedText> inspector_files(const std::string& folder);

/// `ranks` as trace.rank<R>.jsonl files in `folder` (made if missing). A folder that already holds
/// a trace is refused (UsageError): a mix of two traces' ranks would replay neither.
void write_trace(const std::vector<RankTrace>& ranks, const std::string& folder);

}  // namespace fabricbench::results
