// SPDX-License-Identifier: Apache-2.0
// A collective is one constant descriptor, written with designated initialisers in its own file
// under collectives/catalog/: sizes and bus-bandwidth factor (nccl-tests doc/PERFORMANCE.md),
// where each output element comes from, which buffer views in-place and out-of-place calls use,
// and its NCCL and MPI calls. The backends, the data checks and the tests read nothing else.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#if defined(__CUDACC__)
#define FB_HD __host__ __device__
#else
#define FB_HD
#endif

namespace fabricbench::collectives {

struct NcclCall;  // collectives/nccl/nccl_call.hpp (NCCL builds only)
struct MpiCall;   // collectives/mpi_call.hpp
struct GlooCall;  // collectives/gloo/gloo_call.hpp (Gloo builds only)

/// Elements per rank in each buffer.
struct BufferCounts {
  std::uint64_t send = 0;
  std::uint64_t recv = 0;
};

/// One call as the descriptor's functions see it.
struct Shape {
  int rank = 0;
  int ranks = 1;
  int root = 0;
  std::uint64_t count = 0;  ///< the collective's count argument
};

/// Where output element `i` (counted from the output view's start) of `rank` comes from: data
/// only, so the GPU check kernels evaluate it too.
struct SourceRule {
  enum class From : std::uint8_t {
    kAllRanks,    ///< the reduction over every rank
    kRoot,        ///< the root's input
    kPrevious,    ///< rank - 1's input (a ring shift)
    kChunkOwner,  ///< chunk i / count of the output holds rank (i / count)'s input
  };
  From from = From::kAllRanks;
  /// The input index starts at rank * count (reduce_scatter, scatter, alltoall).
  bool own_chunk = false;
};

/// A span of a buffer, in elements.
struct Span {
  std::uint64_t offset = 0;
  std::uint64_t elements = 0;
};

enum class Library { kMpi, kNccl, kGloo };

/// How a backend issues a collective: its library's own call, or point-to-point sends and
/// receives grouped into one operation (NCCL before 2.28 had no alltoall, gather or scatter).
enum class CallForm { kLibrary, kPointToPoint };

/// The name of the point-to-point form in the rows' call column.
inline constexpr std::string_view kNcclPointToPointName = "ncclSend+ncclRecv";
inline constexpr std::string_view kMpiPointToPointName = "MPI_Isend+MPI_Irecv";

struct Collective {
  std::string_view name{};
  /// NCCL's name of the function (ncclFuncToString), which its Inspector plugin writes as `coll`:
  /// the rows' Prometheus label of that name, whatever the backend.
  std::string_view function_name{};
  bool reduces = false;   ///< takes a reduction op
  bool has_root = false;  ///< takes a root rank
  /// The count argument for a requested size of `bytes` (the larger buffer per rank). The
  /// gather-type collectives divide by the rank count and round down, as nccl-tests does.
  std::uint64_t (*count_for)(std::uint64_t bytes, std::size_t element_bytes, int ranks) = nullptr;
  BufferCounts (*buffers)(std::uint64_t count, int ranks) = nullptr;
  /// Elements per rank that algbw counts (algbw = this * element size / time).
  std::uint64_t (*algbw_elements)(std::uint64_t count, int ranks) = nullptr;
  /// busbw = algbw * factor: comparable to link speed whatever the rank count.
  double (*busbw_factor)(int ranks) = nullptr;

  SourceRule source{};
  bool output_on_root_only = false;  ///< only the root holds a result (reduce, gather)
  /// In place, the input sits in the receive buffer from this element on.
  std::uint64_t (*in_place_input_offset)(const Shape&) = nullptr;  ///< null: 0
  /// The output view in the receive buffer; null: all of it. MPI and NCCL place some in-place
  /// results differently (reduce_scatter), hence `library`.
  Span (*output)(const Shape&, bool in_place, Library library) = nullptr;

  void (*mpi)(const MpiCall&) = nullptr;
  /// The collective as MPI's nonblocking sends and receives (MpiExchange), out of place: what a
  /// load pattern runs on a group of the world's ranks. Null where no pattern needs it.
  void (*mpi_p2p)(const MpiCall&) = nullptr;
  /// NCCL's own call for this collective; null where NCCL has none (sendrecv) or this build's
  /// nccl.h is older than `nccl_since`.
  void (*nccl)(const NcclCall&) = nullptr;
  /// The NCCL_VERSION_CODE of the first library with `nccl`: an older library loaded at run time
  /// (the symbol is weak) takes `nccl_p2p`, as nccl-tests does.
  int nccl_since = 0;
  /// The collective as point-to-point sends and receives in one NCCL group: nccl-tests' form
  /// before NCCL 2.28, and what --nccl-call p2p measures beside the native call.
  void (*nccl_p2p)(const NcclCall&) = nullptr;
  /// The calls' names, for the rows' call column ("ncclAlltoAll", "MPI_Alltoall").
  std::string_view nccl_name{};
  std::string_view mpi_name{};
  /// NCCL's name for the call in its profiler and TUNING log; empty where NCCL reports sends and
  /// receives instead of a collective event.
  std::string_view nccl_function{};
  /// False where NCCL's in-place call sends from and receives into one buffer at once with every
  /// peer (alltoall, sendrecv): a race NCCL does not order, so with more than one rank its result
  /// is undefined (wrong data from 8 MiB on the H200). Timed as nccl-tests times it, not checked.
  bool nccl_in_place_defined = true;
  /// Gloo's call for this collective (its own algorithm; null in builds without Gloo), its name
  /// for the call column, and whether its in-place result is defined (as for NCCL above).
  void (*gloo)(const GlooCall&) = nullptr;
  std::string_view gloo_name{};
  bool gloo_in_place_defined = true;
};

/// Bytes per rank of the larger buffer: the size a row reports.
std::uint64_t reported_bytes(const Collective& c, std::uint64_t count, std::size_t element_bytes, int ranks);

/// The span of the receive buffer holding this rank's result (elements 0 when it holds none).
Span output_span(const Collective& c, const Shape& shape, bool in_place, Library library);

/// Where the input lives: out of place the send buffer from 0, in place the receive buffer.
Span input_span(const Collective& c, const Shape& shape, bool in_place);

// The building blocks the catalog composes.
namespace shapes {
std::uint64_t whole_buffer(std::uint64_t bytes, std::size_t element_bytes, int ranks);
std::uint64_t per_rank_share(std::uint64_t bytes, std::size_t element_bytes, int ranks);
BufferCounts same(std::uint64_t count, int ranks);
BufferCounts gathered(std::uint64_t count, int ranks);   ///< send count, receive count x ranks
BufferCounts scattered(std::uint64_t count, int ranks);  ///< send count x ranks, receive count
BufferCounts exchanged(std::uint64_t count, int ranks);  ///< count x ranks both ways
std::uint64_t count_only(std::uint64_t count, int ranks);
std::uint64_t count_times_ranks(std::uint64_t count, int ranks);
double one(int ranks);
double ring_share(int ranks);                        ///< (n - 1) / n
std::uint64_t own_chunk_offset(const Shape& shape);  ///< rank * count
}  // namespace shapes

}  // namespace fabricbench::collectives
