// SPDX-License-Identifier: Apache-2.0
#include "results/trace_import.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>

#include "common/error.hpp"
#include "common/input_file.hpp"
#include "common/json_input.hpp"
#include "common/output_file.hpp"
#include "common/utf8.hpp"
#include "results/json_fields.hpp"

namespace fabricbench::results {
namespace {

// Inspector's names only (<host>-pid<digits>.log): NCCL's own debug log may sit beside them.
bool inspector_name(const std::string& name) {
  const std::size_t pid = name.rfind("-pid");
  if (pid == std::string::npos || !name.ends_with(".log")) return false;
  const std::string digits = name.substr(pid + 4, name.size() - pid - 8);
  return !digits.empty() && digits.find_first_not_of("0123456789") == std::string::npos;
}

// One completed operation as Inspector wrote it.
struct InspectorRecord {
  std::string comm;  // the hash, without "0x"
  int comm_rank = 0, comm_size = 0, nodes = 0;
  bool point_to_point = false;
  std::string function;
  std::uint64_t sequence = 0;
  std::uint64_t bytes = 0;
  int peer = -1;
  double exec_us = 0;
  bool gpu_timed = false;
  std::optional<double> start_us;  // only in verbose output (event_trace_ts)
  std::string host;
};

// When the call was issued, from verbose output: the call's own start (host side, in issue
// order), else its first kernel channel's start. Stamps of 0 (a channel that never reported) do
// not count.
std::optional<double> start_of(const nlohmann::json& perf, const char* start_key) {
  const auto trace = perf.find("event_trace_ts");
  if (trace == perf.end() || !trace->is_object()) return std::nullopt;
  if (const auto call = trace->find(start_key); call != trace->end() && call->is_number() && call->get<double>() > 0)
    return call->get<double>();
  std::optional<double> start;
  if (const auto kernels = trace->find("kernel_events"); kernels != trace->end() && kernels->is_array())
    for (const nlohmann::json& k : *kernels)
      if (k.is_object() && k.contains("kernel_start_ts") && k["kernel_start_ts"].is_number() &&
          k["kernel_start_ts"].get<double>() > 0)
        start = std::min(start.value_or(std::numeric_limits<double>::infinity()), k["kernel_start_ts"].get<double>());
  return start;
}

std::optional<InspectorRecord> record_from(const nlohmann::json& object, const std::string& where) {
  if (!object.is_object()) throw InputError(fmt::format("{}: not a JSON object", where));
  const auto header = object.find("header");
  const auto coll = object.find("coll_perf");
  const auto p2p = object.find("p2p_perf");
  const bool is_coll = coll != object.end() && coll->is_object();
  const bool is_p2p = p2p != object.end() && p2p->is_object();
  if (!is_coll && !is_p2p) return std::nullopt;  // another kind of record (a later version's)
  if (header == object.end() || !header->is_object())
    throw InputError(fmt::format("{}: an operation without its 'header' (communicator)", where));
  InspectorRecord r;
  const JsonFields h(*header, where);
  r.comm = h.text("id", "", true);
  if (r.comm.starts_with("0x")) r.comm.erase(0, 2);
  r.comm_size = static_cast<int>(h.whole("n_ranks", 1, 1 << 20, 0, true));
  r.comm_rank = static_cast<int>(h.whole("rank", 0, r.comm_size - 1, 0, true));
  r.nodes = static_cast<int>(h.whole("nnodes", 0, r.comm_size, 0));
  if (const auto meta = object.find("metadata"); meta != object.end() && meta->is_object())
    r.host = JsonFields(*meta, where).text("hostname", "");
  const nlohmann::json& perf_object = is_coll ? *coll : *p2p;
  const JsonFields perf(perf_object, where);
  const std::string prefix = is_coll ? "coll" : "p2p";
  const auto key = [&prefix](const char* suffix) { return prefix + suffix; };
  r.point_to_point = is_p2p;
  r.function = perf.text(prefix.c_str(), "", true);
  r.sequence =
      static_cast<std::uint64_t>(perf.whole(key("_sn").c_str(), 0, std::numeric_limits<std::int64_t>::max(), 0, true));
  r.bytes = static_cast<std::uint64_t>(
      perf.whole(key("_msg_size_bytes").c_str(), 0, static_cast<std::int64_t>(kMaxTraceOperationBytes), 0, true));
  r.exec_us = static_cast<double>(
      perf.whole(key("_exec_time_us").c_str(), 0, std::numeric_limits<std::int32_t>::max(), 0, true));
  if (is_p2p) r.peer = static_cast<int>(perf.whole("p2p_peer", 0, r.comm_size - 1, 0, true));
  const auto source = perf_object.find(key("_timing_source"));
  r.gpu_timed = source != perf_object.end() && source->is_string() && source->get<std::string>() == "kernel_gpu";
  r.start_us = start_of(perf_object, is_coll ? "coll_start_ts" : "p2p_start_ts");
  return r;
}

// Every record of one process's file, each operation once (a periodic dump may repeat one).
std::vector<InspectorRecord> records_of(const NamedText& file) {
  std::vector<InspectorRecord> records;
  // Each operation's size and time by its communicator, kind, call and sequence number.
  std::map<std::tuple<std::string, bool, std::string, std::uint64_t>, std::pair<std::uint64_t, double>> seen;
  std::string_view rest = file.text;
  for (std::size_t number = 1;; ++number) {
    rest.remove_prefix(std::min(rest.size(), rest.find_first_not_of(" \t\r\n")));
    if (rest.empty()) break;
    const std::string where = fmt::format("{} object {}", file.name, number);
    const std::size_t end = json_value_end(rest);
    if (end == std::string_view::npos)
      throw InputError(fmt::format("{}: not JSON (a truncated or damaged Inspector file?)", where));
    nlohmann::json object;
    try {
      object = parse_json_input(rest.substr(0, end), where);  // a key given twice: which value is meant?
    } catch (const UsageError& e) {
      throw InputError(e.what());
    } catch (const nlohmann::json::exception&) {
      throw InputError(fmt::format("{}: not JSON (a truncated or damaged Inspector file?)", where));
    }
    rest.remove_prefix(end);
    std::optional<InspectorRecord> r = record_from(object, where);
    if (!r) continue;
    const auto [first, fresh] =
        seen.try_emplace({r->comm, r->point_to_point, r->function, r->sequence}, std::pair{r->bytes, r->exec_us});
    if (!fresh) {
      // The same figures again: a periodic dump. Others: two operations under one number.
      if (first->second != std::pair{r->bytes, r->exec_us})
        throw InputError(
            fmt::format("{}: {} number {} of communicator {} is there already with other figures: two "
                        "runs' output in one file?",
                        where, r->function, r->sequence, r->comm));
      continue;
    }
    if (records.size() == kMaxTraceOperations)
      throw InputError(
          fmt::format("{}: more than {} operations in one process's file", file.name, kMaxTraceOperations));
    records.push_back(std::move(*r));
  }
  // In the order they were issued: by their starts where every record has one (verbose output);
  // else as written, which is each communicator's completion order, and no times but durations.
  if (std::all_of(records.begin(), records.end(), [](const auto& r) { return r.start_us.has_value(); }))
    std::stable_sort(records.begin(), records.end(),
                     [](const InspectorRecord& a, const InspectorRecord& b) { return *a.start_us < *b.start_us; });
  else
    for (InspectorRecord& r : records) r.start_us.reset();
  return records;
}

// One process's trace as the format's text, read back by the trace reader (all its checks).
RankTrace rank_trace(const std::vector<InspectorRecord>& records, int rank, int ranks, const std::string& name) {
  std::string host;
  bool gpu = !records.empty();
  for (const InspectorRecord& r : records) {
    gpu = gpu && r.gpu_timed;
    if (host.empty()) host = r.host;
  }
  std::string out = json_text(nlohmann::json{{"fabricbench_trace", kTraceVersion},
                                             {"rank", rank},
                                             {"ranks", ranks},
                                             {"host", host},
                                             {"clock", gpu ? "gpu" : "host"},
                                             {"imported_from", "NCCL Inspector"}}) +
                    "\n";
  std::set<std::string> declared;
  for (const InspectorRecord& r : records)
    if (declared.insert(r.comm).second)
      out += json_text(nlohmann::json{
                 {"comm", {{"hash", r.comm}, {"size", r.comm_size}, {"rank", r.comm_rank}, {"nodes", r.nodes}}}}) +
             "\n";
  const double origin = records.empty() || !records.front().start_us ? 0 : *records.front().start_us;
  for (std::size_t i = 0; i < records.size(); ++i) {
    const InspectorRecord& r = records[i];
    double gap = 0;
    if (r.start_us && i > 0 && records[i - 1].start_us)
      gap = std::max(0.0, *r.start_us - *records[i - 1].start_us - records[i - 1].exec_us);
    out += json_text(
               nlohmann::json{{"op",
                               {{"comm", r.comm},
                                {"function", r.function},
                                {"count", r.bytes},
                                {"type", "int8"},
                                {"root", rooted_function(r.function) ? 0 : -1},  // Inspector does not record the root
                                {"peer", r.peer},
                                {"start_us", r.start_us ? *r.start_us - origin : 0.0},
                                {"duration_us", r.exec_us},
                                {"gap_us", gap},
                                {"step", -1}}}}) +
           "\n";
  }
  return parse_rank_trace(out, name);
}

}  // namespace

std::vector<RankTrace> import_inspector(const std::vector<NamedText>& files) {
  if (files.empty()) throw InputError("Inspector output: no files (one <host>-pid<P>.log per process)");
  std::vector<std::vector<InspectorRecord>> processes;
  for (const NamedText& file : files) processes.push_back(records_of(file));
  const auto ranks = static_cast<int>(processes.size());
  // World ranks: the communicator every process is a member of, of the world's size.
  std::map<std::string, std::vector<int>> rank_in;  // communicator -> each process's rank in it
  for (std::size_t p = 0; p < processes.size(); ++p)
    for (const InspectorRecord& r : processes[p]) {
      std::vector<int>& members = rank_in[r.comm];
      members.resize(processes.size(), -1);
      members[p] = r.comm_rank;
    }
  std::vector<int> world(processes.size());
  for (std::size_t p = 0; p < world.size(); ++p) world[p] = static_cast<int>(p);
  for (const auto& [comm, members] : rank_in) {
    std::vector<int> sorted = members;
    std::sort(sorted.begin(), sorted.end());
    bool spans = true;
    for (std::size_t p = 0; p < sorted.size(); ++p) spans = spans && sorted[p] == static_cast<int>(p);
    if (spans) {
      world = members;
      break;
    }
  }
  std::vector<RankTrace> traces(processes.size());
  for (std::size_t p = 0; p < processes.size(); ++p) {
    const auto rank = static_cast<std::size_t>(world[p]);
    traces[rank] = rank_trace(processes[p], world[p], ranks, files[p].name);
  }
  check_traces(traces, "Inspector output");
  return traces;
}

bool holds_named(const std::string& folder, const std::function<bool(const std::string&)>& wanted) {
  std::error_code ec;
  for (std::filesystem::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec))
    if (wanted(it->path().filename().string())) return true;
  return false;
}

