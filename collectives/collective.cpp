// SPDX-License-Identifier: Apache-2.0
#include "collectives/collective.hpp"

#include <algorithm>

namespace fabricbench::collectives {

std::uint64_t reported_bytes(const Collective& c, std::uint64_t count, std::size_t element_bytes, int ranks) {
  const BufferCounts b = c.buffers(count, ranks);
  return std::max(b.send, b.recv) * element_bytes;
}

Span output_span(const Collective& c, const Shape& shape, bool in_place, Library library) {
  if (c.output_on_root_only && shape.rank != shape.root) return {};
  if (c.output) return c.output(shape, in_place, library);
  return {0, c.buffers(shape.count, shape.ranks).recv};
}

Span input_span(const Collective& c, const Shape& shape, bool in_place) {
  const std::uint64_t elements = c.buffers(shape.count, shape.ranks).send;
  if (!in_place) return {0, elements};
  return {c.in_place_input_offset ? c.in_place_input_offset(shape) : 0, elements};
}

namespace shapes {

using U = std::uint64_t;

U whole_buffer(U bytes, std::size_t element_bytes, int) { return bytes / element_bytes; }
U per_rank_share(U bytes, std::size_t element_bytes, int ranks) {
  return bytes / element_bytes / static_cast<U>(ranks);
}
BufferCounts same(U count, int) { return {count, count}; }
BufferCounts gathered(U count, int ranks) { return {count, count * static_cast<U>(ranks)}; }
BufferCounts scattered(U count, int ranks) { return {count * static_cast<U>(ranks), count}; }
BufferCounts exchanged(U count, int ranks) { return {count * static_cast<U>(ranks), count * static_cast<U>(ranks)}; }
U count_only(U count, int) { return count; }
U count_times_ranks(U count, int ranks) { return count * static_cast<U>(ranks); }
double one(int) { return 1.0; }
double ring_share(int ranks) { return static_cast<double>(ranks - 1) / ranks; }
U own_chunk_offset(const Shape& s) { return static_cast<U>(s.rank) * s.count; }

}  // namespace shapes
}  // namespace fabricbench::collectives
