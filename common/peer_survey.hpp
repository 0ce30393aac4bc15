// SPDX-License-Identifier: Apache-2.0
// The side channel that names who stopped answering. When a wait times out, the rank that saw it
// asks every other rank, over UDP and within a short deadline, what it is doing; a rank that is
// SIGSTOPped, dead or cut off does not answer, a live one says which operation it waits in. The
// launcher names a rank that died; nobody else names one that hangs.
#pragma once

#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "common/control_plane.hpp"
#include "common/topology.hpp"
#include "common/watchdog.hpp"

namespace fabricbench {

/// What one rank said about itself (or did not).
struct PeerAnswer {
  int rank = 0;
  bool answered = false;
  std::string activity;
  double waiting_seconds = -1;  ///< < 0: not in a wait
};

/// The diagnosis of a survey, for the timeout line: silent ranks first (the likely culprits, named
/// with their hosts), then the live ones grouped by what they wait in. `my_activity` is the
/// surveying rank's own wait.
std::string explain_survey(const std::vector<PeerAnswer>& answers, const std::vector<std::string>& host_of_rank,
                           const std::string& my_activity);

/// One per process, made collectively by the driver before the job: a UDP socket on every rank,
/// its addresses exchanged over MPI, and a thread that answers queries from this rank's watchdog
/// status. While it lives, every timeout diagnosis (report_and_exit) carries the survey.
class PeerSurvey final : public TimeoutExplainer {
 public:
  /// Collective over MPI_COMM_WORLD. `watchdog` must outlive the survey; rank 0's is told when a
  /// peer surveys it (Watchdog::notice_peer_timeout).
  PeerSurvey(Watchdog& watchdog, const Topology& topology, ControlPlane& world);
  ~PeerSurvey();
  PeerSurvey(const PeerSurvey&) = delete;
  PeerSurvey& operator=(const PeerSurvey&) = delete;

  /// Asks every other rank for its status, answers arriving within `deadline_seconds`.
  std::vector<PeerAnswer> ask_all(double deadline_seconds) const;

  /// ask_all, explained; no text when there are no other ranks or the channel could not be opened.
  TimeoutExplanation explain(double deadline_seconds) const;

  /// A survey of 1.5 s: long enough for a loaded node to answer, short against any -T.
  TimeoutExplanation explain_timeout() const override { return explain(1.5); }

 private:
  struct Address {
    std::uint32_t ipv4 = 0;  ///< network order
    std::uint16_t port = 0;  ///< network order
  };
  void answer_queries();

  Watchdog& watchdog_;
  const Topology& topology_;
  int socket_ = -1;
  int wake_[2] = {-1, -1};                    ///< a pipe that ends the answering thread
  std::vector<std::vector<Address>> routes_;  ///< index = world rank: where its socket can be reached
  std::thread answerer_;
};

}  // namespace fabricbench
