// SPDX-License-Identifier: Apache-2.0
// The peer survey's diagnosis on hand-made answers: silent ranks are named first with their hosts,
// live ones grouped by what they wait in.
#include "common/peer_survey.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace fabricbench {
namespace {

const std::vector<std::string> kHosts = {"node01", "node02", "node03", "node04"};

TEST(PeerSurvey, NamesTheSilentRankAndItsHostFirst) {
  const std::vector<PeerAnswer> answers = {
      {1, true, "sendrecv 8 B", 5.0}, {2, false, "", -1}, {3, true, "sendrecv 8 B", 4.5}};
  EXPECT_EQ(explain_survey(answers, kHosts, "sendrecv 8 B"),
            "Peers: rank 2 on node03 did not answer (stopped, dead or cut off: the likely culprit); "
            "rank 1 on node02, rank 3 on node04 wait in the same operation (up to 5.0 s).");
}

TEST(PeerSurvey, ARankWaitingElsewhereIsNamedWithItsOperation) {
  const std::vector<PeerAnswer> answers = {{0, true, "all_reduce 1 MiB", 2.0}, {1, true, "connecting", 7.25}};
  EXPECT_EQ(explain_survey(answers, kHosts, "all_reduce 1 MiB"),
            "Peers: rank 0 on node01 waits in the same operation (up to 2.0 s); rank 1 on node02 waits in connecting "
            "(up to 7.2 s).");
}

TEST(PeerSurvey, ALiveRankOutsideAnyWaitIsBusy) {
  const std::vector<PeerAnswer> answers = {{3, true, "writing results", -1}};
  EXPECT_EQ(explain_survey(answers, kHosts, "x"), "Peers: rank 3 on node04 is busy in writing results, not waiting.");
}

TEST(PeerSurvey, ManySilentRanksAreCounted) {
  std::vector<std::string> hosts;
  std::vector<PeerAnswer> answers;
  for (int r = 0; r < 9; ++r) {
    hosts.push_back(fmt::format("n{}", r));  // not "n" + to_string: a GCC 12 -Wrestrict false positive at -O3
    answers.push_back({r, false, "", -1});
  }
  EXPECT_EQ(explain_survey(answers, hosts, "x"),
            "Peers: rank 0 on n0, rank 1 on n1, rank 2 on n2, rank 3 on n3, rank 4 on n4, rank 5 on n5 and 3 more did "
            "not answer (stopped, dead or cut off: the likely culprits).");
}

TEST(PeerSurvey, NoPeersNothingToSay) { EXPECT_EQ(explain_survey({}, kHosts, "x"), ""); }

}  // namespace
}  // namespace fabricbench
