// SPDX-License-Identifier: Apache-2.0
// What a load pattern's rows say: each group's rate at the largest size beside the median of its
// pattern, the bisection's sum, and each congestion victim's impact factor (under load / alone, as
// GPCNeT reports it: above 1 the load slowed the victim). Printed, in the JSON summary and as
// Prometheus gauges. It reports; it accuses nothing (a pattern has no healthy reference of its own).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/row.hpp"
#include "common/summary.hpp"
#include "fabric/expected_rates.hpp"

namespace fabricbench {

struct GroupRate {
  std::string operation;  ///< incast, one-to-many, all-to-all, pair
  std::string leader;     ///< the target of an incast, the source of one-to-many
  std::string others;     ///< "mhnode2+mhnode3"
  int round = -1;
  double gbps = 0;           ///< busbw at the report's size, Gb/s (an incast's: the target's ingress)
  double expected_gbps = 0;  ///< what its path can carry (set_expected_rates); 0 unknown
};

struct VictimImpact {
  std::string victim;  ///< "mhnode1 - mhnode5"
  std::string load;    ///< the aggressors' pattern
  std::uint64_t small_bytes = 0;
  std::uint64_t large_bytes = 0;
  double latency_alone_s = 0;
  double latency_loaded_s = 0;
  double gbps_alone = 0;
  double gbps_loaded = 0;
  double latency_factor() const;    ///< loaded / alone median time at the smallest size; 0 unknown
  double bandwidth_factor() const;  ///< alone / loaded median rate at the largest size; 0 unknown
};

struct LoadReport {
  std::string pattern;
  std::string note;  ///< the schedule's: "9 group(s) of 1 + 2 in 3 round(s)"
  std::uint64_t size_bytes = 0;
  std::vector<GroupRate> groups;      ///< measured groups (not victims or aggressors)
  std::vector<VictimImpact> victims;  ///< congestion
};

/// A group by its members, for people: "into a from b+c" (incast), "from a to b+c" (one-to-many),
/// "a+b+c" (all-to-all), "a - b" (a pair or a victim). `others` as a row's peer_host.
std::string load_group_name(std::string_view operation, const std::string& leader, const std::string& others);

/// The report of a pattern's rows (rank 0's): rows whose operation is "victim" pair up by their
/// settings' load (alone, or the aggressors' pattern); rows with load=aggressor are left out.
LoadReport load_report(const std::string& pattern, const std::string& note, const std::vector<ResultRow>& rows);

/// Each group's expected_gbps where rates are known (the tree's, --line-rate), from its flows and
/// the round's other groups' (a flow gets the least share of the cables and uplinks it crosses,
/// each split evenly among the round's flows through it): an incast's ingress, one-to-many's
/// egress, an all-to-all's slowest rank's egress, a pair's slower direction.
void set_expected_rates(LoadReport& report, const RateRule& rule);

/// The verdict "expected rate" on the groups with an expected rate; none when none has one.
std::optional<RunVerdict> judge_expected_rates(const LoadReport& report, const RateRule& rule);

std::shared_ptr<const SummaryExhibit> load_exhibit(LoadReport report);

}  // namespace fabricbench
