// SPDX-License-Identifier: Apache-2.0
#include "common/program.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>

#include "common/error.hpp"
#include "common/gloo_plane.hpp"
#include "common/launcher.hpp"
#include "common/mpi.hpp"
#include "common/output_file.hpp"
#include "common/singleton_plane.hpp"
#include "common/utf8.hpp"

namespace fabricbench {
namespace {

// What went to standard output must have got there: a table written into a full disk or
// /dev/full is lost, and exit 0 would say it was printed.
int after_stdout_flushed(const std::string& program, int code) {
  errno = 0;
  if (std::fflush(stdout) == 0 && !std::ferror(stdout)) return code;
  const int err = errno;
  std::fprintf(stderr, "%s: error: writing to standard output failed: %s\n", program.c_str(),
               err ? std::strerror(err) : "a write error");
  return code == kExitOk ? kExitFailure : code;
}

// A standard stream cron or a parent closed gets /dev/null: left closed, the first file opened
// (a run's .partial) would take its number and the table would be printed into it. A closed
// standard output is output the caller discards.
void open_closed_standard_streams() noexcept {
  for (const int fd : {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO}) {
    if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    const int opened = ::open("/dev/null", fd == STDIN_FILENO ? O_RDONLY : O_WRONLY);
    if (opened >= 0 && opened != fd) {
      ::dup2(opened, fd);
      ::close(opened);
    }
  }
}

// "PROGRAM: error: MESSAGE" on one line, whatever the message quotes (a file name with a newline).
void print_error(const std::string& who, const std::string& message) {
  std::fprintf(stderr, "%s: error: %s\n", who.c_str(), one_line(message).c_str());
  std::fflush(stderr);
}

}  // namespace

void print_failure(const std::string& program, const Topology& topology, const std::exception& e) {
  print_error(topology.label() + " " + program, describe(e));
}

int run_mpi_program(int argc, char** argv, const ProgramBody& body) {
  open_closed_standard_streams();
  const std::string program = std::filesystem::path(argv[0]).filename().string();
  install_interrupt_notice();
  try {
    // MPI_Init only where a launcher started ranks that must meet there.
    std::optional<mpi::Session> session;
    // An MPI the data plane started late ends after the world plane, on every return below.
    const struct LateSessionEnd {
      ~LateSessionEnd() { mpi::finish_late_session(); }
    } late_session_end;
    std::unique_ptr<ControlPlane> world;
    const Launch launch = decide_launch(launcher_choice(argc, argv), LaunchSigns::of_environment());
    if (launch == Launch::kMpi) {
      session.emplace(argc, argv);
      world = std::make_unique<mpi::MpiPlane>();
    } else if (launch == Launch::kEnv) {
      const std::optional<LaunchEnvironment> environment = launch_environment();
      if (!environment)
        throw UsageError("--launcher env: no launcher's variables here (RANK and WORLD_SIZE, or a Slurm step's)");
      world = make_gloo_world(*environment);
    } else {
      world = std::make_unique<SingletonPlane>();
    }
    // From here a rank has peers: a failure ends them all (abort), never leaves them waiting.
    std::optional<Topology> discovered;
    try {
      discovered = discover_topology(*world);
    } catch (const std::exception& e) {
      print_error(program, "finding the ranks' nodes: " + describe(e));
      world->abort(kExitFailure);
    }
    const Topology& topology = *discovered;
    int code = kExitFailure;
    try {
      code = body(program, topology, *world);
    } catch (const UsageError& e) {
      if (topology.rank == 0) print_error(program, e.what());
      code = kExitUsage;
    } catch (const ReportedError& e) {
      world->abort(e.code());
    } catch (const std::exception& e) {
      print_failure(program, topology, e);
      world->abort(kExitFailure);
    }
    world->close();
    return after_stdout_flushed(program, code);
  } catch (const UsageError& e) {  // the launch itself (a launcher's variables, --launcher)
    print_error(program, e.what());
    return kExitUsage;
  } catch (const std::exception& e) {
    print_error(program, describe(e));
    return kExitFailure;
  }
}

int run_tool(const char* program, const std::function<int()>& body, int other_errors) {
  open_closed_standard_streams();
  try {
    return after_stdout_flushed(program, body());
  } catch (const UsageError& e) {
    print_error(program, e.what());
    return kExitUsage;
  } catch (const std::exception& e) {
    print_error(program, describe(e));
    return other_errors;
  }
}

}  // namespace fabricbench
