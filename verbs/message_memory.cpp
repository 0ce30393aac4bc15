// SPDX-License-Identifier: Apache-2.0
#include "verbs/message_memory.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

namespace fabricbench::verbs {
namespace {

class HostMemory final : public MessageMemory {
 public:
  explicit HostMemory(std::size_t bytes) : buffer_(bytes), bytes_(bytes) {}
  MemoryKind kind() const override { return MemoryKind::kHost; }
  std::uint8_t* wire() const override { return buffer_.data(); }
  MemoryRegion register_with(ibv_pd* pd, int access) const override {
    MemoryRegion mr(ibv_reg_mr(pd, buffer_.data(), bytes_, access));
    if (!mr) throw_errno(fmt::format("ibv_reg_mr of {} B of host memory", bytes_));
    return mr;
  }
  bool host_visible() const override { return true; }
  void store(std::size_t offset, const std::uint8_t* from, std::size_t bytes) override {
    std::memcpy(buffer_.data() + offset, from, bytes);
  }
  void load(std::size_t offset, std::uint8_t* to, std::size_t bytes) const override {
    std::memcpy(to, buffer_.data() + offset, bytes);
  }
  void clear(std::size_t offset, std::size_t bytes) override { std::memset(buffer_.data() + offset, 0, bytes); }
  std::string describe() const override { return "host"; }

 private:
  AlignedBuffer buffer_;
  std::size_t bytes_;
};

}  // namespace

MemoryKind memory_kind(const std::string& name) {
  if (name == "host") return MemoryKind::kHost;
  if (name == "cuda") return MemoryKind::kCuda;
  if (name == "cuda-dmabuf") return MemoryKind::kCudaDmabuf;
  if (name == "staged") return MemoryKind::kStaged;
  throw UsageError(fmt::format("--mem: unknown memory '{}'; valid: host, cuda, cuda-dmabuf, staged", name));
}

const char* memory_kind_name(MemoryKind kind) {
  switch (kind) {
    case MemoryKind::kHost: return "host";
    case MemoryKind::kCuda: return "cuda";
    case MemoryKind::kCudaDmabuf: return "cuda-dmabuf";
    case MemoryKind::kStaged: return "staged";
  }
  return "?";
}

std::unique_ptr<MessageMemory> make_message_memory(MemoryKind kind, int gpu, int local_rank, std::size_t bytes) {
  if (kind == MemoryKind::kHost) return std::make_unique<HostMemory>(bytes);
  return detail::make_gpu_message_memory(kind, gpu, local_rank, bytes);
}

AlignedBuffer::AlignedBuffer(std::size_t bytes) {
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const std::size_t rounded = std::max(page, (bytes + page - 1) / page * page);
  auto* memory = static_cast<std::uint8_t*>(std::aligned_alloc(page, rounded));
  if (!memory) throw std::bad_alloc();
  std::memset(memory, 0, rounded);
  memory_.reset(memory);
}

void AlignedBuffer::Free::operator()(std::uint8_t* p) const noexcept { std::free(p); }

}  // namespace fabricbench::verbs
