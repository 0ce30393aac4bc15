// SPDX-License-Identifier: Apache-2.0
// The collectives' own columns (common/library_fields.hpp): the call that ran, the algorithm,
// protocol and channels NCCL chose, and NCCL's name of the function as a Prometheus label.
#pragma once

#include <string>
#include <vector>

#include "collectives/backend.hpp"
#include "collectives/collective.hpp"
#include "common/row.hpp"

namespace fabricbench::collectives {

/// In file order (as schemas 4-8 had them); `coll` is a Prometheus label only.
std::vector<LibraryColumn> library_columns();

/// Records on `row` the call that ran (`call`: "ncclAllReduce", "MPI_Isend+MPI_Irecv") and
/// NCCL's name of `c`.
void record_call(ResultRow& row, const Collective& c, std::string call);

/// Records the path NCCL took (nothing where none was observed).
void record_path(ResultRow& row, const ObservedPath& path);

/// What the row says NCCL chose: its algorithm and protocol ("" where unknown) and channels (0).
std::string algorithm_of(const ResultRow& row);
std::string protocol_of(const ResultRow& row);
int channels_of(const ResultRow& row);

}  // namespace fabricbench::collectives
