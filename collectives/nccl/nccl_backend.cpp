// SPDX-License-Identifier: Apache-2.0
#include "collectives/nccl/nccl_backend.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <thread>

#include "collectives/nccl/data_kernels.hpp"
#include "common/error.hpp"

namespace fabricbench::collectives {
namespace {

#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 24, 0)
constexpr bool kNcclHasFp8 = true;
#else
constexpr bool kNcclHasFp8 = false;
#endif

ncclDataType_t nccl_type(DataType dtype) {
  switch (dtype) {
    case DataType::kInt8: return ncclInt8;
    case DataType::kUint8: return ncclUint8;
    case DataType::kInt32: return ncclInt32;
    case DataType::kUint32: return ncclUint32;
    case DataType::kInt64: return ncclInt64;
    case DataType::kUint64: return ncclUint64;
    case DataType::kFloat16: return ncclFloat16;
    case DataType::kBfloat16: return ncclBfloat16;
    case DataType::kFloat32: return ncclFloat32;
    case DataType::kFloat64: return ncclFloat64;
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 24, 0)
    case DataType::kFloat8e4m3: return ncclFloat8e4m3;
    case DataType::kFloat8e5m2: return ncclFloat8e5m2;
#endif
    default: throw Error(fmt::format("this NCCL has no {} type", name_of(dtype)));
  }
}

ncclRedOp_t nccl_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum: return ncclSum;
    case ReduceOp::kProd: return ncclProd;
    case ReduceOp::kMin: return ncclMin;
    case ReduceOp::kMax: return ncclMax;
    case ReduceOp::kAvg: return ncclAvg;
  }
  return ncclSum;
}

constexpr int kPoisonByte = 0xA5;

std::uint64_t device_memory_used() {
  std::size_t free = 0, total = 0;
  FB_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  return total - free;
}

std::string uuid_text(const cudaUUID_t& uuid) {
  std::string text = "GPU-";
  for (int i = 0; i < 16; ++i) {
    text += fmt::format("{:02x}", static_cast<unsigned char>(uuid.bytes[i]));
    if (i == 3 || i == 5 || i == 7 || i == 9) text += '-';
  }
  return text;
}

}  // namespace

Communicator::~Communicator() {
  if (comm_ && ncclCommDestroy(comm_) != ncclSuccess)
    std::fputs("fabricbench: warning: ncclCommDestroy failed\n", stderr);
}

void Communicator::abort() noexcept {
  if (comm_) ncclCommAbort(comm_);
  comm_ = nullptr;
}

NcclBackend::NcclBackend(const mpi::Topology& topology, const NcclSettings& settings)
    : topology_(topology), settings_(settings) {
  int devices = 0;
  const cudaError_t rc = cudaGetDeviceCount(&devices);
  if (rc != cudaSuccess || devices == 0)
    throw UsageError(fmt::format("--backend nccl: no CUDA GPU visible on {} ({}); run on a GPU node or use --backend mpi",
                                 topology.host, rc == cudaSuccess ? "0 devices" : cudaGetErrorString(rc)));
  device_ = topology.local_rank + settings.gpu_offset;
  if (topology.local_size + settings.gpu_offset > devices)
    throw UsageError(fmt::format(
        "{} rank(s) on host {} (GPU offset {}) but it has {} GPU(s): NCCL refuses two ranks on one GPU; launch at "
        "most {} rank(s) per node (mpirun --map-by ppr:{}:node, srun --ntasks-per-node={})",
        topology.local_size, topology.host, settings.gpu_offset, devices, devices - settings.gpu_offset,
        devices - settings.gpu_offset, devices - settings.gpu_offset));
  FB_CUDA_CHECK(cudaSetDevice(device_));
  FB_CUDA_CHECK(cudaFree(nullptr));  // create the context now, so its memory counts as baseline
  device_used_at_start_bytes_ = device_memory_used();
  stream_ = cuda::make_stream();
  start_ = cuda::make_event();
  stop_ = cuda::make_event();
  wrong_counter_ = cuda::DeviceBuffer(sizeof(unsigned long long));
}

void NcclBackend::connect() {
  ncclUniqueId id{};
  if (topology_.rank == 0) FB_NCCL_CHECK(ncclGetUniqueId(&id));
  FB_MPI_CHECK(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD));
  ncclComm_t comm = nullptr;
  FB_NCCL_CHECK(ncclCommInitRank(&comm, topology_.size, id, topology_.rank));
  comm_ = Communicator(comm);
}

std::string NcclBackend::dtype_unsupported(DataType dtype) const {
  if (dtype == DataType::kFloat8e4m3 || dtype == DataType::kFloat8e5m2) {
    if (!kNcclHasFp8) return "fp8 needs NCCL 2.24 or newer";
    int major = 0;
    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device_);
    if (major < 9) return "NCCL reduces fp8 only on sm_90 (Hopper) or newer GPUs";
  }
  return {};
}

std::string NcclBackend::op_unsupported(ReduceOp) const { return {}; }

std::uint64_t NcclBackend::max_count() const { return static_cast<std::uint64_t>(INT64_MAX); }

