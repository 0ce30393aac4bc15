// SPDX-License-Identifier: Apache-2.0
#include "collectives/nccl/nccl_backend.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string_view>
#include <thread>
#include <utility>

#include "collectives/nccl/data_kernels.hpp"
#include "collectives/nccl/nccl_call.hpp"
#include "collectives/nccl/nccl_log.hpp"
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

NcclMemory::NcclMemory(std::size_t bytes) : bytes_(bytes) {
  if (bytes == 0) return;
  void* p = nullptr;
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 19, 0)
  FB_NCCL_CHECK(ncclMemAlloc(&p, bytes));
#else
  FB_CUDA_CHECK(cudaMalloc(&p, bytes));
#endif
  memory_.reset(p);
}

void NcclMemory::Free::operator()(void* p) const noexcept {
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 19, 0)
  if (ncclMemFree(p) != ncclSuccess) std::fputs("fabricbench: warning: ncclMemFree failed\n", stderr);
#else
  FB_CUDA_CHECK_NOEXCEPT(cudaFree(p));
#endif
}

Communicator::~Communicator() {
  if (!comm_) return;
  // Unwinding means something failed: a peer may be inside a collective, and ncclCommDestroy
  // would wait for it.
  if (std::uncaught_exceptions() > 0) {
    ncclCommAbort(comm_);
    return;
  }
  if (ncclCommDestroy(comm_) != ncclSuccess) std::fputs("fabricbench: warning: ncclCommDestroy failed\n", stderr);
}

void Communicator::abort() noexcept {
  if (comm_) ncclCommAbort(comm_);
  comm_ = nullptr;
}

NcclBackend::NcclBackend(const Topology& topology, const NcclSettings& settings)
    : topology_(topology), settings_(settings) {
  ncclGetVersion(&library_version_);
  int devices = 0;
  const cudaError_t rc = cudaGetDeviceCount(&devices);
  if (rc != cudaSuccess || devices == 0)
    throw UsageError(
        fmt::format("--backend nccl: no CUDA GPU visible on {} ({}); run on a GPU node or use --backend mpi",
                    topology.host, rc == cudaSuccess ? "0 devices" : cudaGetErrorString(rc)));
  const int per_process = settings.gpus_per_process;
  const int wanted = topology.local_size * per_process + settings.gpu_offset;
  // NCCL_HOSTID makes NCCL take each rank for its own host, so ranks may share a GPU (over the
  // network transport): how one GPU exercises multi-rank paths. GPUs are then dealt round robin.
  const bool shared_gpus = std::getenv("NCCL_HOSTID") != nullptr;
  if (wanted > devices && !shared_gpus) {
    const int fit = std::max(0, (devices - settings.gpu_offset) / per_process);
    throw UsageError(fmt::format(
        "{} rank(s) x {} GPU(s) each on host {} (GPU offset {}) need {} GPUs but it has {}: NCCL refuses two ranks on "
        "one GPU; launch at most {} process(es) per node (mpirun --map-by ppr:{}:node, srun --ntasks-per-node={}) "
        "or lower -g",
        topology.local_size, per_process, topology.host, settings.gpu_offset, wanted, devices, fit, fit, fit));
  }
  lanes_.resize(static_cast<std::size_t>(per_process));
  for (int i = 0; i < per_process; ++i) {
    Lane& lane = lanes_[static_cast<std::size_t>(i)];
    lane.device = (topology.local_rank * per_process + i + settings.gpu_offset) % (shared_gpus ? devices : INT_MAX);
    lane.rank = group_rank() * per_process + i;
    FB_CUDA_CHECK(cudaSetDevice(lane.device));
    FB_CUDA_CHECK(cudaFree(nullptr));  // create the context now, so its memory counts as baseline
    lane.used_at_start_bytes = device_memory_used();
    lane.stream = cuda::make_stream();
    lane.wrong_counter = cuda::DeviceBuffer(sizeof(unsigned long long));
  }
}

NcclBackend::~NcclBackend() {
  lanes_.clear();  // communicators first: NCCL writes its last log lines as they go
  remove_temporary_log();
}

