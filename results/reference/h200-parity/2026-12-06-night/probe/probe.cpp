// SPDX-License-Identifier: Apache-2.0
// Device probes for issue 23 (not shipped): host memory per NCCL call, and what a CUDA event
// between every call costs against nccl-tests' loop timed once.
#include <cuda_runtime.h>
#include <malloc.h>
#include <nccl.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#define CK(x)                                                                   \
  do {                                                                          \
    auto e_ = (x);                                                              \
    if (e_ != 0) {                                                              \
      std::fprintf(stderr, "%s failed: %d (line %d)\n", #x, (int)e_, __LINE__); \
      std::exit(1);                                                             \
    }                                                                           \
  } while (0)

static long status_kb(const char* key) {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind(key, 0) == 0) return std::atol(line.c_str() + std::strlen(key));
  return -1;
}
static void report(const char* what, long calls) {
  struct mallinfo2 m = mallinfo2();
  std::printf("%s calls %ld VmRSS_kb %ld VmHWM_kb %ld heap_in_use_kb %zu mmapped_kb %zu\n", what, calls,
              status_kb("VmRSS:"), status_kb("VmHWM:"), m.uordblks / 1024, m.hblkhd / 1024);
  std::fflush(stdout);
}

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "probe rss ALLOC(cuda|nccl) FORM(plain|group|events) CALLS | gap COLL(ar|sr) BYTES ITERS\n");
    return 2;
  }
  const std::string mode = argv[1];
  CK(cudaSetDevice(0));
  ncclComm_t comm;
  int dev = 0;
  CK(ncclCommInitAll(&comm, 1, &dev));
  cudaStream_t stream;
  CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  if (mode == "rss") {
    const std::string alloc = argv[2], form = argv[3];
    const long calls = std::atol(argv[4]);
    void *send = nullptr, *recv = nullptr;
    if (alloc == "nccl") {
      CK(ncclMemAlloc(&send, 1 << 20));
      CK(ncclMemAlloc(&recv, 1 << 20));
    } else {
      CK(cudaMalloc(&send, 1 << 20));
      CK(cudaMalloc(&recv, 1 << 20));
    }
    cudaEvent_t ev[2];
    CK(cudaEventCreate(&ev[0]));
    CK(cudaEventCreate(&ev[1]));
    CK(ncclAllReduce(send, recv, 2, ncclFloat, ncclSum, comm, stream));
    CK(cudaStreamSynchronize(stream));
    report("start", 0);
    for (long i = 1; i <= calls; ++i) {
      if (form == "events") CK(cudaEventRecord(ev[i & 1], stream));
      if (form == "group") CK(ncclGroupStart());
      CK(ncclAllReduce(send, recv, 2, ncclFloat, ncclSum, comm, stream));
      if (form == "group") CK(ncclGroupEnd());
      if (i % 1000 == 0) CK(cudaStreamSynchronize(stream));
      if (i % (calls / 4) == 0) report("at", i);
    }
  } else if (mode == "gap") {
    const std::string coll = argv[2];
    const size_t bytes = std::strtoull(argv[3], nullptr, 10);
    const int iters = std::atoi(argv[4]);
    void *send = nullptr, *recv = nullptr;
    CK(ncclMemAlloc(&send, bytes));
    CK(ncclMemAlloc(&recv, bytes));
    const size_t count = bytes / 4;
    auto call = [&] {
      if (coll == "ar") {
        CK(ncclAllReduce(send, recv, count, ncclFloat, ncclSum, comm, stream));
        return;
      }
      CK(ncclGroupStart());
      CK(ncclSend(send, count, ncclFloat, 0, comm, stream));
      CK(ncclRecv(recv, count, ncclFloat, 0, comm, stream));
      CK(ncclGroupEnd());
    };
    std::vector<cudaEvent_t> ev(iters + 1);
    for (auto& e : ev) CK(cudaEventCreate(&e));
    for (int w = 0; w < 5; ++w) call();
    CK(cudaStreamSynchronize(stream));
    for (int round = 0; round < 3; ++round) {
      // nccl-tests: host clock around the loop and one sync.
      auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < iters; ++i) call();
      CK(cudaStreamSynchronize(stream));
      const double host_us = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() * 1e6 / iters;
      // Two events around the whole loop.
      CK(cudaEventRecord(ev[0], stream));
      for (int i = 0; i < iters; ++i) call();
      CK(cudaEventRecord(ev[1], stream));
      CK(cudaStreamSynchronize(stream));
      float ms = 0;
      CK(cudaEventElapsedTime(&ms, ev[0], ev[1]));
      const double outer_us = ms * 1e3 / iters;
      // fabricbench: an event between every call, all queued, one sync.
      CK(cudaEventRecord(ev[0], stream));
      for (int i = 0; i < iters; ++i) {
        call();
        CK(cudaEventRecord(ev[i + 1], stream));
      }
      CK(cudaStreamSynchronize(stream));
      double each_us = 0;
      for (int i = 0; i < iters; ++i) {
        CK(cudaEventElapsedTime(&ms, ev[i], ev[i + 1]));
        each_us += ms * 1e3;
      }
      each_us /= iters;
      std::printf("gap %s bytes %zu iters %d round %d host_loop_us %.2f events_outer_us %.2f events_each_us %.2f\n",
                  coll.c_str(), bytes, iters, round, host_us, outer_us, each_us);
      std::fflush(stdout);
    }
  }
  std::_Exit(0);
}
