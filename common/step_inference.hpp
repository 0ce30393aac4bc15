// SPDX-License-Identifier: Apache-2.0
// Training steps found in a sequence of communication calls, which knows nothing of steps: the
// profiler plugin's recordings and the Flight Recorder's imports both need them for a replay's
// per-step figures (docs/replay.md, "Steps").
#pragma once

#include <cstdint>
#include <vector>

namespace fabricbench {

/// Which recorded operation begins each training step, found from the sequence alone: the
/// repeating pattern of calls that covers the longest stretch at the end of the sequence (at
/// least three repeats; the shortest such pattern), grown to the multiple whose boundary gap stands out (a step's long
/// pause: forward pass, optimizer), phased at that pause. `signatures` identify a call (communicator, function, count,
/// type, root, peer); `gaps_us` the pause before each. Returns each operation's step: 0 before the first boundary, then
/// 1, 2, ...; every step -1 when no pattern repeats three times.
std::vector<std::int64_t> infer_steps(const std::vector<std::uint64_t>& signatures, const std::vector<double>& gaps_us);

}  // namespace fabricbench