void NcclBackend::reserve(std::uint64_t send_bytes, std::uint64_t recv_bytes) {
  send_ = cuda::DeviceBuffer(send_bytes);
  recv_ = cuda::DeviceBuffer(recv_bytes);
}

NcclBackend::View NcclBackend::input_view(const CallSpec& call) const {
  const BufferCounts counts = call.collective->buffers(call.count, topology_.size);
  if (call.placement == Placement::kOutOfPlace) return {send_.data(), counts.send};
  if (call.collective->kind == Kind::kAllGather)
    return {recv_.data() + topology_.rank * call.count * size_of(call.dtype), call.count};
  return {recv_.data(), counts.send};
}

NcclBackend::View NcclBackend::output_view(const CallSpec& call) const {
  const BufferCounts counts = call.collective->buffers(call.count, topology_.size);
  switch (call.collective->kind) {
    case Kind::kReduce:
      return {recv_.data(), topology_.rank == call.root ? call.count : 0};
    case Kind::kReduceScatter:  // in place, NCCL writes my share where it sits in the input
      if (call.placement == Placement::kInPlace)
        return {recv_.data() + topology_.rank * call.count * size_of(call.dtype), call.count};
      return {recv_.data(), call.count};
    default:
      return {recv_.data(), counts.recv};
  }
}

void NcclBackend::prepare(const CallSpec& call) {
  const BufferCounts counts = call.collective->buffers(call.count, topology_.size);
  const std::size_t element = size_of(call.dtype);
  FB_CUDA_CHECK(cudaMemsetAsync(recv_.data(), kPoisonByte, std::max(counts.recv, counts.send) * element, stream_.get()));
  const View in = input_view(call);
  const DataLayout layout{call.collective->kind, call.dtype, call.op, topology_.rank, topology_.size, call.root, call.count};
  fill_input_device(layout, in.data, 0, in.elements, stream_.get());
  wait("filling the input");
}

void NcclBackend::enqueue(const CallSpec& call) {
  const bool in_place = call.placement == Placement::kInPlace;
  const View in = input_view(call);
  const View out = output_view(call);
  const ncclDataType_t type = nccl_type(call.dtype);
  ncclComm_t comm = comm_.get();
  cudaStream_t stream = stream_.get();
  const std::size_t count = call.count;
  const std::size_t chunk_bytes = call.count * size_of(call.dtype);
  std::byte* recv = recv_.data();
  std::byte* send = in_place ? recv : send_.data();
  const int rank = topology_.rank;
  const int ranks = topology_.size;
  switch (call.collective->kind) {
    case Kind::kAllReduce:
      FB_NCCL_CHECK(ncclAllReduce(in.data, recv, count, type, nccl_op(call.op), comm, stream));
      break;
    case Kind::kAllGather:
      FB_NCCL_CHECK(ncclAllGather(in.data, recv, count, type, comm, stream));
      break;
    case Kind::kReduceScatter:
      FB_NCCL_CHECK(ncclReduceScatter(in.data, out.data, count, type, nccl_op(call.op), comm, stream));
      break;
    case Kind::kBroadcast:
      FB_NCCL_CHECK(ncclBroadcast(send, recv, count, type, call.root, comm, stream));
      break;
    case Kind::kReduce:
      FB_NCCL_CHECK(ncclReduce(send, recv, count, type, nccl_op(call.op), call.root, comm, stream));
      break;
    case Kind::kAllToAll:  // point-to-point in a group, as nccl-tests does
      FB_NCCL_CHECK(ncclGroupStart());
      for (int peer = 0; peer < ranks; ++peer) {
        FB_NCCL_CHECK(ncclSend(send + peer * chunk_bytes, count, type, peer, comm, stream));
        FB_NCCL_CHECK(ncclRecv(recv + peer * chunk_bytes, count, type, peer, comm, stream));
      }
      FB_NCCL_CHECK(ncclGroupEnd());
      break;
    case Kind::kSendRecv:
      FB_NCCL_CHECK(ncclGroupStart());
      FB_NCCL_CHECK(ncclSend(send, count, type, (rank + 1) % ranks, comm, stream));
      FB_NCCL_CHECK(ncclRecv(recv, count, type, (rank - 1 + ranks) % ranks, comm, stream));
      FB_NCCL_CHECK(ncclGroupEnd());
      break;
  }
}

