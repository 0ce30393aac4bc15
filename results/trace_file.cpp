// SPDX-License-Identifier: Apache-2.0
#include "results/trace_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "common/input_file.hpp"
#include "common/json_input.hpp"
#include "common/text_lines.hpp"
#include "common/utf8.hpp"
#include "results/json_fields.hpp"

namespace fabricbench::results {
namespace {

// NCCL's names of what a trace may hold (ncclFuncToString, and the point-to-point calls).
const std::set<std::string, std::less<>> kFunctions = {"AllReduce", "AllGather", "ReduceScatter", "Broadcast", "Reduce",
                                                       "AlltoAll",  "Gather",    "Scatter",       "Send",      "Recv"};

constexpr std::int64_t kMaxRanks = 1 << 20;

TraceCommunicator communicator_from(const JsonFields& f, int world_size) {
  TraceCommunicator c;
  c.hash = f.text("hash", "", true);
  // NCCL's hashes are hex: a separator here would split the settings (comm=HASH;...) and the lines
  // rows are matched and printed by.
  if (c.hash.empty() || c.hash.size() > 64 ||
      c.hash.find_first_not_of("0123456789abcdefABCDEFghijklmnopqrstuvwxyzGHIJKLMNOPQRSTUVWXYZ_.:-") !=
          std::string::npos)
    f.fail("hash", "is not a communicator hash (1-64 letters, digits and - _ . :)");
  c.size = static_cast<int>(f.whole("size", 1, world_size, 0, true));
  c.rank = static_cast<int>(f.whole("rank", 0, c.size - 1, 0, true));
  c.nodes = static_cast<int>(f.whole("nodes", 0, c.size, 0));
  return c;
}

TraceOperation operation_from(const JsonFields& f, const RankTrace& trace) {
  TraceOperation op;
  op.comm = f.text("comm", "", true);
  const TraceCommunicator* comm = trace.communicator(op.comm);
  if (!comm) f.fail("comm", fmt::format("names communicator '{}', which this rank's trace never joined", op.comm));
  op.function = f.text("function", "", true);
  if (!kFunctions.contains(op.function))
    f.fail("function", fmt::format("is '{}', not one of NCCL's operations (AllReduce, AllGather, ReduceScatter, "
                                   "Broadcast, Reduce, AlltoAll, Gather, Scatter, Send, Recv)",
                                   op.function));
  const std::string type = f.text("type", "", true);
  try {
    op.dtype = parse_data_type(type, "type");
  } catch (const UsageError&) {
    f.fail("type", fmt::format("is '{}', not an element type NCCL has", type));
  }
  const auto max_count = static_cast<std::int64_t>(kMaxTraceOperationBytes / size_of(op.dtype));
  op.count = static_cast<std::uint64_t>(f.whole("count", 0, max_count, 0, true));
  op.root = static_cast<int>(f.whole("root", -1, comm->size - 1, -1));
  if (op.rooted() && op.root < 0) f.fail("root", fmt::format("is missing: {} has a root", op.function));
  op.peer = static_cast<int>(f.whole("peer", -1, comm->size - 1, -1));
  if (op.point_to_point() && op.peer < 0) f.fail("peer", fmt::format("is missing: {} has a peer", op.function));
  op.reduction = f.text("reduction", "unknown");
  op.algorithm = f.text("algorithm", "");
  op.protocol = f.text("protocol", "");
  op.channels = static_cast<int>(f.whole("channels", 0, 1024, 0));
  op.start_us = f.seconds_us("start_us");
  op.duration_us = f.seconds_us("duration_us");
  op.gap_us = f.seconds_us("gap_us");
  op.timed = f.flag("timed", true);
  if (!op.timed) op.duration_us = 0;
  // A replay holds each gap and times each call: a day is beyond any step's.
  constexpr double kDayUs = 86400e6;
  if (op.duration_us > kDayUs) f.fail("duration_us", "is more than a day");
  if (op.gap_us > kDayUs) f.fail("gap_us", "is more than a day");
  op.step = f.whole("step", -1, std::numeric_limits<std::int32_t>::max(), -1);
  op.group = f.whole("group", -1, std::numeric_limits<std::int64_t>::max(), -1);
  return op;
}

// A numbered group's Send/Recv follow one another on one communicator: what issues_of() takes as
// one issue. Checked as the rank's file is read.
void check_groups(const RankTrace& trace, const std::string& name) {
  std::set<std::int64_t> ended;
  const TraceOperation* open = nullptr;  // the group being read
  for (std::size_t i = 0; i < trace.operations.size(); ++i) {
    const TraceOperation& op = trace.operations[i];
    const bool grouped = op.point_to_point() && op.group >= 0;
    if (open && grouped && op.group == open->group) {
      if (op.comm != open->comm)
        throw InputError(
            fmt::format("{}: operation {}: group {} spans communicators '{}' and '{}' (a replayed "
                        "group is on one communicator)",
                        name, i, op.group, open->comm, op.comm));
      continue;
    }
    if (open) ended.insert(open->group);
    open = grouped ? &op : nullptr;
    if (grouped && ended.contains(op.group))
      throw InputError(
          fmt::format("{}: operation {}: group {} was already closed: a group's Send/Recv follow "
                      "one another, with no other operation between them",
                      name, i, op.group));
  }
}

// A rank's Send/Recv of one issue, per (peer, direction), in order: what its peers must mirror.
struct Transfers {
  std::map<int, std::vector<const TraceOperation*>> sends, receives;  // peer -> operations
};
Transfers transfers_of(const RankTrace& trace, const TraceIssue& issue) {
  Transfers t;
  for (std::size_t i = issue.first; i < issue.first + issue.size; ++i) {
    const TraceOperation& op = trace.operations[i];
    (op.function == "Send" ? t.sends : t.receives)[op.peer].push_back(&op);
  }
  return t;
}

// Within one group of a communicator: every Send of a member matched, in order, by a Recv of the
// same count and type at its peer, and no Recv left without its Send.
void check_matched(const std::vector<RankTrace>& ranks, const std::vector<int>& world_rank,
                   const std::vector<const TraceIssue*>& at, const std::string& hash, std::size_t index,
                   const std::string& name) {
  std::vector<Transfers> t;
  for (std::size_t member = 0; member < at.size(); ++member)
    t.push_back(transfers_of(ranks[static_cast<std::size_t>(world_rank[member])], *at[member]));
  auto where = [&](std::size_t member) {
    return fmt::format("{}: communicator '{}', operation {} (a group of Send/Recv): rank {}", name, hash, index,
                       world_rank[member]);
  };
  for (std::size_t from = 0; from < t.size(); ++from) {
    for (const auto& [to, sends] : t[from].sends) {
      const auto found = t[static_cast<std::size_t>(to)].receives.find(static_cast<int>(from));
      const std::size_t received = found == t[static_cast<std::size_t>(to)].receives.end() ? 0 : found->second.size();
      if (received != sends.size())
        throw InputError(fmt::format("{} sends {} time(s) to its rank {}, which receives {} time(s) from it",
                                     where(from), sends.size(), to, received));
      for (std::size_t k = 0; k < sends.size(); ++k)
        if (sends[k]->count != found->second[k]->count || sends[k]->dtype != found->second[k]->dtype)
          throw InputError(fmt::format("{} sends {} x {} to its rank {}, which receives {} x {}", where(from),
                                       sends[k]->count, name_of(sends[k]->dtype), to, found->second[k]->count,
                                       name_of(found->second[k]->dtype)));
    }
    for (const auto& [peer, receives] : t[from].receives)
      if (!t[static_cast<std::size_t>(peer)].sends.contains(static_cast<int>(from)))
        throw InputError(fmt::format("{} receives {} time(s) from its rank {}, which sends it nothing", where(from),
                                     receives.size(), peer));
  }
}

// What every member of a communicator must issue alike, in order.
std::string collective_signature(const TraceOperation& op) {
  return fmt::format("{} of {} x {}{}", op.function, op.count, name_of(op.dtype),
                     op.root >= 0 ? fmt::format(" (root {})", op.root) : std::string());
}
std::string issue_signature(const RankTrace& trace, const TraceIssue& issue) {
  return issue.point_to_point ? std::string("a group of Send/Recv")
                              : collective_signature(trace.operations[issue.first]);
}

// Each rank issues its operations one after the other, each waiting for the communicator's other
// members: ranks that issued two communicators' operations in opposite orders would wait on each
// other for ever. Played through like that, every rank must reach its trace's end. `issues`: each
// rank's issues_of().
template <class Members>
void check_issue_order(const std::vector<RankTrace>& ranks, const std::vector<std::vector<TraceIssue>>& issues,
                       const Members& members, const std::string& name) {
  const auto comm_of = [&](std::size_t r, std::size_t i) -> const std::string& {
    return ranks[r].operations[issues[r][i].first].comm;
  };
  std::vector<std::size_t> next(ranks.size(), 0);
  std::vector<std::size_t> work(ranks.size());
  for (std::size_t r = 0; r < ranks.size(); ++r) work[r] = r;
  // A collective completes when its last member reaches it: only a rank that just moved on can
  // complete one, so only those are looked at again.
  while (!work.empty()) {
    const std::size_t r = work.back();
    work.pop_back();
    if (next[r] == issues[r].size()) continue;
    const std::string& comm = comm_of(r, next[r]);
    const std::vector<int>& group = members.at(comm).world_rank;
    const bool all_there = std::all_of(group.begin(), group.end(), [&](int m) {
      const auto mu = static_cast<std::size_t>(m);
      return next[mu] < issues[mu].size() && comm_of(mu, next[mu]) == comm;
    });
    if (!all_there) continue;
    for (const int m : group) {
      ++next[static_cast<std::size_t>(m)];
      work.push_back(static_cast<std::size_t>(m));
    }
  }
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    if (next[r] == issues[r].size()) continue;
    throw InputError(
        fmt::format("{}: rank {} waits in its operation {} ({}) on communicator '{}' for ranks that wait "
                    "elsewhere first: the ranks issued their communicators' operations in orders that "
                    "cannot be replayed one after the other",
                    name, r, next[r], issue_signature(ranks[r], issues[r][next[r]]), comm_of(r, next[r])));
  }
}

}  // namespace