void NcclBackend::remove_temporary_log() const noexcept {
  std::error_code ec;
  if (settings_.log_is_temporary && !settings_.log_file.empty()) std::filesystem::remove(settings_.log_file, ec);
}

std::string bundled_profiler_plugin() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  for (const auto& candidate : {exe.parent_path().parent_path() / "lib" / nccl_path::kProfilerLibrary,
                                exe.parent_path() / nccl_path::kProfilerLibrary})
    if (std::filesystem::exists(candidate, ec)) return candidate.string();
  return {};
}

void NcclBackend::prepare_environment() {
  // Set by the user, not by an earlier backend of this process (the rounds of --pairs): the
  // environment is the process's, so is the memory of what fabricbench put there.
  static std::set<std::string> set_by_us;
  auto user_set = [](const char* name) { return std::getenv(name) != nullptr && !set_by_us.count(name); };
  auto set = [](const char* name, const std::string& value) {
    ::setenv(name, value.c_str(), 1);
    set_by_us.insert(name);
  };

  // What the user's profiler plugin or the recorder writes, they write as the communicator is
  // finalized: such a run is torn down however long it takes.
  const char* users_plugin = user_set("NCCL_PROFILER_PLUGIN") ? std::getenv("NCCL_PROFILER_PLUGIN") : nullptr;
  const char* trace_dir = std::getenv("FABRICBENCH_TRACE_DIR");
  finalize_writes_ = (users_plugin && std::string_view(users_plugin) != "none") || (trace_dir && *trace_dir);
  std::string plugin;
  if (settings_.observe_path && !settings_.profiler_plugin.empty() && !user_set("NCCL_PROFILER_PLUGIN")) {
    set("NCCL_PROFILER_PLUGIN", settings_.profiler_plugin);
    plugin = settings_.profiler_plugin;
  }
  bool tuning_logged = false;
  if (!settings_.observe_path) {
    log_note_ = "--path off: NCCL's log was not captured";
  } else if (user_set("NCCL_DEBUG") && !user_set("NCCL_DEBUG_FILE")) {
    log_note_ = fmt::format(
        "NCCL_DEBUG={} is your console choice: fabricbench leaves it and reads no log (unset it, or set "
        "NCCL_DEBUG_FILE as well, for the transport report)",
        std::getenv("NCCL_DEBUG"));
  } else if (user_set("NCCL_DEBUG_FILE")) {
    log_note_ = "NCCL_DEBUG_FILE is yours: its %h/%p names are not read back; set --nccl-logs instead";
  } else if (!settings_.log_file.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(settings_.log_file).parent_path(), ec);
    // Setup lines only when the plugin reports each call: TUNING logs a line per call.
    const char* subsystems = plugin.empty() ? "INIT,ENV,NET,GRAPH,TUNING" : "INIT,ENV,NET,GRAPH";
    set("NCCL_DEBUG", "INFO");
    set("NCCL_DEBUG_FILE", settings_.log_file);
    if (!user_set("NCCL_DEBUG_SUBSYS")) set("NCCL_DEBUG_SUBSYS", subsystems);
    const std::string chosen = std::getenv("NCCL_DEBUG_SUBSYS");
    tuning_logged = chosen.find("TUNING") != std::string::npos || chosen.find("ALL") != std::string::npos;
    log_path_ = settings_.log_file;
  }
  observer_ = PathObserver(plugin, log_path_, tuning_logged);
  environment_ready_ = true;
}

void NcclBackend::set_tuning(const std::string& algorithm, const std::string& protocol) {
  // NCCL reads NCCL_ALGO / NCCL_PROTO again at every communicator init (ncclTopoTuneModel).
  algorithm_ = algorithm;
  protocol_ = protocol;
  for (const auto& [name, value] : {std::pair{"NCCL_ALGO", algorithm}, std::pair{"NCCL_PROTO", protocol}})
    if (!value.empty()) ::setenv(name, value.c_str(), 1);
}

