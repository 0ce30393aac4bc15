// SPDX-License-Identifier: Apache-2.0
// A Gloo context for the data plane, connected over whatever control plane the run has (MPI,
// Gloo, one process): every rank's pair addresses travel in one all_gather, so no store is needed
// and mpirun runs the Gloo backend as torchrun does.
#pragma once

#include <gloo/context.h>
#include <gloo/transport/device.h>

#include <memory>

#include "common/control_plane.hpp"

namespace fabricbench::collectives {

/// Connects the ranks of `plane` in a full mesh over TCP. The address each rank listens on is the
/// interface GLOO_SOCKET_IFNAME names (PyTorch's variable), else the one its route to another node
/// of the run takes (the loopback when all ranks share a node). Every rank must call. Throws Error
/// naming the rank and address that could not be reached.
std::shared_ptr<gloo::Context> connect_gloo_context(ControlPlane& plane);

/// A two-rank context on `device` between this rank (`group_rank` 0 or 1 of the pair) and
/// `peer`, a rank of `plane`: their addresses swapped with plane.exchange(), so only the pair's two
/// ranks call it (a pair of a --pairs round).
std::shared_ptr<gloo::Context> connect_gloo_pair(ControlPlane& plane, int peer, int group_rank,
                                                 const std::shared_ptr<gloo::transport::Device>& device);

}  // namespace fabricbench::collectives