const TraceCommunicator* RankTrace::communicator(std::string_view hash) const {
  const auto found = index_.find(hash);
  return found == index_.end() ? nullptr : &communicators[found->second];
}

std::vector<TraceIssue> issues_of(const RankTrace& trace) {
  std::vector<TraceIssue> issues;
  for (std::size_t i = 0; i < trace.operations.size(); ++i) {
    const TraceOperation& op = trace.operations[i];
    if (op.point_to_point() && op.group >= 0 && !issues.empty() && issues.back().point_to_point) {
      const TraceOperation& first = trace.operations[issues.back().first];
      if (first.group == op.group && first.comm == op.comm) {
        ++issues.back().size;
        continue;
      }
    }
    issues.push_back({i, 1, op.point_to_point()});
  }
  return issues;
}

void RankTrace::add_communicator(TraceCommunicator communicator) {
  index_.emplace(communicator.hash, communicators.size());
  communicators.push_back(std::move(communicator));
}

RankTrace parse_rank_trace(std::string_view text, const std::string& name) {
  RankTrace trace;
  bool header = false;
  for_each_line(text, [&](std::string_view line, std::size_t number) {
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) return;
    const std::string where = fmt::format("{} line {}", name, number);
    const nlohmann::json object = parse_input_json(line, where, false);
    if (object.is_discarded() || !object.is_object())
      throw InputError(fmt::format("{}: not a JSON object (a truncated or damaged trace?)", where));
    if (header && object.contains("fabricbench_trace"))
      throw InputError(fmt::format("{}: a second trace header (two traces in one file?)", where));
    if (!header) {
      const JsonFields f(object, where);
      if (!object.contains("fabricbench_trace"))
        throw InputError(fmt::format("{}: not a fabricbench trace (its first line has no 'fabricbench_trace')", where));
      trace.version = static_cast<int>(f.whole("fabricbench_trace", 1, std::numeric_limits<int>::max(), 0, true));
      if (trace.version > kTraceVersion)
        throw InputError(fmt::format("{}: trace version {} is newer than this build reads ({}): update fabricbench",
                                     where, trace.version, kTraceVersion));
      trace.ranks = static_cast<int>(f.whole("ranks", 1, kMaxRanks, 0, true));
      trace.rank = static_cast<int>(f.whole("rank", 0, trace.ranks - 1, 0, true));
      trace.host = f.text("host", "");
      trace.clock = f.text("clock", "host");
      if (trace.clock != "gpu" && trace.clock != "host") f.fail("clock", "is neither \"gpu\" nor \"host\"");
      header = true;
      return;
    }
    if (const auto comm = object.find("comm"); comm != object.end() && comm->is_object()) {
      TraceCommunicator c = communicator_from(JsonFields(*comm, where), trace.ranks);
      if (trace.communicator(c.hash))
        throw InputError(fmt::format("{}: communicator '{}' is declared twice", where, c.hash));
      if (trace.communicators.size() == kMaxTraceCommunicators)
        throw InputError(fmt::format("{}: more than {} communicators on one rank", where, kMaxTraceCommunicators));
      trace.add_communicator(std::move(c));
    } else if (const auto op = object.find("op"); op != object.end() && op->is_object()) {
      if (trace.operations.size() == kMaxTraceOperations)
        throw InputError(fmt::format("{}: more than {} operations on one rank: record a step window instead", where,
                                     kMaxTraceOperations));
      trace.operations.push_back(operation_from(JsonFields(*op, where), trace));
    }  // other lines (a later version's additions) are skipped
  });
  if (!header) throw InputError(fmt::format("{}: empty: no trace header", name));
  check_groups(trace, name);
  return trace;
}