void NcclBackend::reconnect() {
  graph_call_.reset();
  for (Lane& lane : lanes_) {
    lane.graph = cuda::GraphExec();  // captured against the old communicator
    lane.comm = Communicator();      // destroyed (or already aborted)
  }
  connect();
}

ObservedPath NcclBackend::observed_path(const CallSpec& call) {
  return observer_.observe(std::string(call.collective->nccl_function), call.count, size_of(call.dtype));
}

nlohmann::json NcclBackend::path_digest() const {
  if (log_path_.empty()) return nullptr;
  std::ifstream log(log_path_);
  log.seekg(log_start_);
  std::stringstream text;
  text << log.rdbuf();
  nccl_path::LogDigest digest = nccl_path::digest_log(text.str());
  if (window_start_ > log_start_) {
    // The network and HCAs from the communicator's setup, the connections from the window only.
    const std::string all = text.str();
    const auto from = static_cast<std::size_t>(window_start_ - log_start_);
    const nccl_path::LogDigest window = nccl_path::digest_log(from < all.size() ? all.substr(from) : std::string());
    digest.transports = window.transports;
    digest.tuning = window.tuning;
  }
  return nccl_path::to_json(digest);
}

void NcclBackend::begin_path_window() {
  if (log_path_.empty()) return;
  std::error_code ec;
  const auto size = std::filesystem::file_size(log_path_, ec);
  window_start_ = ec ? log_start_ : std::max(log_start_, static_cast<std::streamoff>(size));
}

std::string NcclBackend::path_note() const {
  std::string note = log_note_;
  const std::string observer = observer_.note();
  if (!observer.empty()) note += (note.empty() ? "" : "; ") + observer;
  return note;
}

void NcclBackend::connect() {
  if (!environment_ready_) prepare_environment();
  // NCCL opens its log once per process: a later backend (the next --pairs round) reads its part.
  if (!log_path_.empty() && !log_start_taken_) {
    log_start_taken_ = true;  // reconnects (--algo/--proto) keep reading from the first connect
    std::error_code ec;
    const auto size = std::filesystem::file_size(log_path_, ec);
    log_start_ = ec ? 0 : static_cast<std::streamoff>(size);
  }
  ncclUniqueId id{};
  if (!settings_.group) throw Error("an NCCL backend made to answer questions cannot connect");
  if (group_rank() == 0) FB_NCCL_CHECK(ncclGetUniqueId(&id));
  const std::string root_id = settings_.group->broadcast(std::string(reinterpret_cast<const char*>(&id), sizeof id), 0);
  std::memcpy(&id, root_id.data(), sizeof id);
  // Several GPUs in one process must join inside one group, or the first init waits for the rest.
  // Each handle is owned from the moment NCCL hands it out, so a failure part-way (a later init, the
  // group end) aborts the ones already made instead of leaking them.
  std::vector<ncclComm_t> comms(lanes_.size(), nullptr);
  try {
    FB_NCCL_CHECK(ncclGroupStart());
    for (std::size_t i = 0; i < lanes_.size(); ++i) {
      FB_CUDA_CHECK(cudaSetDevice(lanes_[i].device));
      FB_NCCL_CHECK(ncclCommInitRank(&comms[i], ranks(), id, lanes_[i].rank));
    }
    FB_NCCL_CHECK(ncclGroupEnd());
  } catch (...) {
    for (ncclComm_t comm : comms)
      if (comm) ncclCommAbort(comm);
    throw;
  }
  for (std::size_t i = 0; i < lanes_.size(); ++i) lanes_[i].comm = Communicator(comms[i]);
}

std::string NcclBackend::dtype_unsupported(DataType dtype) const {
  if (dtype == DataType::kFloat8e4m3 || dtype == DataType::kFloat8e5m2) {
    if (!kNcclHasFp8) return "fp8 needs NCCL 2.24 or newer";
    for (const Lane& lane : lanes_) {
      int major = 0;
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, lane.device);
      if (major < 9) return "NCCL reduces fp8 only on sm_90 (Hopper) or newer GPUs";
    }
  }
  return {};
}

