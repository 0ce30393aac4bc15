// SPDX-License-Identifier: Apache-2.0
// A Gloo context for the data plane, connected over whatever control plane the run has (MPI,
// Gloo, one process): every rank's pair addresses travel in one all_gather, so no store is needed
// and mpirun runs the Gloo backend as torchrun does.
#pragma once

#include <gloo/context.h>

#include <memory>

#include "common/control_plane.hpp"

namespace fabricbench::collectives {

/// Connects the ranks of `plane` in a full mesh over TCP. The address each rank listens on is the
/// interface GLOO_SOCKET_IFNAME names (PyTorch's variable), else the one its route to another node
/// of the run takes (the loopback when all ranks share a node). Every rank must call. Throws Error
/// naming the rank and address that could not be reached.
std::shared_ptr<gloo::Context> connect_gloo_context(ControlPlane& plane);

}  // namespace fabricbench::collectives
