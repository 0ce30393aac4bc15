// SPDX-License-Identifier: Apache-2.0
// Collectives through Gloo on page-aligned host memory: the CPU backend PyTorch jobs use for their
// control traffic, on Gloo's own algorithms over TCP, under any launcher (Gloo builds only).
#pragma once

#include <gloo/context.h>

#include <map>
#include <memory>
#include <vector>

#include "collectives/backend_factory.hpp"
#include "collectives/gloo/gloo_call.hpp"
#include "collectives/host_backend.hpp"

namespace fabricbench::collectives {

class GlooBackend final : public HostBackend {
 public:
  /// Over the ranks of `group.plane` (connect() joins them); with no plane, a backend that only
  /// answers what it can do for `group.size` ranks.
  GlooBackend(const BackendGroup& group, CacheMode cache);

  std::string_view name() const override { return "gloo"; }
  std::string dtype_unsupported(DataType dtype) const override;
  std::string op_unsupported(ReduceOp op) const override;
  std::uint64_t max_count() const override;
  bool has_form(const Collective& c, CallForm form) const override;
  std::string call_name(const Collective& c, CallForm form) const override;
  bool in_place_defined(const Collective& c) const override { return c.gloo_in_place_defined; }
  void set_group(std::vector<int> members) override;
  void connect() override;
  void reserve(std::uint64_t send_bytes, std::uint64_t recv_bytes) override;
  double run(const CallSpec& call, int operations) override;
  nlohmann::json rank_context() const override;

 private:
  GlooCall make_call(const CallSpec& call) const;

  ControlPlane* plane_;
  std::shared_ptr<gloo::Context> world_;                              // every rank
  std::shared_ptr<gloo::Context> active_;                             // the calls' now: the world's or a pair's
  std::map<std::vector<int>, std::shared_ptr<gloo::Context>> pairs_;  // a pair met once keeps its context
  HostBuffer scratch_;
};

}  // namespace fabricbench::collectives