std::string NcclBackend::op_unsupported(ReduceOp) const { return {}; }

std::string NcclBackend::pair_unsupported(DataType dtype, ReduceOp op) const {
  // NCCL's avg is a pre-multiplied sum; it rejects fp8 for it (ncclInvalidArgument, seen on 2.28).
  if ((dtype == DataType::kFloat8e4m3 || dtype == DataType::kFloat8e5m2) && op == ReduceOp::kAvg)
    return "NCCL has no avg reduction for fp8 types";
  return {};
}

std::uint64_t NcclBackend::max_count() const { return static_cast<std::uint64_t>(INT64_MAX); }

bool NcclBackend::has_form(const Collective& c, CallForm form) const {
  if (form == CallForm::kPointToPoint) return c.nccl_p2p != nullptr;
  return c.nccl != nullptr && library_version_ >= c.nccl_since;
}

std::string NcclBackend::call_name(const Collective& c, CallForm form) const {
  return std::string(form == CallForm::kPointToPoint ? kNcclPointToPointName : c.nccl_name);
}

void NcclBackend::set_group(std::vector<int> members) {
  if (!members.empty() && settings_.gpus_per_process != 1)
    throw Error("a group of the communicator's ranks needs one GPU per process (-g 1)");
  if (!members.empty() && std::find(members.begin(), members.end(), lanes_.front().rank) == members.end())
    throw Error(fmt::format("NCCL rank {} is not in its own group", lanes_.front().rank));
  members_ = std::move(members);
}

int NcclBackend::call_rank(const Lane& lane) const {
  if (members_.empty()) return lane.rank;
  return static_cast<int>(std::find(members_.begin(), members_.end(), lane.rank) - members_.begin());
}

KeyValues NcclBackend::method_settings() const {
  KeyValues settings;
  if (settings_.cache != CacheMode::kCold) settings.set("cache", std::string(name_of(settings_.cache)));
  if (settings_.timer != Timer::kEvents) settings.set("timer", "host");
  return settings;
}

void NcclBackend::reserve(std::uint64_t send_bytes, std::uint64_t recv_bytes) {
  // Both buffers hold the largest call, and cold calls move both views by the same window: what
  // nccl-tests allocates and does.
  const std::uint64_t bytes = std::max(send_bytes, recv_bytes);
  for (Lane& lane : lanes_) {
    FB_CUDA_CHECK(cudaSetDevice(lane.device));
    lane.send = NcclMemory(bytes);
    lane.recv = NcclMemory(bytes);
  }
}

Shape NcclBackend::shape_of(const Lane& lane, const CallSpec& call) const {
  return {call_rank(lane), ranks(), call.root, call.count};
}

NcclBackend::View NcclBackend::input_view(const Lane& lane, const CallSpec& call) const {
  const bool in_place = call.placement == Placement::kInPlace;
  const Span span = input_span(*call.collective, shape_of(lane, call), in_place);
  std::byte* base = (in_place ? lane.recv.data() : lane.send.data()) + window_offset_;
  return {base + span.offset * size_of(call.dtype), span.elements};
}

NcclBackend::View NcclBackend::output_view(const Lane& lane, const CallSpec& call) const {
  const Span span =
      output_span(*call.collective, shape_of(lane, call), call.placement == Placement::kInPlace, Library::kNccl);
  return {lane.recv.data() + window_offset_ + span.offset * size_of(call.dtype), span.elements};
}

void NcclBackend::prepare(const CallSpec& call) {
  const BufferCounts counts = call.collective->buffers(call.count, ranks());
  const std::size_t element = size_of(call.dtype);
  const std::uint64_t call_bytes = std::max(counts.recv, counts.send) * element;
  windows_.start(call_bytes, lanes_.front().recv.size(), settings_.cache);
  window_offset_ = 0;
  for (Lane& lane : lanes_) {
    FB_CUDA_CHECK(cudaSetDevice(lane.device));
    FB_CUDA_CHECK(cudaMemsetAsync(lane.recv.data(), kPoisonByte, call_bytes, lane.stream.get()));
    const View in = input_view(lane, call);
    const DataLayout layout{
        call.collective->source, call.dtype, call.op, call_rank(lane), ranks(), call.root, call.count};
    fill_input_device(layout, in.data, 0, in.elements, lane.stream.get());
  }
  wait("filling the input");
}

