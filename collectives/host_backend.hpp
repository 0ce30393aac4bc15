// SPDX-License-Identifier: Apache-2.0
// What every backend on host memory shares (MPI, Gloo): page-aligned buffers, their windows, the
// views a call reads and writes, the data check. A library adds only its calls.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "collectives/backend.hpp"
#include "collectives/host_data.hpp"

namespace fabricbench::collectives {

/// Page-aligned host memory, freed on destruction.
class HostBuffer {
 public:
  HostBuffer() = default;
  explicit HostBuffer(std::size_t bytes);
  std::byte* data() const { return memory_.get(); }
  std::size_t size() const { return bytes_; }

 private:
  struct Free {
    void operator()(std::byte* p) const noexcept;
  };
  std::unique_ptr<std::byte, Free> memory_;
  std::size_t bytes_ = 0;
};

class HostBackend : public Backend {
 public:
  /// `rank` of `ranks`; `library` places the outputs its calls write (collective.hpp's Span rules).
  HostBackend(int rank, int ranks, CacheMode cache, Library library);

  int ranks() const override { return group_.empty() ? ranks_ : static_cast<int>(group_.size()); }
  CacheMode cache_mode() const override { return cache_; }
  KeyValues settings() const override;
  void set_group(std::vector<int> members) override;
  void reserve(std::uint64_t send_bytes, std::uint64_t recv_bytes) override;
  void prepare(const CallSpec& call) override;
  std::uint64_t count_wrong(const CallSpec& call) override;
  bool corrupt_output(const CallSpec& call) override;

 protected:
  struct View {
    std::byte* data;
    std::uint64_t elements;
  };
  Shape shape_of(const CallSpec& call) const { return {group_rank(), ranks(), call.root, call.count}; }
  /// The views of the window made now (time_calls moves it).
  View input_view(const CallSpec& call) const;
  View output_view(const CallSpec& call) const;
  std::byte* receive_buffer() const { return recv_.data() + window_offset_; }
  std::byte* send_buffer() const { return send_.data(); }
  /// A group of Send/Recv's data (PointToPointBackend): its Send spans filled, its Recv spans
  /// poisoned; then the Recv spans' wrong elements.
  void fill_transfers(const TransferGroup& group);
  std::uint64_t count_wrong_in_transfers(const TransferGroup& group) const;
  int rank() const { return rank_; }
  int group_rank() const { return group_.empty() ? rank_ : group_rank_; }
  /// Communicator ranks of the group the calls run on; empty: the whole communicator.
  const std::vector<int>& group() const { return group_; }

  /// Times `operations` calls, each in the next window as nccl-tests moves them: `make()` builds a
  /// window's call before the clock starts, `issue(call)` runs one. Seconds of the calls.
  template <class Make, class Issue>
  double time_calls(int operations, Make make, Issue issue) {
    const auto windows = static_cast<std::size_t>(std::min<std::uint64_t>(windows_.windows(), operations));
    std::vector<decltype(make())> calls;
    calls.reserve(windows);
    for (std::size_t i = 0; i < windows; ++i) {
      window_offset_ = windows_.next();
      calls.push_back(make());
    }
    // The window after the last call: the next run starts there, as nccl-tests' next iteration does.
    for (int i = static_cast<int>(windows); i < operations; ++i) windows_.next();
    window_offset_ = 0;
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < operations; ++i) issue(calls[static_cast<std::size_t>(i) % windows]);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }

 private:
  DataLayout layout_of(const CallSpec& call) const;

  int rank_;
  int ranks_;
  CacheMode cache_;
  Library library_;
  std::vector<int> group_;
  int group_rank_ = 0;
  HostBuffer send_;
  HostBuffer recv_;
  BufferWindows windows_;
  std::uint64_t window_offset_ = 0;  // bytes: the window of the views made now
};

}  // namespace fabricbench::collectives