void check_traces(const std::vector<RankTrace>& ranks, const std::string& name) {
  if (ranks.empty()) throw InputError(fmt::format("{}: no trace.rank<R>.jsonl files", name));
  const int world = ranks.front().ranks;
  if (static_cast<int>(ranks.size()) != world)
    throw InputError(fmt::format("{}: {} rank file(s) for a world of {} ranks", name, ranks.size(), world));
  for (std::size_t r = 0; r < ranks.size(); ++r)
    if (ranks[r].rank != static_cast<int>(r) || ranks[r].ranks != world)
      throw InputError(fmt::format("{}: file {} says rank {} of {}, expected rank {} of {}", name, r, ranks[r].rank,
                                   ranks[r].ranks, r, world));
  // Each communicator: the world ranks holding each of its ranks, and their collectives in order.
  struct Members {
    int size = 0;
    std::vector<int> world_rank;
  };
  std::map<std::string, Members> members;
  for (const RankTrace& trace : ranks)
    for (const TraceCommunicator& c : trace.communicators) {
      Members& m = members[c.hash];
      if (m.world_rank.empty()) {
        m.size = c.size;
        m.world_rank.assign(static_cast<std::size_t>(c.size), -1);
      }
      if (c.size != m.size)
        throw InputError(fmt::format("{}: communicator '{}' has {} ranks on rank {}, {} on another", name, c.hash,
                                     c.size, trace.rank, m.size));
      int& holder = m.world_rank[static_cast<std::size_t>(c.rank)];
      if (holder >= 0)
        throw InputError(fmt::format("{}: communicator '{}': ranks {} and {} both say they are its rank {}", name,
                                     c.hash, holder, trace.rank, c.rank));
      holder = trace.rank;
    }
  for (const auto& [hash, m] : members) {
    const auto missing = std::find(m.world_rank.begin(), m.world_rank.end(), -1);
    if (missing != m.world_rank.end())
      throw InputError(fmt::format("{}: communicator '{}' of {} ranks: no rank's trace is its rank {}", name, hash,
                                   m.size, missing - m.world_rank.begin()));
  }
  // The same collectives in the same order on every member (what NCCL itself requires), and a
  // group of Send/Recv where one member has one: each communicator's rank 0 sets the order.
  std::vector<std::vector<TraceIssue>> issues(ranks.size());
  for (std::size_t r = 0; r < ranks.size(); ++r) issues[r] = issues_of(ranks[r]);
  // Per communicator, per issue: the world rank and issue of each member, in member order.
  std::map<std::string, std::vector<std::vector<const TraceIssue*>>> by_comm;
  for (const RankTrace& trace : ranks) {
    std::map<std::string, std::size_t> index;
    const std::size_t r = static_cast<std::size_t>(trace.rank);
    for (const TraceIssue& issue : issues[r]) {
      const TraceOperation& op = trace.operations[issue.first];
      const Members& m = members.at(op.comm);
      const int member = trace.communicator(op.comm)->rank;
      const std::size_t i = index[op.comm]++;
      auto& sequence = by_comm[op.comm];
      if (sequence.size() <= i) sequence.resize(i + 1, std::vector<const TraceIssue*>(m.world_rank.size(), nullptr));
      sequence[i][static_cast<std::size_t>(member)] = &issue;
    }
  }
  for (const auto& [hash, sequence] : by_comm) {
    const Members& m = members.at(hash);
    for (std::size_t i = 0; i < sequence.size(); ++i) {
      const auto& at = sequence[i];
      auto said = [&](std::size_t member) {
        return at[member] ? issue_signature(ranks[static_cast<std::size_t>(m.world_rank[member])], *at[member])
                          : std::string("nothing more");
      };
      for (std::size_t member = 0; member < at.size(); ++member)
        if (said(member) != said(0))
          throw InputError(
              fmt::format("{}: communicator '{}', operation {}: rank {} issues {}, its rank 0 (world rank {}) {}", name,
                          hash, i, m.world_rank[member], said(member), m.world_rank.front(), said(0)));
      if (at[0]->point_to_point) check_matched(ranks, m.world_rank, at, hash, i, name);
    }
  }
  check_issue_order(ranks, issues, members, name);
  // Nothing to replay: a run of it would have no rows, which no reader of runs takes.
  if (std::all_of(ranks.begin(), ranks.end(), [](const RankTrace& t) { return t.operations.empty(); }))
    throw InputError(fmt::format("{}: no rank issues any operation: nothing to replay", name));
}