void NcclBackend::enqueue(Lane& lane, const CallSpec& call) {
  NcclCall c;
  c.in = input_view(lane, call).data;
  c.recv = lane.recv.data() + window_offset_;
  c.out = output_view(lane, call).data;
  c.count = call.count;
  c.chunk_bytes = call.count * size_of(call.dtype);
  c.type = nccl_type(call.dtype);
  c.op = nccl_op(call.op);
  c.shape = shape_of(lane, call);
  c.comm = lane.comm.get();
  c.stream = lane.stream.get();
  c.comm_ranks = members_.empty() ? nullptr : members_.data();
  (call.form == CallForm::kPointToPoint ? call.collective->nccl_p2p : call.collective->nccl)(c);
}

void NcclBackend::enqueue_all(const CallSpec& call) {
  window_offset_ = windows_.next();
  if (lanes_.size() == 1) {
    enqueue(lanes_.front(), call);
  } else {
    FB_NCCL_CHECK(ncclGroupStart());
    for (Lane& lane : lanes_) enqueue(lane, call);
    FB_NCCL_CHECK(ncclGroupEnd());
  }
  window_offset_ = 0;  // the views made for preparing and checking: the first window's
}

void NcclBackend::abort_all() noexcept {
  for (Lane& lane : lanes_) lane.comm.abort();
}

