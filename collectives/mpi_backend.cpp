// SPDX-License-Identifier: Apache-2.0
#include "collectives/mpi_backend.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <new>

#include "collectives/host_data.hpp"
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

// Poison for outputs, so an element the collective never wrote is counted wrong.
constexpr int kPoisonByte = 0xA5;

}  // namespace

HostBuffer::HostBuffer(std::size_t bytes) : bytes_(bytes) {
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const std::size_t rounded = std::max<std::size_t>(page, (bytes + page - 1) / page * page);
  auto* memory = static_cast<std::byte*>(std::aligned_alloc(page, rounded));
  if (!memory) throw std::bad_alloc();
  std::memset(memory, 0, rounded);  // touch every page now, not inside a timed call
  memory_.reset(memory);
}

void HostBuffer::Free::operator()(std::byte* p) const noexcept { std::free(p); }

MpiBackend::MpiBackend(const BackendGroup& group, CacheMode cache)
    : comm_(MPI_COMM_NULL), rank_(group.rank), ranks_(group.size), cache_(cache) {
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

KeyValues MpiBackend::settings() const {
  KeyValues settings;
  if (cache_ != CacheMode::kWarm) settings.set("cache", std::string(name_of(cache_)));
  return settings;
}

void MpiBackend::set_group(std::vector<int> members) {
  group_ = std::move(members);
  const auto me = std::find(group_.begin(), group_.end(), rank_);
  if (!group_.empty() && me == group_.end()) throw Error(fmt::format("rank {} is not in its own group", rank_));
  group_rank_ = group_.empty() ? rank_ : static_cast<int>(me - group_.begin());
}

void MpiBackend::reserve(std::uint64_t send_bytes, std::uint64_t recv_bytes) {
  // Cold calls move both buffers' views by the same window, as nccl-tests does: both hold the
  // largest call.
  if (cache_ == CacheMode::kCold) send_bytes = recv_bytes = std::max(send_bytes, recv_bytes);
  send_ = HostBuffer(send_bytes);
  recv_ = HostBuffer(recv_bytes);
}

Shape MpiBackend::shape_of(const CallSpec& call) const { return {group_rank(), ranks(), call.root, call.count}; }

MpiBackend::View MpiBackend::input_view(const CallSpec& call) const {
  const bool in_place = call.placement == Placement::kInPlace;
  const Span span = input_span(*call.collective, shape_of(call), in_place);
  std::byte* base = (in_place ? recv_.data() : send_.data()) + window_offset_;
  return {base + span.offset * size_of(call.dtype), span.elements};
}

MpiBackend::View MpiBackend::output_view(const CallSpec& call) const {
  const Span span = output_span(*call.collective, shape_of(call), call.placement == Placement::kInPlace, Library::kMpi);
  return {recv_.data() + window_offset_ + span.offset * size_of(call.dtype), span.elements};
}

DataLayout MpiBackend::layout_of(const CallSpec& call) const {
  return {call.collective->source, call.dtype, call.op, group_rank(), ranks(), call.root, call.count};
}

void MpiBackend::prepare(const CallSpec& call) {
  const BufferCounts counts = call.collective->buffers(call.count, ranks());
  const std::size_t element = size_of(call.dtype);
  windows_.start(std::max(counts.send, counts.recv) * element, std::min(send_.size(), recv_.size()), cache_);
  window_offset_ = 0;
  std::memset(recv_.data(), kPoisonByte, counts.recv * element);
  const View in = input_view(call);
  fill_input_host(layout_of(call), in.data, 0, in.elements);
}

MpiCall MpiBackend::make_call(const CallSpec& call) const {
  const Collective& c = *call.collective;
  MpiCall m;
  m.in = input_view(call).data;
  m.recv = recv_.data();
  m.out = output_view(call).data;
  m.in_place = call.placement == Placement::kInPlace;
  m.count = static_cast<int>(call.count);
  m.chunk_bytes = call.count * size_of(call.dtype);
  m.type = mpi_type(call.dtype);
  m.op = c.reduces ? mpi_op(call.op) : MPI_OP_NULL;
  m.shape = shape_of(call);
  m.comm = comm_;
  m.comm_ranks = group_.empty() ? nullptr : group_.data();
  return m;
}

double MpiBackend::run(const CallSpec& call, int operations) {
  // Everything but the calls themselves is settled before the clock starts: the calls of each
  // window made once.
  void (*const issue)(const MpiCall&) =
      call.form == CallForm::kLibrary ? call.collective->mpi : call.collective->mpi_p2p;
  const auto windows = static_cast<std::size_t>(std::min<std::uint64_t>(windows_.windows(), operations));
  std::vector<MpiCall> calls;
  calls.reserve(windows);
  for (std::size_t i = 0; i < windows; ++i) {
    window_offset_ = windows_.next();
    calls.push_back(make_call(call));
  }
  // The window after the last call: the next run starts there, as nccl-tests' next iteration does.
  for (int i = static_cast<int>(windows); i < operations; ++i) windows_.next();
  window_offset_ = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < operations; ++i) issue(calls[static_cast<std::size_t>(i) % windows]);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::uint64_t MpiBackend::count_wrong(const CallSpec& call) {
  const View out = output_view(call);
  return count_wrong_host(layout_of(call), out.data, out.elements);
}

bool MpiBackend::corrupt_output(const CallSpec& call) {
  const View out = output_view(call);
  if (out.elements == 0) return false;
  corrupt_first_host(call.dtype, out.data);
  return true;
}

}  // namespace fabricbench::collectives
