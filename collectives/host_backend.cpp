// SPDX-License-Identifier: Apache-2.0
#include "collectives/host_backend.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <new>

#include "common/error.hpp"

namespace fabricbench::collectives {
namespace {

// Poison for outputs, so an element the collective never wrote is counted wrong.
constexpr int kPoisonByte = 0xA5;

}  // namespace

HostBuffer::HostBuffer(std::size_t bytes) : bytes_(bytes) {
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const std::size_t rounded = std::max<std::size_t>(page, (bytes + page - 1) / page * page);
  auto* memory = static_cast<std::byte*>(std::aligned_alloc(page, rounded));
  if (!memory) throw std::bad_alloc();
  std::memset(memory, 0, rounded);  // touch every page now, not inside a timed call
  memory_.reset(memory);
}

void HostBuffer::Free::operator()(std::byte* p) const noexcept { std::free(p); }

HostBackend::HostBackend(int rank, int ranks, CacheMode cache, Library library)
    : rank_(rank), ranks_(ranks), cache_(cache), library_(library) {}

KeyValues HostBackend::settings() const {
  KeyValues settings;
  if (cache_ != CacheMode::kWarm) settings.set("cache", std::string(name_of(cache_)));
  return settings;
}

void HostBackend::set_group(std::vector<int> members) {
  group_ = std::move(members);
  const auto me = std::find(group_.begin(), group_.end(), rank_);
  if (!group_.empty() && me == group_.end()) throw Error(fmt::format("rank {} is not in its own group", rank_));
  group_rank_ = group_.empty() ? rank_ : static_cast<int>(me - group_.begin());
}

void HostBackend::reserve(std::uint64_t send_bytes, std::uint64_t recv_bytes) {
  // Cold calls move both buffers' views by the same window, as nccl-tests does: both hold the
  // largest call.
  if (cache_ == CacheMode::kCold) send_bytes = recv_bytes = std::max(send_bytes, recv_bytes);
  send_ = HostBuffer(send_bytes);
  recv_ = HostBuffer(recv_bytes);
}

HostBackend::View HostBackend::input_view(const CallSpec& call) const {
  const bool in_place = call.placement == Placement::kInPlace;
  const Span span = input_span(*call.collective, shape_of(call), in_place);
  std::byte* base = (in_place ? recv_.data() : send_.data()) + window_offset_;
  return {base + span.offset * size_of(call.dtype), span.elements};
}

HostBackend::View HostBackend::output_view(const CallSpec& call) const {
  const Span span = output_span(*call.collective, shape_of(call), call.placement == Placement::kInPlace, library_);
  return {recv_.data() + window_offset_ + span.offset * size_of(call.dtype), span.elements};
}

DataLayout HostBackend::layout_of(const CallSpec& call) const {
  return {call.collective->source, call.dtype, call.op, group_rank(), ranks(), call.root, call.count};
}

void HostBackend::prepare(const CallSpec& call) {
  const BufferCounts counts = call.collective->buffers(call.count, ranks());
  const std::size_t element = size_of(call.dtype);
  windows_.start(std::max(counts.send, counts.recv) * element, std::min(send_.size(), recv_.size()), cache_);
  window_offset_ = 0;
  std::memset(recv_.data(), kPoisonByte, counts.recv * element);
  const View in = input_view(call);
  fill_input_host(layout_of(call), in.data, 0, in.elements);
}

std::uint64_t HostBackend::count_wrong(const CallSpec& call) {
  const View out = output_view(call);
  return count_wrong_host(layout_of(call), out.data, out.elements);
}

void HostBackend::fill_transfers(const TransferGroup& group) {
  const std::size_t element = size_of(group.dtype);
  for (const Transfer& t : group.transfers) {
    if (t.send)
      fill_input_host(sent_by(group_rank(), group.dtype), send_.data() + t.offset * element, t.offset, t.count);
    else
      std::memset(recv_.data() + t.offset * element, kPoisonByte, t.count * element);
  }
}

std::uint64_t HostBackend::count_wrong_in_transfers(const TransferGroup& group) const {
  const std::size_t element = size_of(group.dtype);
  std::uint64_t wrong = 0;
  for (const Transfer& t : group.transfers)
    if (!t.send)
      wrong +=
          count_wrong_host(copied_from(t.peer, t.peer_offset, group.dtype), recv_.data() + t.offset * element, t.count);
  return wrong;
}

bool HostBackend::corrupt_output(const CallSpec& call) {
  const View out = output_view(call);
  if (out.elements == 0) return false;
  corrupt_first_host(call.dtype, out.data);
  return true;
}

}  // namespace fabricbench::collectives
