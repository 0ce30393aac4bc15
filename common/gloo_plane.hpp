// SPDX-License-Identifier: Apache-2.0
// The control plane of a launch without MPI (torchrun and its kind, common/launcher.hpp): Gloo's
// collectives over TCP, its contexts meeting through the rendezvous store rank 0 serves
// (common/tcp_store.hpp). Built only where Gloo is (libgloo-dev).
#pragma once

#include <memory>

#include "common/control_plane.hpp"
#include "common/launcher.hpp"

namespace fabricbench {

/// The world of the ranks `launch` describes: rank 0 serves the store, every rank connects to
/// every other. Throws Error when the store cannot be served or reached, or the world does not
/// fill within launch.rendezvous_seconds; UsageError when the build has no Gloo.
std::unique_ptr<ControlPlane> make_gloo_world(const LaunchEnvironment& launch);

}  // namespace fabricbench
