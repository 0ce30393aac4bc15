// SPDX-License-Identifier: Apache-2.0
// The GPU memory kinds of the verbs benchmarks on a real GPU, without an RDMA device: allocation,
// the dma-buf export ibv_reg_dmabuf_mr would receive, and the staged path's copies each way.
// Skips where there is no GPU (label gpu: scripts/gpu-test.sh runs it on a GPU node).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "common/error.hpp"
#include "gpu/cuda_resources.hpp"
#include "gpu/dmabuf.hpp"
#include "verbs/message_memory.hpp"

namespace fabricbench::verbs {
namespace {

constexpr std::size_t kBytes = (1 << 20) + 100;  // not a whole number of pages: the export rounds up

bool has_gpu() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

std::vector<std::uint8_t> pattern(std::size_t bytes, int seed) {
  std::vector<std::uint8_t> v(bytes);
  for (std::size_t i = 0; i < bytes; ++i) v[i] = static_cast<std::uint8_t>((i * 131 + seed) & 0xff);
  return v;
}

TEST(GpuMemory, DirectKindsKeepDataInGpuMemory) {
  if (!has_gpu()) GTEST_SKIP() << "no CUDA GPU on this machine";
  for (MemoryKind kind : {MemoryKind::kCuda, MemoryKind::kCudaDmabuf}) {
    SCOPED_TRACE(memory_kind_name(kind));
    auto memory = make_message_memory(kind, 0, 0, kBytes);
    EXPECT_EQ(memory->kind(), kind);
    EXPECT_FALSE(memory->host_visible());
    cudaPointerAttributes attributes{};
    ASSERT_EQ(cudaPointerGetAttributes(&attributes, memory->wire()), cudaSuccess);
    EXPECT_EQ(attributes.type, cudaMemoryTypeDevice);  // what the NIC is handed is GPU memory
    const auto data = pattern(kBytes / 2, 7);
    memory->store(kBytes / 2, data.data(), data.size());
    std::vector<std::uint8_t> back(data.size());
    memory->load(kBytes / 2, back.data(), back.size());
    EXPECT_EQ(back, data);
    memory->clear(kBytes / 2, 10);
    memory->load(kBytes / 2, back.data(), back.size());
    EXPECT_EQ(back[9], 0);
    EXPECT_EQ(back[10], data[10]);
  }
}

TEST(GpuMemory, DmabufExportGivesAPageRoundedFileDescriptor) {
  if (!has_gpu()) GTEST_SKIP() << "no CUDA GPU on this machine";
  cuda::DeviceBuffer buffer(kBytes);
  cuda::DmabufRange range = cuda::DmabufRange::export_range(buffer.data(), kBytes);
  ASSERT_GE(range.fd(), 0);
  struct stat st {};
  ASSERT_EQ(::fstat(range.fd(), &st), 0);  // a live descriptor the kernel knows
  EXPECT_EQ(range.size(), (kBytes + 4095) / 4096 * 4096);
  EXPECT_NE(make_message_memory(MemoryKind::kCudaDmabuf, 0, 0, kBytes)->describe().find("dma-buf"), std::string::npos);
  EXPECT_NE(make_message_memory(MemoryKind::kCuda, 0, 0, kBytes)->describe().find("nvidia-peermem"), std::string::npos);
}

TEST(GpuMemory, StagedKindCopiesEachWayThroughPinnedHostMemory) {
  if (!has_gpu()) GTEST_SKIP() << "no CUDA GPU on this machine";
  auto memory = make_message_memory(MemoryKind::kStaged, 0, 0, kBytes);
  ASSERT_TRUE(memory->host_visible());
  cudaPointerAttributes attributes{};
  ASSERT_EQ(cudaPointerGetAttributes(&attributes, memory->wire()), cudaSuccess);
  EXPECT_EQ(attributes.type, cudaMemoryTypeHost);  // the NIC sees pinned host memory

  // Outbound: what the user put in GPU memory reaches the bounce buffer only through stage_out.
  const auto outbound = pattern(4096, 3);
  memory->store(0, outbound.data(), outbound.size());
  EXPECT_EQ(memory->wire()[5], 0);
  memory->stage_out(0, outbound.size());
  EXPECT_EQ(std::vector<std::uint8_t>(memory->wire(), memory->wire() + outbound.size()), outbound);

  // Inbound: bytes the NIC wrote into the bounce buffer reach GPU memory only through stage_in.
  const auto inbound = pattern(4096, 11);
  std::copy(inbound.begin(), inbound.end(), memory->wire() + 8192);
  std::vector<std::uint8_t> back(inbound.size());
  memory->load(8192, back.data(), back.size());
  EXPECT_EQ(back, std::vector<std::uint8_t>(inbound.size(), 0));
  memory->stage_in(8192, inbound.size());
  memory->load(8192, back.data(), back.size());
  EXPECT_EQ(back, inbound);
}

TEST(GpuMemory, MissingGpuIsAUsageErrorNamingTheCount) {
  if (!has_gpu()) GTEST_SKIP() << "no CUDA GPU on this machine";
  int count = 0;
  ASSERT_EQ(cudaGetDeviceCount(&count), cudaSuccess);
  try {
    make_message_memory(MemoryKind::kCuda, count, 0, kBytes);
    FAIL() << "GPU " << count << " should not exist";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find(std::to_string(count) + " GPU(s)"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace fabricbench::verbs
