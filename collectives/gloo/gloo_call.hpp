// SPDX-License-Identifier: Apache-2.0
// One Gloo call as a collective descriptor makes it: the views the Gloo backend chose, the
// element type as a C++ type and the reduction as Gloo's functions (Gloo builds only).
#pragma once

#include <gloo/algorithm.h>
#include <gloo/common/error.h>
#include <gloo/context.h>
#include <gloo/math.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>

#include "collectives/collective.hpp"
#include "collectives/host_data.hpp"
#include "common/dtype.hpp"
#include "common/error.hpp"
#include "common/reduce_op.hpp"

namespace fabricbench::collectives {

struct GlooCall {
  std::shared_ptr<gloo::Context> context;
  std::byte* in = nullptr;    ///< the input view (in place: inside the receive buffer)
  std::byte* recv = nullptr;  ///< the receive buffer's start
  std::byte* out = nullptr;   ///< the output view
  /// A buffer of the send buffer's size for calls Gloo runs in place only (reduce_scatter).
  std::byte* scratch = nullptr;
  bool in_place = false;
  std::size_t count = 0;
  std::size_t chunk_bytes = 0;  ///< count elements, in bytes
  DataType dtype = DataType::kFloat32;
  ReduceOp op = ReduceOp::kSum;
  Shape shape;

  template <class T>
  static T* as(std::byte* p) {
    return reinterpret_cast<T*>(p);
  }
  bool at_root() const { return shape.rank == shape.root; }
  std::byte* chunk(std::byte* buffer, int index) const {
    return buffer + static_cast<std::size_t>(index) * chunk_bytes;
  }

  /// Calls `f(T{})` with T the call's element type.
  template <class F>
  void typed(F&& f) const {
    with_host_type(dtype, std::forward<F>(f), "Gloo");
  }

  /// The reduction as the new API's options take it (allreduce, reduce).
  template <class T>
  auto reduction() const -> void (*)(void*, const void*, const void*, std::size_t) {
    switch (op) {
      case ReduceOp::kSum: return &gloo::sum<T>;
      case ReduceOp::kProd: return &gloo::product<T>;
      case ReduceOp::kMin: return &gloo::min<T>;
      case ReduceOp::kMax: return &gloo::max<T>;
      default: throw Error("Gloo has no such reduction");
    }
  }

  /// The reduction as Gloo's algorithm classes take it (ReduceScatterHalvingDoubling).
  template <class T>
  const gloo::ReductionFunction<T>* reduction_function() const {
    switch (op) {
      case ReduceOp::kSum: return gloo::ReductionFunction<T>::sum;
      case ReduceOp::kProd: return gloo::ReductionFunction<T>::product;
      case ReduceOp::kMin: return gloo::ReductionFunction<T>::min;
      case ReduceOp::kMax: return gloo::ReductionFunction<T>::max;
      default: throw Error("Gloo has no such reduction");
    }
  }
};

/// Runs a Gloo call, turning Gloo's exceptions into the harness's errors with the call named.
template <class Call>
void gloo_check(const char* what, Call&& call) {
  try {
    call();
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {  // gloo::Exception, and its GLOO_ENFORCE's EnforceNotMet
    throw Error(std::string(what) + ": " + e.what());
  }
}

}  // namespace fabricbench::collectives