void NcclBackend::wait(const char* what) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  while (true) {
    const cudaError_t state = cudaStreamQuery(stream_.get());
    if (state == cudaSuccess) return;
    if (state != cudaErrorNotReady) FB_CUDA_CHECK(state);
    if (comm_.get()) {
      ncclResult_t async = ncclSuccess;
      FB_NCCL_CHECK(ncclCommGetAsyncError(comm_.get(), &async));
      if (async != ncclSuccess && async != ncclInProgress) {
        comm_.abort();
        nccl::check(async, "NCCL asynchronous error", __FILE__, __LINE__);
      }
    }
    const double waited = std::chrono::duration<double>(Clock::now() - start).count();
    if (settings_.timeout_seconds > 0 && waited > settings_.timeout_seconds) {
      comm_.abort();
      throw TimeoutError(fmt::format(
          "{} did not finish within {:g} s on GPU {} (stream still busy); NCCL communicator aborted. A peer rank is "
          "stuck or dead, or the fabric stalled: check the other ranks' messages; raise -T if this size is "
          "legitimately this slow",
          what, settings_.timeout_seconds, device_));
    }
    // Short waits poll hot (small messages finish in microseconds); long ones yield the core.
    if (waited > 1e-3) std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

cuda::GraphExec& NcclBackend::graph_for(const CallSpec& call) {
  const bool same = graph_call_ && graph_call_->collective == call.collective && graph_call_->dtype == call.dtype &&
                    graph_call_->op == call.op && graph_call_->root == call.root && graph_call_->count == call.count &&
                    graph_call_->placement == call.placement;
  if (same && graph_) return graph_;
  cudaGraph_t raw = nullptr;
  FB_CUDA_CHECK(cudaStreamBeginCapture(stream_.get(), cudaStreamCaptureModeThreadLocal));
  try {
    for (int i = 0; i < settings_.graph_iterations; ++i) enqueue(call);
  } catch (...) {
    cudaStreamEndCapture(stream_.get(), &raw);
    if (raw) cudaGraphDestroy(raw);
    throw;
  }
  FB_CUDA_CHECK(cudaStreamEndCapture(stream_.get(), &raw));
  cuda::Graph graph(raw);
  cudaGraphExec_t exec = nullptr;
  FB_CUDA_CHECK(cudaGraphInstantiate(&exec, graph.get(), 0));
  graph_.reset(exec);
  graph_call_ = call;
  return graph_;
}

double NcclBackend::run(const CallSpec& call, int operations) {
  int launches = operations;
  int per_launch = 1;
  if (settings_.graph_iterations > 0) {
    per_launch = settings_.graph_iterations;
    launches = (operations + per_launch - 1) / per_launch;
    graph_for(call);
  }
  FB_CUDA_CHECK(cudaEventRecord(start_.get(), stream_.get()));
  for (int i = 0; i < launches; ++i) {
    if (per_launch > 1 || settings_.graph_iterations > 0)
      FB_CUDA_CHECK(cudaGraphLaunch(graph_.get(), stream_.get()));
    else
      enqueue(call);
  }
  FB_CUDA_CHECK(cudaEventRecord(stop_.get(), stream_.get()));
  wait("the timed operations");
  float milliseconds = 0;
  FB_CUDA_CHECK(cudaEventElapsedTime(&milliseconds, start_.get(), stop_.get()));
  const double executed = static_cast<double>(launches) * per_launch;
  return milliseconds * 1e-3 * operations / executed;
}

std::uint64_t NcclBackend::count_wrong(const CallSpec& call) {
  const View out = output_view(call);
  const DataLayout layout{call.collective->kind, call.dtype, call.op, topology_.rank, topology_.size, call.root, call.count};
  auto* counter = reinterpret_cast<unsigned long long*>(wrong_counter_.data());
  FB_CUDA_CHECK(cudaMemsetAsync(counter, 0, sizeof *counter, stream_.get()));
  count_wrong_device(layout, out.data, out.elements, counter, stream_.get());
  unsigned long long wrong = 0;
  FB_CUDA_CHECK(cudaMemcpyAsync(&wrong, counter, sizeof wrong, cudaMemcpyDeviceToHost, stream_.get()));
  wait("the data check");
  return wrong;
}

bool NcclBackend::corrupt_output(const CallSpec& call) {
  const View out = output_view(call);
  if (out.elements == 0) return false;
  corrupt_first_device(call.dtype, out.data, stream_.get());
  wait("the fault injection");
  return true;
}

std::string NcclBackend::settings() const {
  return settings_.graph_iterations > 0 ? fmt::format("graph_iterations={}", settings_.graph_iterations) : std::string();
}

nlohmann::json NcclBackend::rank_context() const {
  cudaDeviceProp properties{};
  FB_CUDA_CHECK(cudaGetDeviceProperties(&properties, device_));
  char bus_id[32] = {};
  FB_CUDA_CHECK(cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, device_));
  int runtime = 0, driver = 0, nccl_library = 0;
  cudaRuntimeGetVersion(&runtime);
  cudaDriverGetVersion(&driver);
  ncclGetVersion(&nccl_library);
  return {{"gpu_index", device_},
          {"gpu_name", properties.name},
          {"gpu_uuid", uuid_text(properties.uuid)},
          {"gpu_pci_bus_id", bus_id},
          {"gpu_memory_bytes", properties.totalGlobalMem},
          {"compute_capability", fmt::format("{}.{}", properties.major, properties.minor)},
          {"cuda_runtime_version", runtime},
          {"cuda_driver_version", driver},
          {"nccl_library_version", nccl_library},
          {"nccl_header_version", NCCL_VERSION_CODE},
          {"device_memory_used_bytes", device_memory_used()},
          {"device_memory_used_at_start_bytes", device_used_at_start_bytes_},
          {"buffer_bytes", send_.size() + recv_.size()}};
}

}  // namespace fabricbench::collectives