// A rank file beyond the ranks read (trace.rank7.jsonl beside two), or one spelled otherwise
// (trace.rank01.jsonl, a .partial): a leftover of another trace, or a copy cut short.
void refuse_stray_rank_files(const std::string& folder, std::size_t ranks) {
  std::error_code ec;
  for (std::filesystem::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!name.starts_with("trace.rank")) continue;
    // Counted: the name load_trace reads for a rank it read (written back the same: no leading
    // zero, sign or suffix).
    std::size_t rank = 0;
    const bool number = std::from_chars(name.data() + 10, name.data() + name.size(), rank).ec == std::errc{};
    if (!number || rank >= ranks || name != fmt::format("trace.rank{}.jsonl", rank))
      throw InputError(
          fmt::format("{}: {} is not one of its {} rank files (trace.rank0.jsonl to trace.rank{}.jsonl): "
                      "a leftover of another trace, or a copy cut short?",
                      folder, one_line(name), ranks, ranks - 1));
  }
}

std::vector<RankTrace> load_trace(const std::string& folder) {
  std::error_code ec;
  if (!std::filesystem::is_directory(folder, ec))
    throw InputError(fmt::format("{}: not a folder of trace.rank<R>.jsonl files", folder));
  std::vector<RankTrace> ranks;
  for (int r = 0;; ++r) {
    const std::filesystem::path file = std::filesystem::path(folder) / fmt::format("trace.rank{}.jsonl", r);
    if (!std::filesystem::exists(file, ec)) {
      // A name that exists and cannot be followed (a symlink loop) is not a missing rank.
      if (ec && ec != std::errc::no_such_file_or_directory)
        throw InputError(fmt::format("{}: {}", file.string(), ec.message()));
      break;
    }
    if (r >= kMaxRanks) throw InputError(fmt::format("{}: more than {} rank files", folder, kMaxRanks));
    try {
      ranks.push_back(parse_rank_trace(read_input_file(file.string(), "trace", kMaxTraceFileBytes), file.string()));
    } catch (const InputError&) {
      throw;
    } catch (const UsageError& e) {  // not a regular file, too large, unreadable
      throw InputError(e.what());
    }
  }
  check_traces(ranks, folder);
  refuse_stray_rank_files(folder, ranks.size());
  return ranks;
}

