// SPDX-License-Identifier: Apache-2.0
// libfabricbench_nccl_profiler.so: a small NCCL profiler plugin (interface v5, NCCL 2.28) with two
// jobs.
// - Counting: per (function, count, type), the algorithm, protocol and channel count NCCL chose.
//   fabricbench sets NCCL_PROFILER_PLUGIN to this file and reads the counts back through
//   fabricbench_profiler_drain() in the same process: what NCCL actually did, per result row,
//   without parsing logs. Only collective events are asked for.
// - Recording (FABRICBENCH_TRACE_DIR set, in any NCCL application, PyTorch included): every
//   communicator and operation, with its kernel channels' GPU timestamps, into
//   trace.rank<R>.jsonl for fb_replay (trace_recorder.hpp, docs/replay.md).
//
// The structures below follow NCCL's documented plugin ABI (ext-profiler/README.md); only the
// members this plugin reads matter, but the layout must match exactly up to them.
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "collectives/nccl/profiler_records.hpp"
#include "collectives/nccl/trace_recorder.hpp"

namespace {

using ncclResult_t = int;  // ncclSuccess = 0
using ncclDebugLogger_t = void (*)(int level, unsigned long flags, const char* file, int line, const char* fmt, ...);
constexpr ncclResult_t kSuccess = 0;
constexpr int kProfileGroup = 1 << 0;      // ncclProfileGroup: the parent of a group's Send/Recv
constexpr int kProfileColl = 1 << 1;       // ncclProfileColl
constexpr int kProfileP2p = 1 << 2;        // ncclProfileP2p
constexpr int kProfileKernelCh = 1 << 6;   // ncclProfileKernelCh
constexpr int kKernelChStopState = 22;     // ncclProfilerKernelChStop
constexpr int kLogWarn = 2, kLogInfo = 3;  // NCCL_LOG_WARN, NCCL_LOG_INFO
constexpr unsigned long kLogInit = 1;      // NCCL_INIT

struct EventDescriptorV5 {
  std::uint64_t type;
  void* parentObj;
  int rank;
  union {
    struct {
      std::uint64_t seqNumber;
      const char* func;
      void const* sendBuff;
      void* recvBuff;
      std::size_t count;
      int root;
      const char* datatype;
      std::uint8_t nChannels;
      std::uint8_t nWarps;
      const char* algo;
      const char* proto;
      void* parentGroup;
    } coll;
    struct {
      const char* func;
      void* buff;
      const char* datatype;
      std::size_t count;
      int peer;
      std::uint8_t nChannels;
      void* parentGroup;
    } p2p;
    struct {
      std::uint8_t channelId;
      std::uint64_t pTimer;  // GPU globaltimer, ns
    } kernelCh;
    unsigned char largest_member[64];  // other event kinds; never read here
  };
};

union EventStateArgsV5 {
  struct {
    std::uint64_t pTimer;  // GPU globaltimer, ns
  } kernelCh;
  unsigned char largest_member[16];  // other event kinds; never read here
};

struct ProfilerV5 {
  const char* name;
  ncclResult_t (*init)(void** context, std::uint64_t commId, int* eActivationMask, const char* commName, int nNodes,
                       int nranks, int rank, ncclDebugLogger_t logfn);
  ncclResult_t (*startEvent)(void* context, void** eHandle, EventDescriptorV5* eDescr);
  ncclResult_t (*stopEvent)(void* eHandle);
  ncclResult_t (*recordEventState)(void* eHandle, int eState, EventStateArgsV5* eStateArgs);
  ncclResult_t (*finalize)(void* context);
};

// One (function, count, type, algorithm, protocol, channels) NCCL chose, and how often. The names
// are copied once, when a choice is first seen: a call then costs a lock and a few short string
// compares, never an allocation (a 1 KiB all_reduce is 5 us of host time, all of it timed).
struct Choice {
  std::string function, datatype, algorithm, protocol;
  std::uint64_t count = 0;
  int channels = 0;
  std::uint64_t calls = 0;

  bool is(const char* f, std::uint64_t n, const char* type, const char* algo, const char* proto, int ch) const {
    return count == n && channels == ch && function == f && datatype == type && algorithm == algo && protocol == proto;
  }
};

struct Table {
  std::mutex mutex;
  std::vector<Choice> choices;
  std::size_t last = 0;  // a sweep repeats one choice call after call: looked at first
  int communicators = 0;
};

// Never destroyed: NCCL's threads (its proxy, a CUDA host callback) may still send an event
// while the process exits, after static destructors have run.
Table& table() {
  static Table& t = *new Table;
  return t;
}

const char* text(const char* s) { return s ? s : ""; }

// Recording, when FABRICBENCH_TRACE_DIR asks for it: decided once, at the first communicator.
// Never destroyed, like the table (NCCL's threads may send events during exit).
struct Recording {
  std::once_flag decided;
  std::unique_ptr<fabricbench::nccl_trace::TraceRecorder> recorder;  // null: not recording
  ncclDebugLogger_t log = nullptr;

