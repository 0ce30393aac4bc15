// SPDX-License-Identifier: Apache-2.0
// nccl-tests' alltoallv traffic matrix (NCCL_TESTS_ALLTOALLV_MATRIX_FILE: whitespace-separated
// numbers, a square matrix whose cell [i][j] is the bytes rank i sends to rank j) made a trace:
// one group of Send/Recv per rank on one communicator of every rank, as alltoallv_perf issues it,
// which fb_replay replays with each rank's data checked (docs/replay.md).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "results/trace_file.hpp"

namespace fabricbench::results {

/// The largest matrix read: 1024 ranks (a million cells; every rank of the replay reads every
/// rank's Send/Recv, two million operations).
inline constexpr int kMaxMatrixRanks = 1024;

/// How nccl-tests reads the matrix: values scaled by `scale` (NCCL_TESTS_ALLTOALLV_MATRIX_SCALE),
/// rounded down to a multiple of 16 bytes; `ranks` > 0 takes the first `ranks` rows and columns
/// (0: all of them).
struct MatrixImport {
  double scale = 1.0;
  int ranks = 0;
};

/// The matrix's bytes per (sender, receiver), as nccl-tests takes them. Throws InputError naming
/// `name`, the row and column, and what is wrong.
std::vector<std::vector<std::uint64_t>> read_alltoallv_matrix(std::string_view text, const std::string& name,
                                                              const MatrixImport& how);

/// The trace of one alltoallv of that matrix: rank i sends matrix[i][j] bytes to each rank j and
/// receives matrix[j][i] from it (int8 elements, zero cells left out), every rank's Send/Recv one
/// group, checked as load_trace() checks a folder. A rank that sends and receives nothing is
/// refused: it would not take part.
std::vector<RankTrace> import_alltoallv_matrix(std::string_view text, const std::string& name, const MatrixImport& how);

}  // namespace fabricbench::results