void NcclBackend::wait(const char* what, double held_seconds) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  std::size_t done = 0;  // lanes finish in order of checking; a finished lane stays finished
  while (true) {
    while (done < lanes_.size()) {
      const cudaError_t state = cudaStreamQuery(lanes_[done].stream.get());
      if (state == cudaErrorNotReady) break;
      if (state != cudaSuccess) {
        abort_all();  // peers may be inside this collective: never leave a live communicator behind
        FB_CUDA_CHECK(state);
      }
      ++done;
    }
    if (done == lanes_.size()) return;
    for (Lane& lane : lanes_) {
      if (!lane.comm.get()) continue;
      ncclResult_t async = ncclSuccess;
      FB_NCCL_CHECK(ncclCommGetAsyncError(lane.comm.get(), &async));
      if (async != ncclSuccess && async != ncclInProgress) {
        const char* last = ncclGetLastError(lane.comm.get());
        const std::string reason =
            fmt::format("{}{}", ncclGetErrorString(async), last && *last ? fmt::format("; NCCL says: {}", last) : "");
        abort_all();
        throw nccl::NcclError(
            fmt::format("{}: NCCL reported an asynchronous error on GPU {}: {}", what, lane.device, reason), async);
      }
    }
    const double waited = std::chrono::duration<double>(Clock::now() - start).count();
    if (settings_.timeout_seconds > 0 && waited > settings_.timeout_seconds + held_seconds) {
      abort_all();
      throw TimeoutError(fmt::format(
          "{} did not finish within {:g} s on GPU {} (stream still busy); NCCL communicators aborted. A peer rank is "
          "stuck or dead, or the fabric stalled: check the other ranks' messages; raise -T if this size is "
          "legitimately this slow",
          what, settings_.timeout_seconds, lanes_[done].device));
    }
    // Short waits poll hot (small messages finish in microseconds); long ones yield the core.
    if (waited > 1e-3) std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

void NcclBackend::capture_graphs(const CallSpec& call) {
  const bool same = graph_call_ && graph_call_->collective == call.collective && graph_call_->dtype == call.dtype &&
                    graph_call_->op == call.op && graph_call_->root == call.root && graph_call_->count == call.count &&
                    graph_call_->placement == call.placement && graph_call_->form == call.form;
  if (same) return;
  graph_call_.reset();
  // The graph's calls move through the windows as plain launches do; its replays repeat them.
  const BufferWindows resume = windows_;
  // One graph per lane; with -g the lanes are captured together so NCCL's group spans them.
  for (Lane& lane : lanes_) {
    FB_CUDA_CHECK(cudaSetDevice(lane.device));
    FB_CUDA_CHECK(cudaStreamBeginCapture(lane.stream.get(), cudaStreamCaptureModeRelaxed));
  }
  std::exception_ptr failure;
  try {
    for (int i = 0; i < settings_.graph_iterations; ++i) enqueue_all(call);
  } catch (...) {
    failure = std::current_exception();
  }
  for (Lane& lane : lanes_) {
    cudaGraph_t raw = nullptr;
    FB_CUDA_CHECK(cudaSetDevice(lane.device));
    const cudaError_t ended = cudaStreamEndCapture(lane.stream.get(), &raw);
    cuda::Graph graph(raw);
    if (failure) continue;
    FB_CUDA_CHECK(ended);
    cudaGraphExec_t exec = nullptr;
    FB_CUDA_CHECK(cudaGraphInstantiate(&exec, graph.get(), 0));
    lane.graph.reset(exec);
  }
  windows_ = resume;
  if (failure) std::rethrow_exception(failure);
  graph_call_ = call;
}

double NcclBackend::enqueue_operations(const CallSpec& call, int operations) {
  const bool graphs = settings_.graph_iterations > 0;
  const int per_launch = graphs ? settings_.graph_iterations : 1;
  const int launches = (operations + per_launch - 1) / per_launch;
  for (int i = 0; i < launches; ++i) {
    if (graphs)
      for (Lane& lane : lanes_) FB_CUDA_CHECK(cudaGraphLaunch(lane.graph.get(), lane.stream.get()));
    else
      enqueue_all(call);
  }
  return static_cast<double>(launches) * per_launch;
}

void NcclBackend::mark(std::size_t index) {
  for (Lane& lane : lanes_) {
    while (lane.marks.size() <= index) lane.marks.push_back(cuda::make_event());
    FB_CUDA_CHECK(cudaEventRecord(lane.marks[index].get(), lane.stream.get()));
  }
}

double NcclBackend::between_marks(std::size_t first, std::size_t last) const {
  // The process's time is its slowest GPU's, as the rank reduction takes the slowest rank.
  double seconds = 0;
  for (const Lane& lane : lanes_) {
    float milliseconds = 0;
    FB_CUDA_CHECK(cudaEventElapsedTime(&milliseconds, lane.marks[first].get(), lane.marks[last].get()));
    seconds = std::max(seconds, milliseconds * 1e-3);
  }
  return seconds;
}

double NcclBackend::run(const CallSpec& call, int operations) {
  if (settings_.graph_iterations > 0) capture_graphs(call);
  if (settings_.timer == Timer::kHost) {  // nccl-tests' window: the calls and the sync, on the host clock
    const auto start = std::chrono::steady_clock::now();
    const double executed = enqueue_operations(call, operations);
    wait("the timed operations");
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() * operations / executed;
  }
  mark(0);
  const double executed = enqueue_operations(call, operations);
  mark(1);
  wait("the timed operations");
  return between_marks(0) * operations / executed;
}

void NcclBackend::begin_queued(double gap_seconds) {
  timeline_held_seconds_ += gap_seconds;
  for (Lane& lane : lanes_) {
    FB_CUDA_CHECK(cudaSetDevice(lane.device));
    hold_stream_device(gap_seconds, lane.stream.get());
  }
  mark(2 * timeline_calls_);
}

void NcclBackend::enqueue_after_gap(double gap_seconds, const CallSpec& call) {
  begin_queued(gap_seconds);
  enqueue_all(call);
  mark(2 * timeline_calls_++ + 1);
}

void NcclBackend::enqueue_after_gap(double gap_seconds, const TransferGroup& group) {
  begin_queued(gap_seconds);
  enqueue_transfers(group);
  mark(2 * timeline_calls_++ + 1);
}

Lane& NcclBackend::transfers_lane() {
  if (lanes_.size() != 1) throw Error("a group of Send/Recv is replayed with one GPU per process");
  Lane& lane = lanes_.front();
  FB_CUDA_CHECK(cudaSetDevice(lane.device));
  return lane;
}

void NcclBackend::enqueue_transfers(const TransferGroup& group) {
  Lane& lane = transfers_lane();
  const std::size_t element = size_of(group.dtype);
  FB_NCCL_CHECK(ncclGroupStart());
  for (const Transfer& t : group.transfers) {
    if (t.send)
      FB_NCCL_CHECK(ncclSend(lane.send.data() + t.offset * element, t.count, nccl_type(group.dtype), t.peer,
                             lane.comm.get(), lane.stream.get()));
    else
      FB_NCCL_CHECK(ncclRecv(lane.recv.data() + t.offset * element, t.count, nccl_type(group.dtype), t.peer,
                             lane.comm.get(), lane.stream.get()));
  }
  FB_NCCL_CHECK(ncclGroupEnd());
}

void NcclBackend::prepare_transfers(const TransferGroup& group) {
  Lane& lane = transfers_lane();
  const std::size_t element = size_of(group.dtype);
  for (const Transfer& t : group.transfers) {
    if (t.send)
      fill_input_device(sent_by(call_rank(lane), group.dtype), lane.send.data() + t.offset * element, t.offset, t.count,
                        lane.stream.get());
    else
      FB_CUDA_CHECK(
          cudaMemsetAsync(lane.recv.data() + t.offset * element, kPoisonByte, t.count * element, lane.stream.get()));
  }
  wait("filling the Send/Recv group's data");
}

double NcclBackend::run_transfers(const TransferGroup& group) {
  mark(0);
  enqueue_transfers(group);
  mark(1);
  wait("the Send/Recv group");
  return between_marks(0);
}

std::uint64_t NcclBackend::count_wrong_transfers(const TransferGroup& group) {
  Lane& lane = transfers_lane();
  const std::size_t element = size_of(group.dtype);
  auto* counter = reinterpret_cast<unsigned long long*>(lane.wrong_counter.data());
  FB_CUDA_CHECK(cudaMemsetAsync(counter, 0, sizeof *counter, lane.stream.get()));
  for (const Transfer& t : group.transfers)
    if (!t.send)
      count_wrong_device(copied_from(t.peer, t.peer_offset, group.dtype), lane.recv.data() + t.offset * element,
                         t.count, counter, lane.stream.get());
  unsigned long long wrong = 0;
  FB_CUDA_CHECK(cudaMemcpyAsync(&wrong, counter, sizeof wrong, cudaMemcpyDeviceToHost, lane.stream.get()));
  wait("the Send/Recv group's data check");
  return wrong;
}

StreamTimelineBackend::Timeline NcclBackend::finish_timeline() {
  Timeline timeline;
  if (timeline_calls_ == 0) return timeline;
  const std::size_t calls = std::exchange(timeline_calls_, 0);
  wait("the queued operations", std::exchange(timeline_held_seconds_, 0.0));
  for (std::size_t i = 0; i < calls; ++i) timeline.call_seconds.push_back(between_marks(2 * i));
  timeline.span_seconds = between_marks(0, 2 * calls - 1);
  return timeline;
}

std::vector<double> NcclBackend::run_samples(const CallSpec& call, int batch, int samples) {
  if (settings_.timer == Timer::kHost) return Backend::run_samples(call, batch, samples);
  if (settings_.graph_iterations > 0) capture_graphs(call);
  // One event between samples and one wait at the end: the stream never idles, so only the first
  // sample waits for its first launch, as in nccl-tests' back-to-back iterations.
  mark(0);
  std::vector<double> executed(static_cast<std::size_t>(samples));
  for (std::size_t s = 0; s < executed.size(); ++s) {
    executed[s] = enqueue_operations(call, batch);
    mark(s + 1);
  }
  wait("the timed operations");
  std::vector<double> seconds(executed.size());
  for (std::size_t s = 0; s < seconds.size(); ++s) seconds[s] = between_marks(s) * batch / executed[s];
  return seconds;
}

std::uint64_t NcclBackend::count_wrong(const CallSpec& call) {
  std::vector<unsigned long long> wrong(lanes_.size(), 0);
  for (std::size_t i = 0; i < lanes_.size(); ++i) {
    Lane& lane = lanes_[i];
    FB_CUDA_CHECK(cudaSetDevice(lane.device));
    const View out = output_view(lane, call);
    const DataLayout layout{
        call.collective->source, call.dtype, call.op, call_rank(lane), ranks(), call.root, call.count};
    auto* counter = reinterpret_cast<unsigned long long*>(lane.wrong_counter.data());
    FB_CUDA_CHECK(cudaMemsetAsync(counter, 0, sizeof *counter, lane.stream.get()));
    count_wrong_device(layout, out.data, out.elements, counter, lane.stream.get());
    FB_CUDA_CHECK(cudaMemcpyAsync(&wrong[i], counter, sizeof wrong[i], cudaMemcpyDeviceToHost, lane.stream.get()));
  }
  wait("the data check");
  std::uint64_t total = 0;
  for (unsigned long long w : wrong) total += w;
  return total;
}

bool NcclBackend::corrupt_output(const CallSpec& call) {
  for (Lane& lane : lanes_) {
    const View out = output_view(lane, call);
    if (out.elements == 0) continue;
    FB_CUDA_CHECK(cudaSetDevice(lane.device));
    corrupt_first_device(call.dtype, out.data, lane.stream.get());
    wait("the fault injection");
    return true;
  }
  return false;
}

void NcclBackend::plant_error() {
  // A real error from the CUDA runtime, raised where a failing kernel's would be: in the wait.
  Lane& lane = lanes_.front();
  try {
    FB_CUDA_CHECK(cudaMemcpyAsync(nullptr, lane.send.data(), 1, cudaMemcpyDeviceToDevice, lane.stream.get()));
  } catch (...) {
    abort_all();  // as wait() does for an error it finds
    throw;
  }
}

KeyValues NcclBackend::settings() const {
  KeyValues settings = method_settings();
  if (settings_.gpus_per_process > 1) settings.set("gpus_per_process", std::to_string(settings_.gpus_per_process));
  if (settings_.graph_iterations > 0) settings.set("graph_iterations", std::to_string(settings_.graph_iterations));
  if (!algorithm_.empty()) settings.set("algo", algorithm_);
  if (!protocol_.empty()) settings.set("proto", protocol_);
  return settings;
}

nlohmann::json NcclBackend::rank_context() const {
  int runtime = 0, driver = 0, nccl_library = 0;
  cudaRuntimeGetVersion(&runtime);
  cudaDriverGetVersion(&driver);
  ncclGetVersion(&nccl_library);
  nlohmann::json gpus = nlohmann::json::array();
  for (const Lane& lane : lanes_) {
    cudaDeviceProp properties{};
    FB_CUDA_CHECK(cudaGetDeviceProperties(&properties, lane.device));
    char bus_id[32] = {};
    FB_CUDA_CHECK(cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, lane.device));
    FB_CUDA_CHECK(cudaSetDevice(lane.device));
    gpus.push_back({{"nccl_rank", lane.rank},
                    {"gpu_index", lane.device},
                    {"gpu_name", properties.name},
                    {"gpu_uuid", uuid_text(properties.uuid)},
                    {"gpu_pci_bus_id", bus_id},
                    {"gpu_memory_bytes", properties.totalGlobalMem},
                    {"compute_capability", fmt::format("{}.{}", properties.major, properties.minor)},
                    {"device_memory_used_bytes", device_memory_used()},
                    {"device_memory_used_at_start_bytes", lane.used_at_start_bytes},
                    {"buffer_bytes", lane.send.size() + lane.recv.size()}});
  }
  return {{"cuda_runtime_version", runtime},
          {"cuda_driver_version", driver},
          {"nccl_library_version", nccl_library},
          {"nccl_header_version", NCCL_VERSION_CODE},
          {"gpus", gpus}};
}

}  // namespace fabricbench::collectives
