// SPDX-License-Identifier: Apache-2.0
// Collectives through MPI on page-aligned host memory: runs on any machine, the harness's
// reference backend.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <memory>
#include <vector>

#include "collectives/backend.hpp"
#include "collectives/backend_factory.hpp"
#include "collectives/host_data.hpp"
#include "collectives/mpi_call.hpp"

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

class MpiBackend final : public Backend {
 public:
  /// Over `group.plane`'s communicator, which must be MPI's (the data plane is MPI itself); with no
  /// plane, a backend that only answers what it can do for `group.size` ranks.
  MpiBackend(const BackendGroup& group, CacheMode cache = CacheMode::kWarm);

  std::string_view name() const override { return "mpi"; }
  int ranks() const override { return group_.empty() ? ranks_ : static_cast<int>(group_.size()); }
  std::string dtype_unsupported(DataType dtype) const override;
  std::string op_unsupported(ReduceOp op) const override;
  std::uint64_t max_count() const override;
  bool has_form(const Collective& c, CallForm form) const override;
  std::string call_name(const Collective& c, CallForm form) const override;
  CacheMode cache_mode() const override { return cache_; }
  KeyValues settings() const override;
  void set_group(std::vector<int> members) override;
  void reserve(std::uint64_t send_bytes, std::uint64_t recv_bytes) override;
  void prepare(const CallSpec& call) override;
  double run(const CallSpec& call, int operations) override;
  std::uint64_t count_wrong(const CallSpec& call) override;
  bool corrupt_output(const CallSpec& call) override;

 private:
  struct View {
    std::byte* data;
    std::uint64_t elements;
  };
  Shape shape_of(const CallSpec& call) const;
  View input_view(const CallSpec& call) const;
  View output_view(const CallSpec& call) const;
  DataLayout layout_of(const CallSpec& call) const;
  MpiCall make_call(const CallSpec& call) const;

  int group_rank() const { return group_.empty() ? rank_ : group_rank_; }

  MPI_Comm comm_;
  int rank_;
  int ranks_;
  CacheMode cache_;
  std::vector<int> group_;  // comm ranks of the group the calls run on; empty: the whole comm
  int group_rank_ = 0;
  HostBuffer send_;
  HostBuffer recv_;
  BufferWindows windows_;
  std::uint64_t window_offset_ = 0;  // bytes: the window of the views made now
};

}  // namespace fabricbench::collectives
