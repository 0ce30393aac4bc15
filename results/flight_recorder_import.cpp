// SPDX-License-Identifier: Apache-2.0
#include "results/flight_recorder_import.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "common/dtype.hpp"
#include "common/error.hpp"
#include "common/fnv1a.hpp"
#include "common/input_file.hpp"
#include "common/json_input.hpp"
#include "common/step_inference.hpp"
#include "common/utf8.hpp"
#include "results/json_fields.hpp"

namespace fabricbench::results {
namespace {

// Ranks of a job: a process group's member list is checked against this.
constexpr int kMaxRanks = 1 << 20;
// A call's tensors (a coalesced call's list); more is not a call a replay makes.
constexpr std::size_t kMaxTensorsPerCall = 4096;
// A dump of more is refused before it is parsed: its JSON tree takes ~20x the file in memory. A
// dump of PyTorch's default ring (2,000 calls) is under a megabyte.
constexpr std::size_t kMaxDumpBytes = std::size_t{64} << 20;

// One Flight Recorder entry, as much of it as a replay needs.
struct Entry {
  std::string where;  // file and entry, for messages
  std::string group;  // the process group's name
  std::int64_t sequence = 0;
  bool point_to_point = false;
  std::string profiling_name;                  // "nccl:all_reduce", "nccl:send 0->1"
  std::string call;                            // "all_reduce", "send"
  std::vector<std::uint64_t> inputs, outputs;  // each tensor's elements
  DataType dtype = DataType::kFloat32;
  std::optional<double> duration_us;
  std::optional<double> created_ns;  // when the call was enqueued (host clock); absent: unknown
  int peer = -1;                     // send/recv: the other end's rank in the process group
};

struct Dump {
  std::string name;
  int rank = 0;
  std::map<std::string, std::vector<int>> groups;  // name -> global ranks, in group-rank order
  std::vector<Entry> entries;
};

// PyTorch's ScalarType names as the trace's element types.
DataType dtype_of(const std::string& scalar_type, const JsonFields& f) {
  static const std::map<std::string, DataType> kTypes = {{"Float", DataType::kFloat32},
                                                         {"Half", DataType::kFloat16},
                                                         {"BFloat16", DataType::kBfloat16},
                                                         {"Double", DataType::kFloat64},
                                                         {"Long", DataType::kInt64},
                                                         {"Int", DataType::kInt32},
                                                         {"Char", DataType::kInt8},
                                                         {"Byte", DataType::kUint8},
                                                         {"Bool", DataType::kUint8},
                                                         {"UInt32", DataType::kUint32},
                                                         {"UInt64", DataType::kUint64},
                                                         {"Float8_e4m3fn", DataType::kFloat8e4m3},
                                                         {"Float8_e5m2", DataType::kFloat8e5m2}};
  const auto found = kTypes.find(scalar_type);
  if (found == kTypes.end())
    f.fail("input_dtypes", fmt::format("holds '{}', an element type NCCL has no call for", scalar_type));
  return found->second;
}

// Each tensor's elements from a list of shapes ([[2048, 1024], [16]]).
std::vector<std::uint64_t> elements_of(const nlohmann::json& shapes, const char* key, const JsonFields& f) {
  std::vector<std::uint64_t> tensors;
  if (shapes.is_null()) return tensors;
  if (!shapes.is_array()) f.fail(key, "is not a list of shapes");
  if (shapes.size() > kMaxTensorsPerCall) f.fail(key, fmt::format("holds more than {} tensors", kMaxTensorsPerCall));
  for (const nlohmann::json& shape : shapes) {
    if (!shape.is_array()) f.fail(key, "holds a shape that is not a list");
    if (shape.size() > 64) f.fail(key, "holds a shape of more than 64 dimensions");
    std::uint64_t n = 1;
    for (const nlohmann::json& dim : shape) {
      if (!dim.is_number_integer() || dim.get<std::int64_t>() < 0)
        f.fail(key, "holds a dimension that is not a whole number");
      const auto d = dim.get<std::uint64_t>();
      if (d != 0 && n > kMaxTraceOperationBytes / d) f.fail(key, "holds a tensor of more than 16 Gi elements");
      n *= d;
    }
    tensors.push_back(n);
  }
  return tensors;
}

// A member list as PyTorch writes it: "[0, 1, 2]" (JSON dump) or a list.
std::vector<int> ranks_of(const nlohmann::json& value, const std::string& where) {
  std::vector<int> ranks;
  const auto add = [&](long long r) {
    if (r < 0 || r >= kMaxRanks) throw InputError(fmt::format("{}: rank {} outside 0..{}", where, r, kMaxRanks - 1));
    ranks.push_back(static_cast<int>(r));
  };
  if (value.is_array()) {
    for (const nlohmann::json& r : value) {
      if (!r.is_number_integer()) throw InputError(fmt::format("{}: 'ranks' holds something not a rank", where));
      add(r.get<long long>());
    }
  } else if (value.is_string()) {
    const std::string text = value.get<std::string>();
    std::size_t i = 0;
    while (i < text.size()) {
      if (!std::isdigit(static_cast<unsigned char>(text[i]))) {
        if (text[i] != '[' && text[i] != ']' && text[i] != ',' && text[i] != ' ')
          throw InputError(fmt::format("{}: 'ranks' is '{}', not a list of ranks", where, text));
        ++i;
        continue;
      }
      std::size_t end = i;
      while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end])) && end - i < 9) ++end;
      add(std::stoll(text.substr(i, end - i)));
      i = end;
    }
  } else {
    throw InputError(fmt::format("{}: 'ranks' is not a list of ranks", where));
  }
  std::set<int> unique(ranks.begin(), ranks.end());
  if (ranks.empty() || unique.size() != ranks.size())
    throw InputError(fmt::format("{}: 'ranks' is empty or names a rank twice", where));
  return ranks;
}

