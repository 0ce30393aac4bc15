// SPDX-License-Identifier: Apache-2.0
#include "collectives/gloo/gloo_backend.hpp"

#include <fmt/format.h>
#include <gloo/config.h>

#include <climits>

#include "collectives/gloo/plane_context.hpp"
#include "common/error.hpp"

namespace fabricbench::collectives {

GlooBackend::GlooBackend(const BackendGroup& group, CacheMode cache)
    : HostBackend(group.rank, group.size, cache, Library::kGloo), plane_(group.plane) {}

std::string GlooBackend::dtype_unsupported(DataType dtype) const {
  switch (dtype) {
    case DataType::kFloat16:
    case DataType::kBfloat16: return "the harness does not run Gloo's 16-bit floating types";
    case DataType::kFloat8e4m3:
    case DataType::kFloat8e5m2: return "Gloo has no 8-bit floating type";
    default: return {};
  }
}

std::string GlooBackend::op_unsupported(ReduceOp op) const {
  return op == ReduceOp::kAvg ? "Gloo has no average reduction" : std::string{};
}

// Gloo's reduction loops and reduce_scatter's counts are ints.
std::uint64_t GlooBackend::max_count() const { return static_cast<std::uint64_t>(INT_MAX); }

bool GlooBackend::has_form(const Collective& c, CallForm form) const {
  return form == CallForm::kLibrary && c.gloo != nullptr;
}

std::string GlooBackend::call_name(const Collective& c, CallForm) const { return std::string(c.gloo_name); }

// A pair of a --pairs round gets a two-rank context of its own; larger groups (the load patterns)
// would need the point-to-point form Gloo's backend does not have.
void GlooBackend::set_group(std::vector<int> members) {
  if (members.size() > 2)
    throw UsageError("the gloo backend runs on all the ranks or on pairs: --pattern needs --backend mpi or nccl");
  HostBackend::set_group(members);
  if (members.empty()) {
    active_ = world_;
    return;
  }
  std::shared_ptr<gloo::Context>& pair = pairs_[members];
  if (!pair) {
    if (!world_) throw Error("the gloo backend formed a pair before connect()");
    const int peer = members[0] == rank() ? members[1] : members[0];
    pair = connect_gloo_pair(*plane_, peer, group_rank(), world_->getDevice());
  }
  active_ = pair;
}

void GlooBackend::connect() {
  if (!plane_) throw Error("the gloo backend has no control plane to connect over");
  world_ = connect_gloo_context(*plane_);
  active_ = world_;
}

void GlooBackend::reserve(std::uint64_t send_bytes, std::uint64_t recv_bytes) {
  HostBackend::reserve(send_bytes, recv_bytes);
  // reduce_scatter's out-of-place calls reduce a copy of their input (Gloo's reduce-scatter works
  // in place), as PyTorch's Gloo backend does with its flattened input.
  scratch_ = HostBuffer(send_bytes);
}

GlooCall GlooBackend::make_call(const CallSpec& call) const {
  GlooCall g;
  g.context = active_;
  g.in = input_view(call).data;
  g.recv = receive_buffer();
  g.out = output_view(call).data;
  g.scratch = scratch_.data();
  g.in_place = call.placement == Placement::kInPlace;
  g.count = call.count;
  g.chunk_bytes = call.count * size_of(call.dtype);
  g.dtype = call.dtype;
  g.op = call.op;
  g.shape = shape_of(call);
  return g;
}

double GlooBackend::run(const CallSpec& call, int operations) {
  if (!active_) throw Error("the gloo backend ran a call before connect()");
  void (*const issue)(const GlooCall&) = call.collective->gloo;
  return time_calls(
      operations, [&] { return make_call(call); }, issue);
}

nlohmann::json GlooBackend::rank_context() const {
  return {{"gloo_version", fmt::format("{}.{}.{}", GLOO_VERSION_MAJOR, GLOO_VERSION_MINOR, GLOO_VERSION_PATCH)}};
}

}  // namespace fabricbench::collectives
