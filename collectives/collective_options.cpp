// SPDX-License-Identifier: Apache-2.0
#include "collectives/collective_options.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>

#include "common/cli.hpp"
#include "common/error.hpp"
#include "common/numbers.hpp"

namespace fabricbench::collectives {
namespace {

FaultInjection parse_fault(const std::string& text) {
  // "wrong:RANK" or "hang:RANK"
  const auto colon = text.find(':');
  const std::string kind = text.substr(0, colon);
  FaultInjection fault;
  if (kind == "wrong") {
    fault.kind = FaultInjection::Kind::kWrongElement;
  } else if (kind == "hang") {
    fault.kind = FaultInjection::Kind::kHang;
  } else if (kind == "error") {
    fault.kind = FaultInjection::Kind::kError;
  } else {
    throw UsageError(fmt::format("--inject-fault: unknown fault '{}'; valid: wrong:RANK, hang:RANK, error:RANK", text));
  }
  if (colon != std::string::npos) {
    const std::string rank = text.substr(colon + 1);
    auto [end, ec] = std::from_chars(rank.data(), rank.data() + rank.size(), fault.rank);
    if (ec != std::errc() || end != rank.data() + rank.size() || fault.rank < 0)
      throw UsageError(fmt::format("--inject-fault: '{}' is not a rank number", rank));
  }
  return fault;
}

std::vector<CallForm> parse_call_forms(const std::string& text) {
  std::vector<CallForm> forms;
  for (const std::string& name : parse_name_list(text, {"native", "p2p"}, "--nccl-call"))
    forms.push_back(name == "native" ? CallForm::kLibrary : CallForm::kPointToPoint);
  return forms;
}

CacheMode parse_cache_mode(const std::string& text) {
  if (text == "cold") return CacheMode::kCold;
  if (text == "warm") return CacheMode::kWarm;
  throw UsageError(fmt::format("--cache: '{}' is not cold or warm", text));
}

void check_sweep(const CollectiveOptions& o, bool step_given) {
  if (o.factor_given && step_given)
    throw UsageError("-f/--stepfactor and -i/--stepbytes both given: choose a geometric or an arithmetic sweep");
  if (o.sweep.min_bytes > o.sweep.max_bytes)
    throw UsageError(
        fmt::format("-b/--minbytes ({} B) is larger than -e/--maxbytes ({} B)", o.sweep.min_bytes, o.sweep.max_bytes));
  if (!step_given && !(o.sweep.factor > 1.0))
    throw UsageError(fmt::format("-f/--stepfactor must be greater than 1 (got {:g})", o.sweep.factor));
}

void check_timing(const CollectiveOptions& o) {
  // -n, -w and -c are bounded where they are parsed (number_in).
  if (o.max_noise_percent) {
    if (!(*o.max_noise_percent > 0))
      throw UsageError(fmt::format("--max-noise must be a positive percentage (got {:g})", *o.max_noise_percent));
    if (o.iterations_given)
      throw UsageError("-n/--iters and --max-noise both given: adaptive mode chooses the iteration count");
    if (o.host_timer)
      throw UsageError(
          "--timer host and --max-noise both given: the host timer takes nccl-tests' one window of -n "
          "calls a size, which has no adaptive mode");
  } else if (o.min_time_given || o.max_time_given) {
    throw UsageError("--min-time/--max-time need --max-noise (they bound adaptive mode)");
  }
  if (o.host_timer && o.graph_iterations > 0)
    throw UsageError("--timer host and -G both given: nccl-tests' window of -n calls is timed from plain launches");
  if (!(o.min_time_seconds >= 0)) throw UsageError("--min-time must be 0 or more seconds");
  if (!(o.max_time_seconds > 0)) throw UsageError("--max-time must be a positive number of seconds");
  if (o.min_time_seconds > o.max_time_seconds)
    throw UsageError(
        fmt::format("--min-time ({:g} s) is longer than --max-time ({:g} s)", o.min_time_seconds, o.max_time_seconds));
}

}  // namespace

const std::vector<std::string>& nccl_algorithms() {
  static const std::vector<std::string> names{"Ring",     "Tree", "CollnetDirect", "CollnetChain", "NVLS",
                                              "NVLSTree", "PAT"};
  return names;
}

const std::vector<std::string>& nccl_protocols() {
  static const std::vector<std::string> names{"LL", "LL128", "Simple"};
  return names;
}

std::vector<std::string> parse_name_list(const std::string& text, const std::vector<std::string>& known,
                                         const std::string& flag) {
  if (text == "all") return known;
  std::vector<std::string> names;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string name = text.substr(start, comma - start);
    const auto match = std::find_if(known.begin(), known.end(), [&](const std::string& k) {
      return k.size() == name.size() && std::equal(k.begin(), k.end(), name.begin(), [](char a, char b) {
               return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
             });
    });
    if (match == known.end()) {
      std::string valid;
      for (const std::string& k : known) valid += (valid.empty() ? "" : ", ") + k;
      throw UsageError(fmt::format("{}: unknown name '{}'; valid: {}, or all", flag, name, valid));
    }
    if (std::find(names.begin(), names.end(), *match) == names.end()) names.push_back(*match);
    start = comma + 1;
  }
  return names;
}

