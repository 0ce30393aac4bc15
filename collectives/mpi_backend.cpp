// SPDX-License-Identifier: Apache-2.0
#include "collectives/mpi_backend.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <new>

#include "collectives/host_data.hpp"
#include "common/error.hpp"
#include "common/mpi.hpp"

namespace fabricbench::collectives {
namespace {

MPI_Datatype mpi_type(DataType dtype) {
  switch (dtype) {
    case DataType::kInt8: return MPI_INT8_T;
    case DataType::kUint8: return MPI_UINT8_T;
    case DataType::kInt32: return MPI_INT32_T;
    case DataType::kUint32: return MPI_UINT32_T;
    case DataType::kInt64: return MPI_INT64_T;
    case DataType::kUint64: return MPI_UINT64_T;
    case DataType::kFloat32: return MPI_FLOAT;
    case DataType::kFloat64: return MPI_DOUBLE;
    default: throw Error(fmt::format("MPI has no datatype for {}", name_of(dtype)));
  }
}

MPI_Op mpi_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum: return MPI_SUM;
    case ReduceOp::kProd: return MPI_PROD;
    case ReduceOp::kMin: return MPI_MIN;
    case ReduceOp::kMax: return MPI_MAX;
    default: throw Error(fmt::format("MPI has no reduction {}", name_of(op)));
  }
}

// Poison for outputs, so an element the collective never wrote is counted wrong.
constexpr int kPoisonByte = 0xA5;
constexpr int kTag = 4242;

}  // namespace

std::string_view name_of(Placement placement) { return placement == Placement::kInPlace ? "in-place" : "out-of-place"; }

HostBuffer::HostBuffer(std::size_t bytes) : bytes_(bytes) {
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const std::size_t rounded = std::max<std::size_t>(page, (bytes + page - 1) / page * page);
  auto* memory = static_cast<std::byte*>(std::aligned_alloc(page, rounded));
  if (!memory) throw std::bad_alloc();
  std::memset(memory, 0, rounded);  // touch every page now, not inside a timed call
  memory_.reset(memory);
}

void HostBuffer::Free::operator()(std::byte* p) const noexcept { std::free(p); }

std::string MpiBackend::dtype_unsupported(DataType dtype) const {
  switch (dtype) {
    case DataType::kFloat16:
    case DataType::kBfloat16: return "MPI defines no 16-bit floating type";
    case DataType::kFloat8e4m3:
    case DataType::kFloat8e5m2: return "MPI defines no 8-bit floating type";
    default: return {};
  }
}

std::string MpiBackend::op_unsupported(ReduceOp op) const {
  return op == ReduceOp::kAvg ? "MPI defines no average reduction" : std::string{};
}

std::uint64_t MpiBackend::max_count() const { return static_cast<std::uint64_t>(INT_MAX); }

void MpiBackend::reserve(std::uint64_t send_bytes, std::uint64_t recv_bytes) {
  send_ = HostBuffer(send_bytes);
  recv_ = HostBuffer(recv_bytes);
}

void MpiBackend::prepare(const CallSpec& call) {
  const Collective& c = *call.collective;
  const BufferCounts counts = c.buffers(call.count, ranks_);
  const std::size_t element = size_of(call.dtype);
  const DataLayout layout{c.kind, call.dtype, call.op, rank_, ranks_, call.root, call.count};
  std::memset(recv_.data(), kPoisonByte, counts.recv * element);

  if (call.placement == Placement::kOutOfPlace) {
    fill_input_host(layout, send_.data(), 0, counts.send);
    return;
  }
  // In place, MPI reads the input from the receive buffer: where depends on the collective.
  switch (c.kind) {
    case Kind::kAllGather: fill_input_host(layout, recv_.data() + rank_ * call.count * element, 0, call.count); break;
    case Kind::kBroadcast:
      if (rank_ == call.root) fill_input_host(layout, recv_.data(), 0, call.count);
      break;
    default: fill_input_host(layout, recv_.data(), 0, counts.send); break;
  }
}

MpiBackend::View MpiBackend::output_view(const CallSpec& call) const {
  const Collective& c = *call.collective;
  const BufferCounts counts = c.buffers(call.count, ranks_);
  switch (c.kind) {
    case Kind::kReduce: return {recv_.data(), rank_ == call.root ? call.count : 0};
    case Kind::kBroadcast:  // out of place, MPI_Bcast on the root reads its send buffer
      if (call.placement == Placement::kOutOfPlace && rank_ == call.root) return {send_.data(), call.count};
      return {recv_.data(), call.count};
    default: return {recv_.data(), counts.recv};
  }
}

void MpiBackend::run_once(const CallSpec& call) {
  const bool in_place = call.placement == Placement::kInPlace;
  const int count = static_cast<int>(call.count);
  const MPI_Datatype type = mpi_type(call.dtype);
  void* send = in_place ? MPI_IN_PLACE : send_.data();
  void* recv = recv_.data();
  switch (call.collective->kind) {
    case Kind::kAllReduce: FB_MPI_CHECK(MPI_Allreduce(send, recv, count, type, mpi_op(call.op), comm_)); break;
    case Kind::kAllGather: FB_MPI_CHECK(MPI_Allgather(send, count, type, recv, count, type, comm_)); break;
    case Kind::kReduceScatter:
      FB_MPI_CHECK(MPI_Reduce_scatter_block(send, recv, count, type, mpi_op(call.op), comm_));
      break;
    case Kind::kBroadcast: {
      void* buffer = (!in_place && rank_ == call.root) ? send_.data() : recv;
      FB_MPI_CHECK(MPI_Bcast(buffer, count, type, call.root, comm_));
      break;
    }
    case Kind::kReduce:
      if (in_place && rank_ != call.root) send = recv;  // MPI_IN_PLACE is for the root only
      FB_MPI_CHECK(MPI_Reduce(send, recv, count, type, mpi_op(call.op), call.root, comm_));
      break;
    case Kind::kAllToAll: FB_MPI_CHECK(MPI_Alltoall(send, count, type, recv, count, type, comm_)); break;
    case Kind::kSendRecv: {
      const int next = (rank_ + 1) % ranks_;
      const int previous = (rank_ - 1 + ranks_) % ranks_;
      if (in_place)
        FB_MPI_CHECK(MPI_Sendrecv_replace(recv, count, type, next, kTag, previous, kTag, comm_, MPI_STATUS_IGNORE));
      else
        FB_MPI_CHECK(MPI_Sendrecv(send_.data(), count, type, next, kTag, recv, count, type, previous, kTag, comm_,
                                  MPI_STATUS_IGNORE));
      break;
    }
  }
}

double MpiBackend::run(const CallSpec& call, int operations) {
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < operations; ++i) run_once(call);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::uint64_t MpiBackend::count_wrong(const CallSpec& call) {
  const View out = output_view(call);
  const DataLayout layout{call.collective->kind, call.dtype, call.op, rank_, ranks_, call.root, call.count};
  return count_wrong_host(layout, out.data, out.elements);
}

bool MpiBackend::corrupt_output(const CallSpec& call) {
  const View out = output_view(call);
  if (out.elements == 0) return false;
  corrupt_first_host(call.dtype, out.data);
  return true;
}

}  // namespace fabricbench::collectives