// "send 0->1" / "recv 1<-0": the call and the other end's rank in the process group (PyTorch
// names both ends by their group ranks).
void split_point_to_point(Entry& e) {
  const std::size_t space = e.call.find(' ');
  const std::string ends = space == std::string::npos ? "" : e.call.substr(space + 1);
  e.call.resize(std::min(space, e.call.size()));
  const std::size_t arrow = ends.find(e.call == "send" ? "->" : "<-");
  const std::string peer = arrow == std::string::npos ? "" : ends.substr(arrow + 2);
  if (peer.empty() || peer.size() > 7 || peer.find_first_not_of("0123456789") != std::string::npos)
    throw InputError(fmt::format("{}: '{}' names no peer rank", e.where, e.profiling_name));
  e.peer = std::stoi(peer);
}

Entry entry_from(const nlohmann::json& object, const std::string& where) {
  if (!object.is_object()) throw InputError(fmt::format("{}: not a JSON object", where));
  const JsonFields f(object, where);
  Entry e;
  e.where = where;
  const auto group = object.find("process_group");
  if (group != object.end() && group->is_array() && !group->empty() && (*group)[0].is_string())
    e.group = (*group)[0].get<std::string>();
  else
    e.group = std::to_string(f.whole("pg_id", 0, std::numeric_limits<std::int32_t>::max(), 0, true));
  e.point_to_point = f.flag("is_p2p", false);
  e.sequence = f.whole(e.point_to_point ? "p2p_seq_id" : "collective_seq_id", 0,
                       std::numeric_limits<std::int64_t>::max(), 0, true);
  e.profiling_name = one_line(f.text("profiling_name", "", true));  // it is printed in notes and errors
  const std::size_t colon = e.profiling_name.find(':');
  e.call = colon == std::string::npos ? e.profiling_name : e.profiling_name.substr(colon + 1);
  if (e.call == "send" || e.call == "recv" || e.call.starts_with("send ") || e.call.starts_with("recv "))
    split_point_to_point(e);
  static const nlohmann::json kNone;
  const auto member = [&object](const char* key) -> const nlohmann::json& {
    const auto found = object.find(key);
    return found == object.end() ? kNone : *found;
  };
  e.inputs = elements_of(member("input_sizes"), "input_sizes", f);
  e.outputs = elements_of(member("output_sizes"), "output_sizes", f);
  const nlohmann::json& types = member("input_dtypes");
  const nlohmann::json& named = types.is_array() && !types.empty() ? types : member("output_dtypes");
  if (named.is_array() && !named.empty()) {
    if (!named[0].is_string()) f.fail("input_dtypes", "holds something that is not a type's name");
    e.dtype = dtype_of(named[0].get<std::string>(), f);
  }
  const auto duration = object.find("duration_ms");
  if (duration != object.end() && !duration->is_null()) {
    if (!duration->is_number() || !std::isfinite(duration->get<double>()) || duration->get<double>() < 0 ||
        duration->get<double>() > 86400e3)
      f.fail("duration_ms", fmt::format("is {}: not a duration", duration->dump()));
    e.duration_us = duration->get<double>() * 1e3;
  }
  if (const std::int64_t created = f.whole("time_created_ns", -1, std::numeric_limits<std::int64_t>::max(), -1);
      created >= 0)
    e.created_ns = static_cast<double>(created);
  return e;
}