namespace {

// What the command line gave before it is resolved into CollectiveOptions: texts, and the options
// whose being given at all matters (defaults differ per backend and collective).
struct CollectiveFlags {
  std::string min_text = "8", max_text = "64M", step_text, reduction_text = "max", fault_text;
  std::string algo_text, proto_text, path_text = "on", calls_text, cache_text, timer_text;
  CLI::Option *factor = nullptr, *step = nullptr, *iters = nullptr, *op = nullptr, *root = nullptr, *min_time = nullptr,
              *max_time = nullptr, *gpus = nullptr, *gpu_offset = nullptr;
};

// nccl-tests' flags: sizes, iterations, checks, types, ops, root, how rank times fold.
void add_sweep_flags(CLI::App& app, CollectiveOptions& o, CollectiveFlags& f) {
  app.add_option("-b,--minbytes", f.min_text, "smallest size, K/M/G suffixes (binary) [8]");
  app.add_option("-e,--maxbytes", f.max_text, "largest size [64M]");
  f.factor = app.add_option("-f,--stepfactor", o.sweep.factor, "multiply the size by this factor (> 1) [2]")
                 ->transform(number_in(NumberRange::between(1, 1e6)));
  f.step = app.add_option("-i,--stepbytes", f.step_text, "add this many bytes instead of multiplying");
  f.iters = app.add_option(
                   "-n,--iters", o.iterations,
                   "timed samples per size; a sample batches calls shorter than the clock can time (--timer host: the "
                   "calls of nccl-tests' one window) [20]")
                ->transform(number_in(NumberRange::between(1, 1e9)));  // a burn-in runs for hours
  app.add_option("-w,--warmup_iters,--warmup", o.warmup_iterations, "untimed iterations per size [5]")
      ->transform(number_in(NumberRange::between(0, 1e6)));
  app.add_option("-c,--check", o.check, "check results: 1 on (default), 0 off")
      ->transform(number_in(NumberRange::between(0, 1)));
  f.op = app.add_option("-o,--op", o.ops_text, "reduction: sum, prod, min, max, avg, all [sum]");
  app.add_option(
      "-d,--datatype", o.dtypes_text,
      "element type: int8 uint8 int32 uint32 int64 uint64 half bfloat16 float double f8e4m3 f8e5m2, all [float]");
  f.root = app.add_option("-r,--root", o.root, "root rank of broadcast and reduce [0]");
  app.add_option("-a,--average", f.reduction_text,
                 "how per-rank times fold into one: max|3 (default: the slowest rank), avg|1 (nccl-tests' default), "
                 "min|2, rank0|0");
}

// The backend, adaptive sampling, the bandwidth gate and fault injection.
void add_run_flags(CLI::App& app, CollectiveOptions& o, CollectiveFlags& f) {
  app.add_option("--backend", o.backend,
                 "mpi (host memory), nccl (GPU memory), gloo (host memory, Gloo's algorithms over TCP, as "
                 "PyTorch's CPU backend), auto [auto: nccl where GPUs and NCCL are present, else mpi]");
  app.add_option("--max-noise", o.max_noise_percent,
                 "adaptive mode: sample until the median's relative standard error (from the MAD) is below this %")
      ->transform(number_in(NumberRange::between(0, 100)));
  f.min_time =
      app.add_option("--min-time", o.min_time_seconds, "adaptive mode: measure each size at least this long [0]")
          ->transform(number_in(NumberRange::between(0, 3600)));
  f.max_time =
      app.add_option("--max-time", o.max_time_seconds, "adaptive mode: give up on the noise bound after this long [1]")
          ->transform(number_in(NumberRange::between(0, 3600)));
  app.add_option("--expect-busbw", o.expect_busbw_gbs,
                 "fail the run (exit 1) when a curve's plateau busbw (sizes from 90 % of its peak up; each cell "
                 "with --pairs) is below this many GB/s, as NCCL_TESTS_MIN_BW")
      ->transform(number_in(NumberRange::greater_than(0)));
  app.add_option("--inject-fault", f.fault_text,
                 "testing: wrong:RANK corrupts one element, hang:RANK stops that rank taking part, error:RANK "
                 "makes that rank's library fail at the second row");
}

// What only the NCCL backend takes: GPUs per process, graphs, tunings, the path, the call form,
// buffer windows and the timer.
void add_nccl_flags(CLI::App& app, CollectiveOptions& o, CollectiveFlags& f) {
  app.add_option("-G,--cudagraph", o.graph_iterations,
                 "NCCL: capture this many calls in a CUDA graph and time its replays (launch cost out) [0: off]");
  f.gpus = app.add_option("-g,--ngpus", o.gpus_per_process,
                          "NCCL: GPUs driven by each process (one rank per GPU, as nccl-tests' -g) [1]");
  f.gpu_offset =
      app.add_option("--gpu-offset", o.gpu_offset, "NCCL: use GPU (local rank + offset) instead of GPU (local rank)");
  app.add_option("--algo", f.algo_text, "NCCL: sweep NCCL_ALGO over these (Ring,Tree,...|all), one communicator each");
  app.add_option("--proto", f.proto_text, "NCCL: sweep NCCL_PROTO over these (LL,LL128,Simple|all)");
  app.add_option("--nccl-logs", o.nccl_log_dir, "NCCL: folder for each rank's INFO log [beside --json]");
  app.add_option("--path", f.path_text, "NCCL: observe algorithm/protocol/transport: on, off [on]");
  app.add_option("--timer", f.timer_text,
                 "NCCL: events (CUDA events between back-to-back samples) or host (nccl-tests' loop: one window a "
                 "size of -n calls from an idle GPU, the host clock through the sync after the last) [events]");
  app.add_option("--nccl-call", f.calls_text,
                 "NCCL: native (ncclAlltoAll, ncclGather, ncclScatter on NCCL 2.28+), p2p (grouped ncclSend/ncclRecv) "
                 "or native,p2p (one sweep each) [native where the library has it]");
  app.add_option("--cache", f.cache_text,
                 "cold: each timed call uses the next window of buffers sized for -e (nccl-tests), warm: every call "
                 "reuses one (OSU) [cold on nccl, warm on mpi]");
}

void resolve_run_flags(CollectiveOptions& o, const CollectiveFlags& f) {
  o.sweep.min_bytes = parse_bytes(f.min_text, "-b/--minbytes");
  o.sweep.max_bytes = parse_bytes(f.max_text, "-e/--maxbytes");
  if (!f.step_text.empty()) o.sweep.step_bytes = parse_bytes(f.step_text, "-i/--stepbytes");
  o.factor_given = f.factor->count() > 0;
  o.iterations_given = f.iters->count() > 0;
  o.op_given = f.op->count() > 0;
  o.root_given = f.root->count() > 0;
  o.min_time_given = f.min_time->count() > 0;
  o.max_time_given = f.max_time->count() > 0;
  o.gpu_offset_given = f.gpu_offset->count() > 0;
  o.gpus_given = f.gpus->count() > 0;
  if (o.gpus_per_process < 1)
    throw UsageError(fmt::format("-g/--ngpus must be at least 1 (got {})", o.gpus_per_process));
  if (o.graph_iterations < 0)
    throw UsageError(fmt::format("-G/--cudagraph must be 0 or more (got {})", o.graph_iterations));
  if (o.expect_busbw_gbs && !(*o.expect_busbw_gbs > 0))
    throw UsageError(fmt::format("--expect-busbw {:g}: a bandwidth in GB/s above 0", *o.expect_busbw_gbs));
  if (o.gpu_offset < 0) throw UsageError(fmt::format("--gpu-offset must be 0 or more (got {})", o.gpu_offset));
  o.rank_reduction = parse_rank_reduction(f.reduction_text, "-a/--average");
  if (!f.fault_text.empty()) o.fault = parse_fault(f.fault_text);
  if (o.backend != "auto" && o.backend != "mpi" && o.backend != "nccl" && o.backend != "gloo")
    throw UsageError(fmt::format("--backend: unknown backend '{}'; valid: mpi, nccl, gloo, auto", o.backend));
}

void resolve_nccl_flags(CollectiveOptions& o, const CollectiveFlags& f) {
  if (!f.algo_text.empty()) o.algorithms = parse_name_list(f.algo_text, nccl_algorithms(), "--algo");
  if (!f.proto_text.empty()) o.protocols = parse_name_list(f.proto_text, nccl_protocols(), "--proto");
  if (f.path_text != "on" && f.path_text != "off")
    throw UsageError(fmt::format("--path: '{}' is not on or off", f.path_text));
  o.observe_path = f.path_text == "on";
  if (!f.calls_text.empty()) o.nccl_calls = parse_call_forms(f.calls_text);
  if (!f.cache_text.empty()) o.cache = parse_cache_mode(f.cache_text);
  if (!f.timer_text.empty()) {
    if (f.timer_text != "events" && f.timer_text != "host")
      throw UsageError(fmt::format("--timer: '{}' is not events or host", f.timer_text));
    o.timer_given = true;
    o.host_timer = f.timer_text == "host";
  }
}

}  // namespace

