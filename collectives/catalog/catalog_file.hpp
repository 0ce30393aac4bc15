// SPDX-License-Identifier: Apache-2.0
// What a descriptor file of the catalog includes: the descriptor, its building blocks, both call
// structs. FB_NCCL_ONLY keeps the NCCL call out of builds without NCCL; FB_NCCL_2_28 keeps a call
// NCCL 2.28 added out of builds against an older nccl.h.
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
