// SPDX-License-Identifier: Apache-2.0
#include "common/cpu_contention.hpp"

#include <fmt/format.h>
#include <sched.h>
#include <time.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

namespace fabricbench {

ContentionMeter::ContentionMeter() : start_(read()) {}

ContentionMeter::Reading ContentionMeter::read() {
  Reading r;
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  r.wall_ns = static_cast<std::uint64_t>(now.tv_sec) * 1000000000ULL + static_cast<std::uint64_t>(now.tv_nsec);
  // schedstat: nanoseconds on a CPU, nanoseconds runnable but waiting on a run queue, slices.
  std::ifstream schedstat("/proc/thread-self/schedstat");
  std::uint64_t running = 0;
  if (!(schedstat >> running >> r.wait_ns)) return r;
  // The machine's first line: cpu user nice system idle iowait irq softirq steal ... (in ticks).
  std::ifstream stat("/proc/stat");
  std::string line, label;
  if (!std::getline(stat, line)) return r;
  std::istringstream fields(line);
  fields >> label;
  std::uint64_t value = 0;
  for (int i = 0; i < 8 && fields >> value; ++i) {
    r.total_ticks += value;
    if (i == 7) r.steal_ticks = value;
  }
  r.known = label == "cpu";
  return r;
}

CpuContention ContentionMeter::local() const {
  const Reading end = read();
  CpuContention c;
  if (!start_.known || !end.known || end.wall_ns <= start_.wall_ns) return c;
  c.known = true;
  const double wall = static_cast<double>(end.wall_ns - start_.wall_ns);
  c.runqueue_wait = std::clamp(static_cast<double>(end.wait_ns - start_.wait_ns) / wall, 0.0, 1.0);
  if (end.total_ticks > start_.total_ticks)
    c.steal = std::clamp(static_cast<double>(end.steal_ticks - start_.steal_ticks) /
                             static_cast<double>(end.total_ticks - start_.total_ticks),
                         0.0, 1.0);
  return c;
}

namespace {
// ln(1 / (1 - fraction)), for fractions that count.
double lost(double fraction) { return fraction >= kNotableContention ? -std::log(1 - std::min(fraction, 0.99)) : 0.0; }
}  // namespace

CpuContention fold_over_ranks(const CpuContention& mine, ControlPlane& world) {
  // Both by maximum: any rank not knowing, and the most stolen.
  double most[2] = {mine.known ? 0.0 : 1.0, mine.steal};
  world.all_reduce(most, ControlPlane::Fold::kMax);
  const double waits_lost = all_reduce(world, lost(mine.runqueue_wait), ControlPlane::Fold::kSum);
  const auto [wait, rank] = world.max_location(mine.runqueue_wait);
  CpuContention all;
  if (most[0] > 0) return all;
  all.known = true;
  all.runqueue_wait = wait;
  all.runqueue_wait_rank = rank;
  all.steal = most[1];
  all.slowdown = std::min(std::exp(waits_lost + lost(all.steal)), kMaxContentionSlowdown);
  return all;
}

double layout_slowdown(const std::vector<RankCpus>& ranks) {
  std::map<std::string, std::pair<int, std::set<int>>> machines;  // ranks on it, the CPUs any may run on
  for (const RankCpus& r : ranks) {
    auto& [count, cpus] = machines[r.machine];
    ++count;
    cpus.insert(r.cpus.begin(), r.cpus.end());
  }
  double waits_lost = 0;
  for (const RankCpus& r : ranks) {
    const auto& [count, cpus] = machines[r.machine];
    const double share = cpus.empty() ? 1.0 : static_cast<double>(cpus.size()) / count;
    if (share < 1) waits_lost += lost(1 - share);
  }
  return std::exp(waits_lost);
}

RankCpus this_rank_cpus(const std::string& fallback_machine) {
  RankCpus mine;
  std::ifstream boot_id("/proc/sys/kernel/random/boot_id");
  if (!std::getline(boot_id, mine.machine) || mine.machine.empty()) mine.machine = fallback_machine;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
      if (CPU_ISSET(cpu, &set)) mine.cpus.push_back(cpu);
  return mine;
}

double layout_slowdown(ControlPlane& world) {
  RankCpus mine = this_rank_cpus(world.node_name());
  std::replace_if(
      mine.machine.begin(), mine.machine.end(), [](unsigned char c) { return std::isspace(c) != 0; }, '_');
  std::string bytes = mine.machine.empty() ? "unnamed" : mine.machine;
  for (int cpu : mine.cpus) bytes += fmt::format(" {}", cpu);
  std::vector<RankCpus> ranks;
  for (const std::string& gathered : world.all_gather(bytes)) {
    std::istringstream fields(gathered);
    RankCpus r;
    fields >> r.machine;
    for (int cpu = 0; fields >> cpu;) r.cpus.push_back(cpu);
    ranks.push_back(std::move(r));
  }
  return layout_slowdown(ranks);
}

nlohmann::json to_json(const CpuContention& c) {
  if (!c.known) return nullptr;
  nlohmann::json j{{"runqueue_wait", c.runqueue_wait},
                   {"runqueue_wait_rank", c.runqueue_wait_rank},
                   {"steal", c.steal},
                   {"slowdown", c.slowdown}};
  if (c.handoff_before_ns > 0 && c.handoff_after_ns > 0)
    j["core_handoff_ns"] = nlohmann::json::array({c.handoff_before_ns, c.handoff_after_ns});
  return j;
}

CpuContention contention_from_json(const nlohmann::json& value) {
  CpuContention c;
  if (!value.is_object()) return c;
  const auto fraction = [&](const char* key) {
    const auto found = value.find(key);
    if (found == value.end() || !found->is_number()) return -1.0;
    const double v = found->get<double>();
    return is_time_fraction(v) ? v : -1.0;
  };
  const double wait = fraction("runqueue_wait"), steal = fraction("steal");
  if (wait < 0 || steal < 0) return c;
  c.known = true;
  c.runqueue_wait = wait;
  c.steal = steal;
  if (const auto rank = value.find("runqueue_wait_rank"); rank != value.end() && rank->is_number_integer())
    c.runqueue_wait_rank = rank->get<int>();
  // A slowdown below 1, infinite or absent: the largest wait's and the steal's own, as the fold
  // counts them (the least the run's bound can be).
  c.slowdown = std::min(std::exp(lost(wait) + lost(steal)), kMaxContentionSlowdown);
  if (const auto s = value.find("slowdown"); s != value.end() && s->is_number()) {
    const double v = s->get<double>();
    if (is_contention_bound(v)) c.slowdown = v;
  }
  // Both figures or neither: a handoff of more than a second is no handoff.
  if (const auto h = value.find("core_handoff_ns");
      h != value.end() && h->is_array() && h->size() == 2 && (*h)[0].is_number() && (*h)[1].is_number()) {
    const double before = (*h)[0].get<double>(), after = (*h)[1].get<double>();
    const auto valid = [](double ns) { return std::isfinite(ns) && ns > 0 && ns <= 1e9; };
    if (valid(before) && valid(after)) {
      c.handoff_before_ns = before;
      c.handoff_after_ns = after;
    }
  }
  return c;
}

}  // namespace fabricbench
