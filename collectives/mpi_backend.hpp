// SPDX-License-Identifier: Apache-2.0
// Collectives through MPI on page-aligned host memory: runs on any machine, the harness's
// reference backend.
#pragma once

#include <mpi.h>

#include "collectives/backend_factory.hpp"
#include "collectives/host_backend.hpp"
#include "collectives/mpi_call.hpp"

namespace fabricbench::collectives {

class MpiBackend final : public HostBackend, public PointToPointBackend {
 public:
  /// Over `group.plane`'s communicator, which must be MPI's (the data plane is MPI itself); with no
  /// plane, a backend that only answers what it can do for `group.size` ranks.
  MpiBackend(const BackendGroup& group, CacheMode cache = CacheMode::kWarm);

  std::string_view name() const override { return "mpi"; }
  std::string dtype_unsupported(DataType dtype) const override;
  std::string op_unsupported(ReduceOp op) const override;
  std::uint64_t max_count() const override;
  bool has_form(const Collective& c, CallForm form) const override;
  std::string call_name(const Collective& c, CallForm form) const override;
  double run(const CallSpec& call, int operations) override;
  void prepare_transfers(const TransferGroup& group) override { fill_transfers(group); }
  /// Nonblocking receives, then sends, completed together: as NCCL runs a group.
  double run_transfers(const TransferGroup& group) override;
  std::uint64_t count_wrong_transfers(const TransferGroup& group) override { return count_wrong_in_transfers(group); }
  std::string transfers_call_name() const override { return "MPI_Isend+MPI_Irecv"; }

 private:
  MpiCall make_call(const CallSpec& call) const;

  MPI_Comm comm_;
};

}  // namespace fabricbench::collectives