std::string describe_sampling(const CollectiveOptions& o) {
  if (o.max_noise_percent) return fmt::format("adaptive to {:g}% noise", *o.max_noise_percent);
  if (o.host_timer) return fmt::format("one window of {} calls a size, nccl-tests' loop", o.iterations);
  return fmt::format("{} samples", o.iterations);
}

ParsedCommandLine parse_collective_options(const std::string& program, int argc, const char* const* argv,
                                           bool check_paths) {
  ParsedCommandLine parsed;
  CollectiveOptions& o = parsed.options;
  CLI::App app(fmt::format("{}: measure a collective across MPI ranks (sizes per rank's buffer, GB = 1e9 B).", program),
               program);
  app.get_formatter()->column_width(34);
  CollectiveFlags flags;
  add_sweep_flags(app, o, flags);
  OutputFlags output_flags(app, o.outputs);
  PairFlags pair_flags(app, o.pairs, "");
  LoadFlags load_flags(app, o.pairs);
  add_run_flags(app, o, flags);
  add_nccl_flags(app, o, flags);
  if (auto help = parse_or_help(app, argc, argv)) {
    parsed.help_text = std::move(help);
    return parsed;
  }
  resolve_run_flags(o, flags);
  resolve_nccl_flags(o, flags);
  check_sweep(o, flags.step->count() > 0);
  check_timing(o);
  output_flags.check(check_paths);
  o.pattern_given = load_flags.check();
  o.pairs_given = pair_flags.check(o.pattern_given);
  return parsed;
}

