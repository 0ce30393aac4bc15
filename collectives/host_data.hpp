// SPDX-License-Identifier: Apache-2.0
// Fill and check of host buffers for the backends that keep data in host memory (MPI).
#pragma once

#include <cstdint>
#include <string>

#include "collectives/collective.hpp"
#include "common/dtype.hpp"
#include "common/error.hpp"
#include "common/reduce_op.hpp"

namespace fabricbench::collectives {

/// One call's shape, as the data fill and check see it.
struct DataLayout {
  SourceRule source;
  DataType dtype;
  ReduceOp op;
  int rank;
  int ranks;
  int root;
  std::uint64_t count;  ///< the collective's count argument
};

/// A Send's data in a group of Send/Recv: `rank`'s input, indexed by where the elements sit in
/// its send buffer (fill from the Send's offset).
inline DataLayout sent_by(int rank, DataType dtype) {
  return {SourceRule{}, dtype, ReduceOp::kSum, rank, rank + 1, rank, 0};
}

/// A Recv's expected data: `sender`'s input from index `first` on - the root's input with the
/// checked rank's chunk starting at `first` (rank 1 of 2, `first` elements a chunk).
inline DataLayout copied_from(int sender, std::uint64_t first, DataType dtype) {
  return {SourceRule{SourceRule::From::kRoot, true}, dtype, ReduceOp::kSum, 1, 2, sender, first};
}

/// Writes `elements` input elements of this rank (from input index `first`) to `out`.
void fill_input_host(const DataLayout& layout, void* out, std::uint64_t first, std::uint64_t elements);

/// Counts elements of `output` (this rank's `elements` output elements) that differ from the
/// expected result: exactly for integers, within a tolerance from the type's rounding and the rank
/// count for floating types.
std::uint64_t count_wrong_host(const DataLayout& layout, const void* output, std::uint64_t elements);

/// The tolerance the checker allows for a floating result of this op and rank count.
double tolerance(DataType dtype, ReduceOp op, int ranks, double exact_magnitude);

/// Calls f(T{}) with the host type of `dtype` (the MPI and Gloo backends, the host data check);
/// the backends reject the 16- and 8-bit floats before data is ever touched. `what` names the
/// caller in the error for a type with no host representation.
template <class F>
auto with_host_type(DataType dtype, F&& f, const char* what = "host data check") {
  switch (dtype) {
    case DataType::kInt8: return f(std::int8_t{});
    case DataType::kUint8: return f(std::uint8_t{});
    case DataType::kInt32: return f(std::int32_t{});
    case DataType::kUint32: return f(std::uint32_t{});
    case DataType::kInt64: return f(std::int64_t{});
    case DataType::kUint64: return f(std::uint64_t{});
    case DataType::kFloat32: return f(float{});
    case DataType::kFloat64: return f(double{});
    default: throw Error(std::string(what) + ": " + std::string(name_of(dtype)) + " has no host representation");
  }
}

/// Whether the pattern uses negative values for this type (signed integers and floating types).
bool allows_negative(DataType dtype);

/// Makes output element 0 wrong (for fault injection).
void corrupt_first_host(DataType dtype, void* output);

}  // namespace fabricbench::collectives
