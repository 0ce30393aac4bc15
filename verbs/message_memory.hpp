// SPDX-License-Identifier: Apache-2.0
// Where a pair's messages live: host memory, GPU memory the NIC reaches directly (GPUDirect RDMA
// through nvidia-peermem or dma-buf), or GPU memory staged through a pinned host bounce buffer
// for every message (NCCL's path when GDR is off). One interface, so the engine measures all four
// the same way and "GDR against staged" is one flag apart.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "verbs/resources.hpp"

namespace fabricbench::verbs {

enum class MemoryKind { kHost, kCuda, kCudaDmabuf, kStaged };

/// "host", "cuda", "cuda-dmabuf", "staged" (the --mem spelling) and back; throws UsageError.
MemoryKind memory_kind(const std::string& name);
const char* memory_kind_name(MemoryKind kind);

class MessageMemory {
 public:
  virtual ~MessageMemory() = default;

  virtual MemoryKind kind() const = 0;

  /// Base of what the NIC reads and writes: the address in SGEs and the one the peer targets.
  virtual std::uint8_t* wire() const = 0;
  /// Registers the whole wire buffer with `pd`; throws VerbsError with the likely cause.
  virtual MemoryRegion register_with(ibv_pd* pd, int access) const = 0;
  /// True when the CPU may read wire() directly (write latency can poll the last byte there).
  virtual bool host_visible() const = 0;

  /// Copies between host memory and the user's buffer (the GPU buffer for GPU kinds).
  virtual void store(std::size_t offset, const std::uint8_t* from, std::size_t bytes) = 0;
  virtual void load(std::size_t offset, std::uint8_t* to, std::size_t bytes) const = 0;
  virtual void clear(std::size_t offset, std::size_t bytes) = 0;

  /// Staged kind only: GPU buffer -> bounce buffer before the NIC reads a message, and bounce
  /// buffer -> GPU buffer after one arrived. No-ops where the NIC reaches the user's buffer.
  virtual void stage_out(std::size_t /*offset*/, std::size_t /*bytes*/) {}
  virtual void stage_in(std::size_t /*offset*/, std::size_t /*bytes*/) {}

  /// "host", "GPU 0 (nvidia-peermem)"...: for the run's context and messages.
  virtual std::string describe() const = 0;
};

/// Allocates `bytes` of `kind`. GPU kinds use GPU `gpu` (-1: local rank modulo the GPU count)
/// and throw UsageError when this node has no such GPU or the build has no CUDA.
std::unique_ptr<MessageMemory> make_message_memory(MemoryKind kind, int gpu, int local_rank, std::size_t bytes);

/// Page-aligned host memory, freed on destruction.
class AlignedBuffer {
 public:
  explicit AlignedBuffer(std::size_t bytes);
  std::uint8_t* data() const { return memory_.get(); }

 private:
  struct Free {
    void operator()(std::uint8_t* p) const noexcept;
  };
  std::unique_ptr<std::uint8_t, Free> memory_;
};

namespace detail {
/// The GPU kinds: defined by gpu_message_memory.cpp with CUDA, or by a file that says the build
/// left them out.
std::unique_ptr<MessageMemory> make_gpu_message_memory(MemoryKind kind, int gpu, int local_rank, std::size_t bytes);
}  // namespace detail

}  // namespace fabricbench::verbs