  // The trace is written when the last communicator is finalized and, for a job that never
  // finalizes its communicators, at exit (std::atexit; the library is linked -z nodelete, so
  // NCCL's dlclose does not end it early).
  void write() noexcept {
    if (!recorder) return;
    try {
      const std::string path = recorder->write();
      if (!path.empty() && log)
        log(kLogInfo, kLogInit, __FILE__, __LINE__,
            "fabricbench recorder: trace written to %s (%zu operation(s) recorded)", path.c_str(),
            recorder->finished_operations());
    } catch (const std::exception& e) {
      if (log) log(kLogWarn, ~0UL, __FILE__, __LINE__, "fabricbench recorder: trace not written: %s", e.what());
      std::fprintf(stderr, "fabricbench recorder: trace not written: %s\n", e.what());
    }
  }
};

Recording& recording() {
  static Recording& r = *new Recording;
  return r;
}

void decide_recording(ncclDebugLogger_t log) {
  Recording& r = recording();
  r.log = log;
  try {
    if (auto settings = fabricbench::nccl_trace::settings_from_environment()) {
      const std::string folder = settings->folder;
      r.recorder = std::make_unique<fabricbench::nccl_trace::TraceRecorder>(std::move(*settings));
      std::atexit([] { recording().write(); });
      if (log) log(kLogInfo, kLogInit, __FILE__, __LINE__, "fabricbench recorder: recording to %s", folder.c_str());
    }
  } catch (const std::exception& e) {  // a bad setting: the job runs on, unrecorded, and says why
    if (log) log(kLogWarn, ~0UL, __FILE__, __LINE__, "fabricbench recorder: not recording: %s", e.what());
    std::fprintf(stderr, "fabricbench recorder: not recording: %s\n", e.what());
  }
}

double host_now_ns() {
  return static_cast<double>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

ncclResult_t init(void** context, std::uint64_t comm_hash, int* activation_mask, const char*, int nodes, int ranks,
                  int rank, ncclDebugLogger_t log) {
  std::call_once(recording().decided, decide_recording, log);
  if (auto* recorder = recording().recorder.get()) {
    // Kernel channels carry the GPU timestamps; they make NCCL add a proxy operation per channel.
    // Groups number the Send/Recv issued together (the replay issues them together again).
    *activation_mask = kProfileGroup | kProfileColl | kProfileP2p | kProfileKernelCh;
    *context =
        const_cast<fabricbench::nccl_trace::Communicator*>(recorder->add_communicator(comm_hash, ranks, rank, nodes));
  } else {
    *activation_mask = kProfileColl;  // collectives only: the cheapest event that names algo and proto
    *context = &table();
  }
  std::lock_guard lock(table().mutex);
  ++table().communicators;
  return kSuccess;
}

void count_choice(const EventDescriptorV5& event) {
  const auto& c = event.coll;
  const char *function = text(c.func), *datatype = text(c.datatype), *algo = text(c.algo), *proto = text(c.proto);
  Table& t = table();
  std::lock_guard lock(t.mutex);
  if (t.last < t.choices.size() && t.choices[t.last].is(function, c.count, datatype, algo, proto, c.nChannels)) {
    ++t.choices[t.last].calls;
    return;
  }
  for (std::size_t i = 0; i < t.choices.size(); ++i)
    if (t.choices[i].is(function, c.count, datatype, algo, proto, c.nChannels)) {
      ++t.choices[i].calls;
      t.last = i;
      return;
    }
  t.choices.push_back({function, datatype, algo, proto, c.count, c.nChannels, 1});
  t.last = t.choices.size() - 1;
}

// The next group's number: groups of every communicator of the process share one count.
std::atomic<std::uint64_t>& next_group() {
  static std::atomic<std::uint64_t> number{0};
  return number;
}

// What recording makes of an event: a handle NCCL passes back to stop_event and record_event_state.
void* record_event(fabricbench::nccl_trace::TraceRecorder& recorder, void* context, const EventDescriptorV5& event) {
  using fabricbench::nccl_trace::OperationCall;
  const auto* comm = static_cast<const fabricbench::nccl_trace::Communicator*>(context);
  if (event.type == kProfileColl) {
    const auto& c = event.coll;
    return recorder.begin_operation(
        OperationCall{comm, text(c.func), c.count, text(c.datatype), c.root, -1, text(c.algo), text(c.proto),
                      c.nChannels, fabricbench::nccl_trace::group_number(c.parentGroup)},
        host_now_ns());
  }
  if (event.type == kProfileGroup) return fabricbench::nccl_trace::group_handle(next_group()++);
  if (event.type == kProfileP2p) {
    const auto& p = event.p2p;
    // v5: parentObj is the P2pApi event; the kernel plan's Group event is p2p.parentGroup.
    return recorder.begin_operation(OperationCall{comm, text(p.func), p.count, text(p.datatype), -1, p.peer, "", "",
                                                  p.nChannels, fabricbench::nccl_trace::group_number(p.parentGroup)},
                                    host_now_ns());
  }
  if (event.type == kProfileKernelCh && event.parentObj) {
    auto* parent = static_cast<fabricbench::nccl_trace::EventHandle*>(event.parentObj);
    if (parent->kind == fabricbench::nccl_trace::EventHandle::Kind::kOperation)
      return recorder.kernel_started(static_cast<fabricbench::nccl_trace::PendingOperation*>(parent),
                                     event.kernelCh.pTimer);
  }
  return nullptr;
}

ncclResult_t start_event(void* context, void** handle, EventDescriptorV5* event) {
  *handle = nullptr;  // counting needs no stop: the choice is known when the event starts
  if (event->type == kProfileColl) count_choice(*event);
  if (auto* recorder = recording().recorder.get()) *handle = record_event(*recorder, context, *event);
  return kSuccess;
}

ncclResult_t stop_event(void* handle) {
  auto* recorder = recording().recorder.get();
  if (!handle || !recorder || fabricbench::nccl_trace::group_number(handle) >= 0) return kSuccess;
  auto* event = static_cast<fabricbench::nccl_trace::EventHandle*>(handle);
  if (event->kind == fabricbench::nccl_trace::EventHandle::Kind::kOperation)
    recorder->operation_enqueued(static_cast<fabricbench::nccl_trace::PendingOperation*>(event));
  else
    recorder->kernel_closed(static_cast<fabricbench::nccl_trace::KernelChannelEvent*>(event));
  return kSuccess;
}

ncclResult_t record_event_state(void* handle, int state, EventStateArgsV5* args) {
  auto* recorder = recording().recorder.get();
  if (!handle || !recorder || state != kKernelChStopState || !args) return kSuccess;
  if (fabricbench::nccl_trace::group_number(handle) >= 0) return kSuccess;
  auto* event = static_cast<fabricbench::nccl_trace::EventHandle*>(handle);
  if (event->kind == fabricbench::nccl_trace::EventHandle::Kind::kKernelChannel)
    recorder->kernel_stopped(static_cast<fabricbench::nccl_trace::KernelChannelEvent*>(event), args->kernelCh.pTimer);
  return kSuccess;
}

ncclResult_t finalize(void*) {
  if (auto* recorder = recording().recorder.get()) {
    if (recorder->communicator_finalized() == 0) recording().write();
  }
  return kSuccess;
}

}  // namespace

extern "C" {

__attribute__((visibility("default")))
ProfilerV5 ncclProfiler_v5{"fabricbench", init, start_event, stop_event, record_event_state, finalize};

__attribute__((visibility("default"))) int fabricbench_profiler_drain(fabricbench::nccl_path::ProfilerRecord* out,
                                                                      int capacity, int* communicators) {
  std::lock_guard lock(table().mutex);
  if (communicators) *communicators = table().communicators;
  int n = 0;
  for (const Choice& choice : table().choices) {
    if (n == capacity) break;
    if (choice.calls == 0) continue;
    auto& record = out[n++];
    std::snprintf(record.function, sizeof record.function, "%s", choice.function.c_str());
    std::snprintf(record.datatype, sizeof record.datatype, "%s", choice.datatype.c_str());
    std::snprintf(record.algorithm, sizeof record.algorithm, "%s", choice.algorithm.c_str());
    std::snprintf(record.protocol, sizeof record.protocol, "%s", choice.protocol.c_str());
    record.count = choice.count;
    record.channels = choice.channels;
    record.calls = choice.calls;
  }
  // The choices stay (so do their names' copies); only the counts start again.
  for (Choice& choice : table().choices) choice.calls = 0;
  return n;
}
}
