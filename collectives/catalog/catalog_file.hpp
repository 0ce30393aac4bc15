// SPDX-License-Identifier: Apache-2.0
// What a descriptor file of the catalog includes: the descriptor, its building blocks, the call
// structs. FB_NCCL_ONLY and FB_GLOO_ONLY keep a library's call out of builds without it;
// FB_NCCL_2_28 keeps a call NCCL 2.28 added out of builds against an older nccl.h.
#pragma once

// catalog.hpp's extern declarations give each `const Collective` its external linkage: without
// them a namespace-scope const would stay local to its file.
#include "collectives/catalog.hpp"
#include "collectives/collective.hpp"
#include "collectives/mpi_call.hpp"

#if FABRICBENCH_HAVE_NCCL
#include "collectives/nccl/nccl_call.hpp"
#define FB_NCCL_ONLY(...) __VA_ARGS__
#else
#define FB_NCCL_ONLY(...) nullptr
#endif

#if FABRICBENCH_HAVE_GLOO
#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/alltoall.h>
#include <gloo/broadcast.h>
#include <gloo/gather.h>
#include <gloo/reduce.h>
#include <gloo/reduce_scatter.h>
#include <gloo/scatter.h>

#include <cstring>
#include <limits>
#include <vector>

#include "collectives/gloo/gloo_call.hpp"
#define FB_GLOO_ONLY(...) __VA_ARGS__
#else
#define FB_GLOO_ONLY(...) nullptr
#endif

// Nested: without NCCL, NCCL_VERSION is no macro and the preprocessor cannot read the comparison.
#define FB_HAVE_NCCL_2_28 0
#if FABRICBENCH_HAVE_NCCL
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
#undef FB_HAVE_NCCL_2_28
#define FB_HAVE_NCCL_2_28 1
#endif
#endif

#if FB_HAVE_NCCL_2_28
#define FB_NCCL_2_28(...) __VA_ARGS__
#else
#define FB_NCCL_2_28(...) nullptr
#endif

namespace fabricbench::collectives {
/// NCCL_VERSION_CODE of 2.28.0, where ncclAlltoAll, ncclGather and ncclScatter appeared.
inline constexpr int kNccl228 = 22800;
}  // namespace fabricbench::collectives