// The rank a dump's name gives: it holds "rank" and (less a .json) ends with the number PyTorch's
// writer appends; nullopt for any other name.
std::optional<int> rank_in_name(std::string name) {
  if (name.find("rank") == std::string::npos) return std::nullopt;
  if (name.ends_with(".json")) name.resize(name.size() - 5);
  std::size_t digits = name.size();
  while (digits > 0 && std::isdigit(static_cast<unsigned char>(name[digits - 1]))) --digits;
  if (digits == name.size() || name.size() - digits > 7) return std::nullopt;
  return std::stoi(name.substr(digits));
}

Dump dump_from(const NamedText& file) {
  Dump d;
  d.name = file.name;
  const std::optional<int> rank = rank_in_name(std::filesystem::path(file.name).filename().string());
  if (!rank)
    throw InputError(
        fmt::format("{}: its name does not end with the rank (fr.rank3.json, nccl_trace_rank_3)", file.name));
  d.rank = *rank;
  if (!file.text.empty() && static_cast<unsigned char>(file.text[0]) == 0x80)
    throw InputError(fmt::format("{}: a pickle; convert it first: scripts/flight-recorder-to-json.py", file.name));
  nlohmann::json document;
  try {
    document = parse_input_json(file.text, file.name);
  } catch (const nlohmann::json::exception&) {
    throw InputError(fmt::format("{}: not JSON (a truncated or damaged Flight Recorder dump?)", file.name));
  }
  if (!document.is_object() || !document.contains("entries") || !document.contains("pg_config"))
    throw InputError(fmt::format("{}: not a Flight Recorder dump (no 'entries' and 'pg_config')", file.name));
  // PyTorch 2.x writes "2.<minor>" (2.10 read here); another major version changed the format.
  if (const auto version = document.find("version");
      version != document.end() && !(version->is_string() && version->get<std::string>().starts_with("2.")))
    throw InputError(fmt::format("{}: Flight Recorder dump version {}: this build reads version 2 (2.10 tried)",
                                 file.name, one_line(version->dump())));
  const nlohmann::json& config = document["pg_config"];
  if (!config.is_object()) throw InputError(fmt::format("{}: 'pg_config' is not an object", file.name));
  for (const auto& [key, group] : config.items()) {
    const std::string where = fmt::format("{} pg_config '{}'", file.name, key);
    if (!group.is_object() || !group.contains("ranks")) throw InputError(fmt::format("{}: lacks 'ranks'", where));
    const std::string name = JsonFields(group, where).text("name", key);
    d.groups[name] = ranks_of(group["ranks"], where);
  }
  const nlohmann::json& entries = document["entries"];
  if (!entries.is_array()) throw InputError(fmt::format("{}: 'entries' is not a list", file.name));
  if (entries.size() > kMaxTraceOperations)
    throw InputError(fmt::format("{}: more than {} entries", file.name, kMaxTraceOperations));
  for (std::size_t i = 0; i < entries.size(); ++i) {
    Entry e = entry_from(entries[i], fmt::format("{} entry {}", file.name, i));
    if (!d.groups.contains(e.group))
      throw InputError(fmt::format("{}: process group '{}' is not in pg_config", e.where, e.group));
    d.entries.push_back(std::move(e));
  }
  return d;
}