bool holds_inspector_files(const std::string& folder) { return holds_named(folder, inspector_name); }

std::vector<NamedText> dump_files(const std::string& folder, const std::string& what,
                                  const std::function<bool(const std::string&)>& wanted, std::size_t max_bytes) {
  std::error_code ec;
  if (!std::filesystem::is_directory(folder, ec)) throw InputError(fmt::format("{}: not a folder of {}", folder, what));
  std::vector<std::string> names;
  std::filesystem::directory_iterator it(folder, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    std::error_code kind;  // anything named like a dump but a folder is read, and refused unless regular
    if (wanted(it->path().filename().string()) && !it->is_directory(kind)) names.push_back(it->path().string());
  }
  if (ec) throw InputError(fmt::format("{}: cannot list it ({})", folder, ec.message()));
  if (names.empty()) throw InputError(fmt::format("{}: no {} in it", folder, what));
  if (names.size() > (std::size_t{1} << 16)) throw InputError(fmt::format("{}: more than 65536 files", folder));
  std::sort(names.begin(), names.end());
  std::vector<NamedText> files;
  for (const std::string& name : names) {
    try {
      files.push_back({name, read_input_file(name, what, max_bytes)});
    } catch (const InputError&) {
      throw;
    } catch (const UsageError& e) {
      throw InputError(e.what());
    }
  }
  return files;
}

std::vector<NamedText> inspector_files(const std::string& folder) {
  return dump_files(folder, "NCCL Inspector files (<host>-pid<P>.log)", inspector_name);
}

void write_trace(const std::vector<RankTrace>& ranks, const std::string& folder) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(folder, ec) && !fs::is_directory(folder, ec))
    throw UsageError(fmt::format("--trace {}: not a folder", folder));
  if (fs::is_directory(folder, ec))
    for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec))
      if (it->path().filename().string().starts_with("trace.rank"))
        throw UsageError(fmt::format("--trace {}: already holds a trace ({}); give a new or empty folder", folder,
                                     it->path().filename().string()));
  fs::create_directories(folder, ec);
  if (ec) throw UsageError(fmt::format("--trace {}: cannot make it ({})", folder, ec.message()));
  for (const RankTrace& rank : ranks) {
    OutputFile file((fs::path(folder) / fmt::format("trace.rank{}.jsonl", rank.rank)).string(), Unfinished::kRemove);
    file.append(trace_text(rank));
    file.commit();
  }
}

}  // namespace fabricbench::results
