// SPDX-License-Identifier: Apache-2.0
#include "collectives/mpi_backend.hpp"

#include <fmt/format.h>

#include <chrono>
#include <climits>
#include <vector>

#include "common/error.hpp"
#include "common/mpi.hpp"
#include "common/singleton_plane.hpp"

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

}  // namespace

MpiBackend::MpiBackend(const BackendGroup& group, CacheMode cache)
    : HostBackend(group.rank, group.size, cache, Library::kMpi), comm_(MPI_COMM_NULL) {
  if (!group.plane) return;
  // The one place a control plane is asked what it is: MPI collectives need MPI's communicator.
  // A process no launcher started is the whole job: its MPI starts now, alone.
  if (dynamic_cast<const SingletonPlane*>(group.plane)) {
    comm_ = mpi::late_self_comm();
    return;
  }
  const auto* mpi = dynamic_cast<const mpi::MpiPlane*>(group.plane);
  if (!mpi)
    throw UsageError(
        fmt::format("--backend mpi needs ranks started by an MPI launcher (this run's control plane is "
                    "{}); use another --backend",
                    group.plane->kind()));
  comm_ = mpi->comm();
}

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

bool MpiBackend::has_form(const Collective& c, CallForm form) const {
  return (form == CallForm::kLibrary ? c.mpi : c.mpi_p2p) != nullptr;
}

std::string MpiBackend::call_name(const Collective& c, CallForm form) const {
  return std::string(form == CallForm::kLibrary ? c.mpi_name : kMpiPointToPointName);
}

MpiCall MpiBackend::make_call(const CallSpec& call) const {
  const Collective& c = *call.collective;
  MpiCall m;
  m.in = input_view(call).data;
  m.recv = receive_buffer();
  m.out = output_view(call).data;
  m.in_place = call.placement == Placement::kInPlace;
  m.count = static_cast<int>(call.count);
  m.chunk_bytes = call.count * size_of(call.dtype);
  m.type = mpi_type(call.dtype);
  m.op = c.reduces ? mpi_op(call.op) : MPI_OP_NULL;
  m.shape = shape_of(call);
  m.comm = comm_;
  m.comm_ranks = group().empty() ? nullptr : group().data();
  return m;
}

double MpiBackend::run(const CallSpec& call, int operations) {
  void (*const issue)(const MpiCall&) =
      call.form == CallForm::kLibrary ? call.collective->mpi : call.collective->mpi_p2p;
  return time_calls(
      operations, [&] { return make_call(call); }, issue);
}

double MpiBackend::run_transfers(const TransferGroup& group) {
  constexpr int kTag = 7177;  // a group's own tag: nothing else of this communicator's uses it
  const MPI_Datatype type = mpi_type(group.dtype);
  const std::size_t element = size_of(group.dtype);
  std::vector<MPI_Request> requests;
  requests.reserve(group.transfers.size());
  const auto start = std::chrono::steady_clock::now();
  for (const bool sends : {false, true})
    for (const Transfer& t : group.transfers) {
      if (t.send != sends) continue;
      requests.emplace_back();
      const int count = static_cast<int>(t.count);  // max_count() keeps it an int
      if (t.send)
        FB_MPI_CHECK(MPI_Isend(send_buffer() + t.offset * element, count, type, t.peer, kTag, comm_, &requests.back()));
      else
        FB_MPI_CHECK(
            MPI_Irecv(receive_buffer() + t.offset * element, count, type, t.peer, kTag, comm_, &requests.back()));
    }
  FB_MPI_CHECK(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE));
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace fabricbench::collectives
