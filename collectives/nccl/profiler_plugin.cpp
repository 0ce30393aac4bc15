// SPDX-License-Identifier: Apache-2.0
// libfabricbench_nccl_profiler.so: a minimal NCCL profiler plugin (interface v5, NCCL 2.28) that
// asks only for collective events and counts, per (function, count, type), the algorithm,
// protocol and channel count NCCL chose. fabricbench sets NCCL_PROFILER_PLUGIN to this file and
// reads the counts back through fabricbench_profiler_drain() in the same process: what NCCL
// actually did, per result row, without parsing logs.
//
// The structures below follow NCCL's documented plugin ABI (ext-profiler/README.md); only the
// members this plugin reads matter, but the layout must match exactly up to them.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "collectives/nccl/profiler_records.hpp"

namespace {

using ncclResult_t = int;  // ncclSuccess = 0
using ncclDebugLogger_t = void (*)(int level, unsigned long flags, const char* file, int line, const char* fmt, ...);
constexpr ncclResult_t kSuccess = 0;
constexpr int kProfileColl = 1 << 1;  // ncclProfileColl

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
    unsigned char largest_member[64];  // other event kinds; never read here
  };
};

struct ProfilerV5 {
  const char* name;
  ncclResult_t (*init)(void** context, std::uint64_t commId, int* eActivationMask, const char* commName, int nNodes,
                       int nranks, int rank, ncclDebugLogger_t logfn);
  ncclResult_t (*startEvent)(void* context, void** eHandle, EventDescriptorV5* eDescr);
  ncclResult_t (*stopEvent)(void* eHandle);
  ncclResult_t (*recordEventState)(void* eHandle, int eState, void* eStateArgs);
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

Table& table() {
  static Table t;
  return t;
}

const char* text(const char* s) { return s ? s : ""; }

ncclResult_t init(void** context, std::uint64_t, int* activation_mask, const char*, int, int, int, ncclDebugLogger_t) {
  *activation_mask = kProfileColl;  // collectives only: the cheapest event that names algo and proto
  *context = &table();
  std::lock_guard lock(table().mutex);
  ++table().communicators;
  return kSuccess;
}

ncclResult_t start_event(void*, void** handle, EventDescriptorV5* event) {
  *handle = nullptr;  // nothing to stop: the choice is known when the event starts
  if (event->type != kProfileColl) return kSuccess;
  const auto& c = event->coll;
  const char *function = text(c.func), *datatype = text(c.datatype), *algo = text(c.algo), *proto = text(c.proto);
  Table& t = table();
  std::lock_guard lock(t.mutex);
  if (t.last < t.choices.size() && t.choices[t.last].is(function, c.count, datatype, algo, proto, c.nChannels)) {
    ++t.choices[t.last].calls;
    return kSuccess;
  }
  for (std::size_t i = 0; i < t.choices.size(); ++i)
    if (t.choices[i].is(function, c.count, datatype, algo, proto, c.nChannels)) {
      ++t.choices[i].calls;
      t.last = i;
      return kSuccess;
    }
  t.choices.push_back({function, datatype, algo, proto, c.count, c.nChannels, 1});
  t.last = t.choices.size() - 1;
  return kSuccess;
}

ncclResult_t stop_event(void*) { return kSuccess; }
ncclResult_t record_event_state(void*, int, void*) { return kSuccess; }
ncclResult_t finalize(void*) { return kSuccess; }

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