// The trace's function of a Flight Recorder call; "" for calls imported otherwise or not at all.
std::string function_of(const std::string& call) {
  static const std::map<std::string, std::string> kFunctions = {{"all_reduce", "AllReduce"},
                                                                {"allreduce", "AllReduce"},
                                                                {"all_reduce_barrier", "AllReduce"},
                                                                {"barrier", "AllReduce"},
                                                                {"broadcast", "Broadcast"},
                                                                {"reduce", "Reduce"},
                                                                {"all_gather", "AllGather"},
                                                                {"_all_gather_base", "AllGather"},
                                                                {"all_gather_into_tensor", "AllGather"},
                                                                {"allgather", "AllGather"},
                                                                {"reduce_scatter", "ReduceScatter"},
                                                                {"_reduce_scatter_base", "ReduceScatter"},
                                                                {"reduce_scatter_tensor", "ReduceScatter"},
                                                                {"gather", "Gather"},
                                                                {"scatter", "Scatter"}};
  const auto found = kFunctions.find(call);
  return found == kFunctions.end() ? "" : found->second;
}

bool is_all_to_all(const std::string& call) {
  return call == "all_to_all" || call == "alltoall" || call == "alltoall_base" || call == "all_to_all_single";
}

std::uint64_t sum_of(const std::vector<std::uint64_t>& v) {
  std::uint64_t s = 0;
  for (const std::uint64_t x : v) s += x;
  return s;
}

// One all_to_all as every member recorded it (group rank order), with the totals of its split.
struct AllToAllCall {
  std::vector<const Entry*> members;
  bool lists = true;  // every member recorded one tensor per member: its own split
  std::uint64_t received_by_all = 0;
};

// The elements group rank `from` sends group rank `to`: the member's own split in the list form;
// else (all_to_all_single: the Flight Recorder keeps no split) in proportion to what each receiver
// took in, so every member sends exactly its recorded total and receives about its own, the last
// receiver taking what rounding leaves.
std::uint64_t all_to_all_part(const AllToAllCall& call, std::size_t from, std::size_t to) {
  const Entry& sender = *call.members[from];
  if (call.lists) return sender.inputs[to];
  const std::uint64_t sent = sum_of(sender.inputs);
  const auto share = [&](std::size_t q) -> std::uint64_t {
    if (call.received_by_all == 0) return sent / call.members.size();
    const long double part = static_cast<long double>(sent) *
                             static_cast<long double>(sum_of(call.members[q]->outputs)) /
                             static_cast<long double>(call.received_by_all);
    return std::min(sent, static_cast<std::uint64_t>(part));
  };
  if (to + 1 < call.members.size()) return share(to);
  std::uint64_t others = 0;
  for (std::size_t q = 0; q + 1 < call.members.size(); ++q) others += share(q);
  return sent - std::min(sent, others);
}

std::string hash_of(const std::string& group) {
  return fmt::format("{:016x}", Fnv1a().add("flight-recorder process group ").add(group).value());
}

