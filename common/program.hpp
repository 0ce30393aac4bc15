// SPDX-License-Identifier: Apache-2.0
// The one place where an MPI-launched fabricbench executable stops exceptions.
#pragma once

#include <functional>
#include <string>

#include "common/control_plane.hpp"
#include "common/topology.hpp"

namespace fabricbench {

/// Starts the ranks' control plane (MPI), finds the topology and runs `body(program, topology,
/// world)`, returning its exit code. A UsageError (all ranks agreed on it) prints "program: error:
/// ..." once, from rank 0, and returns 2. Any other exception prints "[rank r on host] program:
/// error: <chain>" and aborts the job with 3, so no peer is left waiting in a collective.
using ProgramBody = std::function<int(const std::string& program, const Topology& topology, ControlPlane& world)>;
int run_mpi_program(int argc, char** argv, const ProgramBody& body);

/// "[rank r on host] program: error: <chain>" on stderr, flushed. For code that must report
/// before it tears anything down (then throws ReportedError).
void print_failure(const std::string& program, const Topology& topology, const std::exception& e);

/// The same for the tools that start no MPI (fb_compare, fb_import, fb_sweep): runs `body`, and
/// an exception prints "program: error: ..." and returns 2 for a UsageError, `other_errors` for
/// anything else.
int run_tool(const char* program, const std::function<int()>& body, int other_errors);

}  // namespace fabricbench
