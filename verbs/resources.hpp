// SPDX-License-Identifier: Apache-2.0
// Move-only owners of verbs handles, and the errors verbs calls raise. Declared in teardown order
// (reverse of destruction): a QP is destroyed before its CQ, an MR before its buffer's PD.
#pragma once

#include <infiniband/verbs.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>

#include "common/error.hpp"

namespace fabricbench::verbs {

/// A failed verbs call, with the errno text. Pointer-returning calls set errno; int-returning
/// calls return it (rdma-core's two conventions): use throw_errno / check_rc accordingly.
class VerbsError : public Error {
 public:
  VerbsError(const std::string& what, int error_number)
      : Error(what + ": " + std::strerror(error_number)), error_number_(error_number) {}
  int error_number() const { return error_number_; }

 private:
  int error_number_;
};

[[noreturn]] inline void throw_errno(const std::string& what) { throw VerbsError(what, errno ? errno : EIO); }
inline void check_rc(int rc, const std::string& what) {
  if (rc != 0) throw VerbsError(what, rc > 0 ? rc : (errno ? errno : EIO));
}

namespace detail {
template <auto Destroy>
struct Deleter {
  template <class T>
  void operator()(T* handle) const noexcept {
    if (handle && Destroy(handle) != 0) std::fputs("fabricbench: warning: releasing a verbs handle failed\n", stderr);
  }
};
struct FreeDeviceList {
  void operator()(ibv_device** list) const noexcept { ibv_free_device_list(list); }
};
}  // namespace detail

using DeviceList = std::unique_ptr<ibv_device*, detail::FreeDeviceList>;
using Context = std::unique_ptr<ibv_context, detail::Deleter<ibv_close_device>>;
using ProtectionDomain = std::unique_ptr<ibv_pd, detail::Deleter<ibv_dealloc_pd>>;
using CompletionQueue = std::unique_ptr<ibv_cq, detail::Deleter<ibv_destroy_cq>>;
using QueuePair = std::unique_ptr<ibv_qp, detail::Deleter<ibv_destroy_qp>>;
using MemoryRegion = std::unique_ptr<ibv_mr, detail::Deleter<ibv_dereg_mr>>;

static_assert(!std::is_copy_constructible_v<QueuePair> && std::is_move_constructible_v<QueuePair>);
static_assert(!std::is_copy_constructible_v<MemoryRegion> && std::is_move_constructible_v<MemoryRegion>);

}  // namespace fabricbench::verbs