std::string trace_text(const RankTrace& trace) {
  std::string out = json_text(nlohmann::json{{"fabricbench_trace", trace.version},
                                             {"rank", trace.rank},
                                             {"ranks", trace.ranks},
                                             {"host", trace.host},
                                             {"clock", trace.clock}}) +
                    "\n";
  for (const TraceCommunicator& c : trace.communicators)
    out += json_text(
               nlohmann::json{{"comm", {{"hash", c.hash}, {"size", c.size}, {"rank", c.rank}, {"nodes", c.nodes}}}}) +
           "\n";
  for (const TraceOperation& op : trace.operations) {
    nlohmann::json line{{"op",
                         {{"comm", op.comm},
                          {"function", op.function},
                          {"count", op.count},
                          {"type", name_of(op.dtype)},
                          {"root", op.root},
                          {"peer", op.peer},
                          {"reduction", op.reduction},
                          {"algorithm", op.algorithm},
                          {"protocol", op.protocol},
                          {"channels", op.channels},
                          {"start_us", op.start_us},
                          {"duration_us", op.duration_us},
                          {"gap_us", op.gap_us},
                          {"step", op.step}}}};
    if (op.group >= 0) line["op"]["group"] = op.group;
    if (!op.timed) line["op"]["timed"] = false;
    out += json_text(line) + "\n";
  }
  return out;
}

}  // namespace fabricbench::results
