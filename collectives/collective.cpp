// SPDX-License-Identifier: Apache-2.0
#include "collectives/collective.hpp"

#include <algorithm>

namespace fabricbench::collectives {
namespace {

using U = std::uint64_t;
using N = int;

U whole_buffer(U bytes, std::size_t element_bytes, N) { return bytes / element_bytes; }
U per_rank_share(U bytes, std::size_t element_bytes, N ranks) { return bytes / element_bytes / static_cast<U>(ranks); }
BufferCounts same(U count, N) { return {count, count}; }
U count_only(U count, N) { return count; }
U count_times_ranks(U count, N ranks) { return count * static_cast<U>(ranks); }
double one(N) { return 1.0; }
double ring_share(N ranks) { return static_cast<double>(ranks - 1) / ranks; }

}  // namespace

const Collective kAllReduce{
    Kind::kAllReduce, "all_reduce", true,       false,
    whole_buffer,     same,         count_only, [](N ranks) { return 2.0 * (ranks - 1) / ranks; }};

const Collective kAllGather{Kind::kAllGather,
                            "all_gather",
                            false,
                            false,
                            per_rank_share,
                            [](U count, N ranks) {
                              return BufferCounts{count, count * static_cast<U>(ranks)};
                            },
                            count_times_ranks,
                            ring_share};

const Collective kReduceScatter{Kind::kReduceScatter,
                                "reduce_scatter",
                                true,
                                false,
                                per_rank_share,
                                [](U count, N ranks) {
                                  return BufferCounts{count * static_cast<U>(ranks), count};
                                },
                                count_times_ranks,
                                ring_share};

const Collective kBroadcast{Kind::kBroadcast, "broadcast", false, true, whole_buffer, same, count_only, one};

const Collective kReduce{Kind::kReduce, "reduce", true, true, whole_buffer, same, count_only, one};

// count is the chunk sent to each peer; each rank sends and receives count * ranks elements.
const Collective kAllToAll{Kind::kAllToAll,
                           "alltoall",
                           false,
                           false,
                           per_rank_share,
                           [](U count, N ranks) {
                             return BufferCounts{count * static_cast<U>(ranks), count * static_cast<U>(ranks)};
                           },
                           count_times_ranks,
                           ring_share};

const Collective kSendRecv{Kind::kSendRecv, "sendrecv", false, false, whole_buffer, same, count_only, one};

std::uint64_t reported_bytes(const Collective& c, std::uint64_t count, std::size_t element_bytes, int ranks) {
  const BufferCounts b = c.buffers(count, ranks);
  return std::max(b.send, b.recv) * element_bytes;
}

}  // namespace fabricbench::collectives
