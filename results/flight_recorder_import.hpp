// SPDX-License-Identifier: Apache-2.0
// PyTorch's Flight Recorder made replayable: its per-rank dumps (what
// torch._C._distributed_c10d._dump_nccl_trace_json() returns, or the pickle a hang's dump writes,
// converted by scripts/flight-recorder-to-json.py) turned into fabricbench's trace (trace_file.hpp).
// The Flight Recorder keeps, per call, its process group, the tensors' shapes and type and, with
// TORCH_NCCL_ENABLE_TIMING=1, its duration between CUDA events on the communication stream; it
// keeps no root, no split of an all_to_all_single and no kernel start: what the import makes of
// those is said in docs/replay.md.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "results/trace_file.hpp"
#include "results/trace_import.hpp"

namespace fabricbench::results {

/// What an import left out: each profiling name (nccl:coalesced, ...) it cannot replay, with how
/// many entries of every rank together had it.
using SkippedCalls = std::map<std::string, std::size_t>;

/// One rank's dump per file, its rank the number its name ends with (fr.rank3.json,
/// nccl_trace_rank_3: PyTorch's dump writer appends the rank). Calls each member's ring no longer
/// holds are dropped so every member starts at the same call. Every rank's trace is read back and
/// checked as load_trace() checks a folder. Throws InputError naming the file, entry and problem.
std::vector<RankTrace> import_flight_recorder(const std::vector<NamedText>& files, SkippedCalls* skipped);

/// Whether a file's name is a dump's: it holds "rank" and (less a .json) ends with the rank.
bool flight_recorder_name(const std::string& name);
inline bool holds_flight_recorder_dumps(const std::string& folder) { return holds_named(folder, flight_recorder_name); }

/// The dumps of a folder (flight_recorder_name), each at most 64 MiB, in name order; one that is
/// not a regular file is refused, as is a pickle (with the converter to run). Throws InputError.
std::vector<NamedText> flight_recorder_files(const std::string& folder);

}  // namespace fabricbench::results