void resolve(CollectiveOptions& o, const ValidationContext& c) {
  if (!c.reduces && o.op_given)
    throw UsageError(fmt::format("-o/--op: {} does not reduce; drop the flag", c.collective));
  if (!c.has_root && o.root_given)
    throw UsageError(fmt::format("-r/--root: {} has no root; drop the flag", c.collective));
  if (c.has_root && (o.root < 0 || o.root >= c.ranks))
    throw UsageError(
        fmt::format("-r/--root {} is out of range: this run has {} rank(s) (0..{})", o.root, c.ranks, c.ranks - 1));
  if (o.fault.kind != FaultInjection::Kind::kNone && o.fault.rank >= c.ranks)
    throw UsageError(
        fmt::format("--inject-fault: rank {} does not exist in a run of {} rank(s)", o.fault.rank, c.ranks));
  // Another rank's output is not checked (it has none): the fault would be planted nowhere.
  if (o.fault.kind == FaultInjection::Kind::kWrongElement && c.output_on_root_only && o.fault.rank != o.root)
    throw UsageError(fmt::format("--inject-fault wrong:{}: only the root (rank {}) holds {}'s result; plant it there",
                                 o.fault.rank, o.root, c.collective));

  o.dtypes.clear();
  if (o.dtypes_text == "all") {
    for (DataType t : all_data_types())
      if (c.dtype_unsupported(t).empty()) o.dtypes.push_back(t);
  } else {
    const DataType t = parse_data_type(o.dtypes_text, "-d/--datatype");
    if (std::string why = c.dtype_unsupported(t); !why.empty())
      throw UsageError(fmt::format("-d/--datatype: the {} backend has no {} ({}); choose another type or --backend",
                                   c.backend, name_of(t), why));
    o.dtypes.push_back(t);
  }

  o.ops.clear();
  if (!c.reduces) {
    o.ops.push_back(ReduceOp::kSum);  // unused: a placeholder so the loops run once
  } else if (o.ops_text == "all") {
    for (ReduceOp op : all_reduce_ops())
      if (c.op_unsupported(op).empty()) o.ops.push_back(op);
  } else {
    const ReduceOp op = parse_reduce_op(o.ops_text, "-o/--op");
    if (std::string why = c.op_unsupported(op); !why.empty())
      throw UsageError(fmt::format("-o/--op: the {} backend has no '{}' reduction ({}); choose another op or --backend",
                                   c.backend, name_of(op), why));
    o.ops.push_back(op);
  }

  o.combinations.clear();
  for (DataType t : o.dtypes) {
    for (ReduceOp op : o.ops) {
      const std::string why = (c.reduces && c.pair_unsupported) ? c.pair_unsupported(t, op) : std::string();
      if (why.empty()) {
        o.combinations.emplace_back(t, op);
      } else if (o.dtypes_text != "all" && o.ops_text != "all") {
        throw UsageError(
            fmt::format("-d/--datatype {} with -o/--op {}: the {} backend cannot ({}); choose another pair", name_of(t),
                        name_of(op), c.backend, why));
      }
    }
  }
}

}  // namespace fabricbench::collectives