// The two-rank communicator of group ranks `low` and `high` of `group`.
std::string pair_communicator(const std::string& group, int low, int high) {
  return fmt::format("{:016x}", Fnv1a()
                                    .add("flight-recorder pair ")
                                    .add(group)
                                    .add(static_cast<std::uint64_t>(low))
                                    .add(static_cast<std::uint64_t>(high))
                                    .value());
}

}  // namespace

std::vector<RankTrace> import_flight_recorder(const std::vector<NamedText>& files, SkippedCalls* skipped) {
  if (files.empty()) throw InputError("Flight Recorder: no dumps (one per rank)");
  std::vector<Dump> dumps;
  for (const NamedText& file : files) dumps.push_back(dump_from(file));
  std::sort(dumps.begin(), dumps.end(), [](const Dump& a, const Dump& b) { return a.rank < b.rank; });
  for (std::size_t i = 1; i < dumps.size(); ++i)
    if (dumps[i].rank == dumps[i - 1].rank)
      throw InputError(fmt::format("{} and {} are both rank {}: give each rank's dump once", dumps[i - 1].name,
                                   dumps[i].name, dumps[i].rank));
  const auto ranks = static_cast<int>(dumps.size());
  for (int r = 0; r < ranks; ++r)
    if (dumps[static_cast<std::size_t>(r)].rank != r)
      throw InputError(fmt::format("{}: rank {} where rank {} was expected: give every rank 0..{}'s dump once",
                                   dumps[static_cast<std::size_t>(r)].name, dumps[static_cast<std::size_t>(r)].rank, r,
                                   ranks - 1));
  for (const Dump& d : dumps)
    for (const auto& [name, members] : d.groups)
      for (const int m : members)
        if (m >= ranks)
          throw InputError(fmt::format("{}: process group '{}' names rank {}, but only {} dump(s) were given", d.name,
                                       name, m, ranks));

  // Each group's collectives every member's ring still holds: from the latest first call to the
  // earliest last one.
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> kept;                    // group -> sequence range
  std::map<std::pair<std::string, std::int64_t>, std::map<int, const Entry*>> by_call;  // (group, seq) -> rank's
  for (const Dump& d : dumps) {
    std::map<std::string, std::pair<std::int64_t, std::int64_t>> mine;
    for (const Entry& e : d.entries) {
      if (e.point_to_point) continue;
      auto [it, added] = mine.emplace(e.group, std::make_pair(e.sequence, e.sequence));
      it->second.first = std::min(it->second.first, e.sequence);
      it->second.second = std::max(it->second.second, e.sequence);
      by_call[{e.group, e.sequence}][d.rank] = &e;
    }
    for (const auto& [group, range] : mine) {
      auto [it, added] = kept.emplace(group, range);
      it->second = {std::max(it->second.first, range.first), std::min(it->second.second, range.second)};
    }
  }
  const auto held_by_all = [&](const Dump& d, const Entry& e) {
    if (e.point_to_point) return true;
    const auto& [first, last] = kept.at(e.group);
    if (e.sequence < first || e.sequence > last) return false;
    const std::map<int, const Entry*>& held = by_call.at({e.group, e.sequence});
    return std::all_of(d.groups.at(e.group).begin(), d.groups.at(e.group).end(),
                       [&](int m) { return held.contains(m); });
  };

  // Each lone Send/Recv's pair communicator: the ranks whose dumps hold a call of it, its two
  // ends, and its first call (for the line that says which end was lost).
  struct PairEnds {
    std::set<int> held;
    int low = 0, high = 0;
    std::string first;
  };
  std::map<std::string, PairEnds> pairs;
  std::vector<RankTrace> traces;
  for (const Dump& d : dumps) {
    RankTrace t;
    t.rank = d.rank;
    t.ranks = ranks;
    t.clock = "host";
    std::map<std::string, int> my_rank_in;  // group -> this rank's place in it
    for (const auto& [name, members] : d.groups) {
      const auto me = std::find(members.begin(), members.end(), d.rank);
      if (me == members.end()) continue;
      my_rank_in[name] = static_cast<int>(me - members.begin());
      t.add_communicator({hash_of(name), static_cast<int>(members.size()), my_rank_in[name], 0});
    }
    // Starts estimated from the host: a call starts once issued and once the one before ended.
    // The rank's clock starts at its earliest enqueue time among the calls kept.
    std::vector<const Entry*> calls;  // the entries every member holds
    for (const Entry& e : d.entries)
      if (held_by_all(d, e)) calls.push_back(&e);
    double origin_ns = std::numeric_limits<double>::infinity();
    for (const Entry* e : calls)
      if (e->created_ns) origin_ns = std::min(origin_ns, *e->created_ns);
    if (!std::isfinite(origin_ns)) origin_ns = 0;
    double previous_end_ns = origin_ns;
    std::int64_t next_group = 0;
    std::vector<std::uint64_t> signatures;
    std::vector<double> gaps_us;
    std::vector<std::size_t> calls_of;  // each call's operations
    for (const Entry* entry : calls) {
      const Entry& e = *entry;
      const auto in_group = my_rank_in.find(e.group);
      if (in_group == my_rank_in.end())
        throw InputError(fmt::format("{}: a call of process group '{}', which rank {} is not a member of", e.where,
                                     e.group, d.rank));
      const std::vector<int>& members = d.groups.at(e.group);
      const int size = static_cast<int>(members.size());
      TraceOperation base;
      base.comm = hash_of(e.group);
      base.dtype = e.dtype;
      base.timed = e.duration_us.has_value();
      base.duration_us = e.duration_us.value_or(0);
      // A call without its enqueue time starts where the one before it ended.
      const double start_ns = std::max(e.created_ns.value_or(previous_end_ns), previous_end_ns);
      base.start_us = (start_ns - origin_ns) * 1e-3;
      base.gap_us = (start_ns - previous_end_ns) * 1e-3;
      if (base.gap_us > 86400e6)  // the trace reader's own limit, said of the dump's field
        throw InputError(
            fmt::format("{}: 'time_created_ns' is more than a day after the call before it ended", e.where));
      previous_end_ns = start_ns + base.duration_us * 1e3;
      if (base.timed) t.clock = "gpu";

      std::vector<TraceOperation> ops;
      const std::string function = function_of(e.call);
      if (!function.empty()) {
        TraceOperation op = base;
        op.function = function;
        const bool receives = function == "ReduceScatter" || function == "Scatter";
        const std::vector<std::uint64_t>& tensors = receives ? e.outputs : e.inputs;
        op.count = tensors.empty() ? 0 : tensors.front();
        if (op.rooted()) op.root = 0;
        ops.push_back(op);
      } else if (is_all_to_all(e.call)) {
        const std::map<int, const Entry*>& members_calls = by_call.at({e.group, e.sequence});
        AllToAllCall call;
        std::uint64_t sent_by_all = 0;
        for (const int m : members) {
          const Entry* member = members_calls.at(m);
          call.members.push_back(member);
          call.lists = call.lists && member->inputs.size() == members.size();
          sent_by_all += sum_of(member->inputs);
          call.received_by_all += sum_of(member->outputs);
        }
        if (sent_by_all != call.received_by_all)
          throw InputError(
              fmt::format("{}: {} of process group '{}': its members sent {} elements in all and took in {}", e.where,
                          e.profiling_name, e.group, sent_by_all, call.received_by_all));
        const std::int64_t group = next_group++;
        const auto me = static_cast<std::size_t>(in_group->second);
        for (int q = 0; q < size; ++q) {
          const auto peer = static_cast<std::size_t>(q);
          const std::uint64_t sent = all_to_all_part(call, me, peer), received = all_to_all_part(call, peer, me);
          for (const auto& [function_name, count] : {std::pair{"Send", sent}, std::pair{"Recv", received}}) {
            if (count == 0) continue;
            TraceOperation op = base;
            op.function = function_name;
            op.count = count;
            op.peer = q;
            op.group = group;
            ops.push_back(op);
          }
        }
      } else if (e.call == "send" || e.call == "recv") {
        if (e.peer >= size)
          throw InputError(fmt::format("{}: '{}' names group rank {}, but its process group has {} rank(s)", e.where,
                                       e.profiling_name, e.peer, size));
        // PyTorch runs a lone send/recv on a communicator of its two ends (its key "low:high"),
        // not on the group's: so does the replay, and the group's other ranks take no part.
        const int me = in_group->second;
        if (e.peer == me)
          throw InputError(fmt::format("{}: '{}' sends to or receives from its own rank", e.where, e.profiling_name));
        const std::string pair = pair_communicator(e.group, std::min(me, e.peer), std::max(me, e.peer));
        if (!t.communicator(pair)) t.add_communicator({pair, 2, me < e.peer ? 0 : 1, 0});
        PairEnds& ends = pairs[pair];
        if (ends.held.empty()) {
          ends.low = members[static_cast<std::size_t>(std::min(me, e.peer))];
          ends.high = members[static_cast<std::size_t>(std::max(me, e.peer))];
          ends.first = fmt::format("{}: '{}'", e.where, e.profiling_name);
        }
        ends.held.insert(d.rank);
        TraceOperation op = base;
        op.comm = pair;
        op.function = e.call == "send" ? "Send" : "Recv";
        op.count = e.inputs.empty() ? 0 : e.inputs.front();
        op.peer = me < e.peer ? 1 : 0;
        ops.push_back(op);
      } else {
        if (skipped) ++(*skipped)[e.profiling_name.substr(0, e.profiling_name.find(' '))];
        continue;
      }
      // One signature per call (a group of Send/Recv is one), for the steps found below.
      Fnv1a signature;
      signature.add(e.group).add(e.profiling_name.substr(0, e.profiling_name.find(' ')));
      for (const TraceOperation& op : ops) signature.add(op.count).add(static_cast<std::uint64_t>(op.peer + 1));
      signatures.push_back(signature.value());
      gaps_us.push_back(base.gap_us);
      calls_of.push_back(ops.size());
      for (TraceOperation& op : ops) t.operations.push_back(std::move(op));
    }
    // Steps as the recorder finds them: the repeating pattern of calls, phased at its long pause.
    const std::vector<std::int64_t> steps = infer_steps(signatures, gaps_us);
    std::size_t op_index = 0;
    for (std::size_t call = 0; call < calls_of.size(); ++call)
      for (std::size_t k = 0; k < calls_of[call]; ++k) t.operations[op_index++].step = steps[call];
    // Read back by the trace reader: every check a recorded trace gets.
    traces.push_back(parse_rank_trace(trace_text(t), d.name));
  }
  // A ring that wrapped keeps one end of a Send/Recv and not the other: said as such, before the
  // trace's own check names the pair's communicator, which the user never saw.
  for (const auto& [pair, ends] : pairs)
    if (ends.held.size() < 2)
      throw InputError(fmt::format(
          "{} has no matching call in rank {}'s dump: that recording lost its end (a ring that wrapped: raise "
          "TORCH_NCCL_TRACE_BUFFER_SIZE)",
          ends.first, ends.held.count(ends.low) ? ends.high : ends.low));
  check_traces(traces, "Flight Recorder dumps");
  return traces;
}

bool flight_recorder_name(const std::string& name) { return rank_in_name(name) && !name.ends_with(".pkl"); }

std::vector<NamedText> flight_recorder_files(const std::string& folder) {
  // The folder held no Inspector file either (fb_import looks for those first): both are named.
  return dump_files(folder, "Flight Recorder dumps (named with their rank: fr.rank0.json) or NCCL Inspector files",
                    flight_recorder_name, kMaxDumpBytes);
}

}  // namespace fabricbench::results
