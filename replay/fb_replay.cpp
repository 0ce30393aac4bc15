// SPDX-License-Identifier: Apache-2.0
// fb_replay TRACE-DIR: a recorded job's communication, replayed without the job (docs/replay.md).
#include "common/driver.hpp"
#include "replay/replay_job.hpp"

int main(int argc, char** argv) {
  using namespace fabricbench;
  return drive(
      [](const std::string& program, int argc_, char** argv_, const Topology& topology, ControlPlane& world) -> Plan {
        replay::ParsedReplayOptions parsed = replay::parse_replay_options(program, argc_, argv_, topology.rank == 0);
        if (parsed.help_text) return std::move(*parsed.help_text);
        return replay::make_replay_job(program, std::move(parsed.options), topology, world);
      },
      argc, argv);
}
