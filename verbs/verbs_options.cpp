// SPDX-License-Identifier: Apache-2.0
#include "verbs/verbs_options.hpp"

#include <fmt/format.h>

#include <optional>

#include "common/cli.hpp"
#include "common/error.hpp"
#include "common/numbers.hpp"
#include "common/output_options.hpp"

namespace fabricbench::verbs {

ibv_mtu mtu_enum(int mtu) {
  switch (mtu) {
    case 256: return IBV_MTU_256;
    case 512: return IBV_MTU_512;
    case 1024: return IBV_MTU_1024;
    case 2048: return IBV_MTU_2048;
    case 4096: return IBV_MTU_4096;
    default: throw UsageError(fmt::format("-m/--mtu {}: valid MTUs are 256, 512, 1024, 2048, 4096", mtu));
  }
}

namespace {

AtomicKind atomic_kind(const std::string& name) {
  if (name == "FETCH_AND_ADD" || name == "faa") return AtomicKind::kFetchAndAdd;
  if (name == "CMP_AND_SWAP" || name == "cas") return AtomicKind::kCompareAndSwap;
  throw UsageError(
      fmt::format("-A/--atomic_type '{}': valid types are FETCH_AND_ADD (faa) and CMP_AND_SWAP (cas)", name));
}

// What the command line gave before it is resolved into VerbsOptions: texts and whether a flag
// was given at all (so defaults apply only where nothing was).
struct VerbsFlags {
  std::string size_text, min_text, max_text, memory_text, atomic_text = "FETCH_AND_ADD";
  bool all_sizes = false, report_gbits = false, use_cuda_dmabuf = false;
  std::optional<int> use_cuda, iterations, warmup;
  CLI::Option *size = nullptr, *min = nullptr, *max = nullptr, *factor = nullptr, *iters = nullptr, *duration = nullptr;
};

void add_verbs_flags(CLI::App& app, VerbsOptions& o, VerbsFlags& f, bool atomic) {
  app.add_option("-d,--ib-dev", o.device,
                 "RDMA device (ibv_devices lists them); per local rank: mlx5_%l, or mlx5_0,mlx5_3,... [the first]");
  // Checked here, before any device is looked for: the device then says which of its ports exist.
  app.add_option("-i,--ib-port", o.port, "port of the device [1]")->transform(number_in(NumberRange::between(1, 255)));
  app.add_option("-x,--gid-index", o.gid_index, "GID index [RoCE: a RoCE v2 IPv4-mapped GID, as perftest]")
      ->transform(number_in(NumberRange::between(0, 255)));
  f.size = app.add_option(
      "-s,--size", f.size_text,
      atomic ? "message size: an atomic is 8 B [8]" : "one message size (K/M/G suffixes) [64K bw, 2 latency]");
  if (atomic)
    app.add_option("-A,--atomic_type", f.atomic_text,
                   "FETCH_AND_ADD (faa) or CMP_AND_SWAP (cas), as perftest [FETCH_AND_ADD]");
  app.add_flag("-a,--all", f.all_sizes, "all sizes from 2 B to 8 MiB, doubling (perftest's -a)");
  f.min = app.add_option("--minbytes", f.min_text, "sweep: smallest size");
  f.max = app.add_option("--maxbytes", f.max_text, "sweep: largest size");
  f.factor = app.add_option("--stepfactor", o.sweep.factor, "sweep: multiply by this factor (> 1) [2]")
                 ->transform(number_in(NumberRange::between(1, 1e6)));
  f.iters = app.add_option("-n,--iters", f.iterations, "messages per size [bw 5000, latency 1000]")
                ->transform(number_in(NumberRange::between(1, 1e9)));
  f.duration = app.add_option("-D,--duration", o.duration_seconds, "seconds per size instead of -n")
                   ->transform(number_in(NumberRange::between(0, 3600)));
  app.add_option("-w,--warmup,--warmup_iters", f.warmup,
                 "untimed messages per size; 0 for none [bw: tx depth, latency: 100]")
      ->transform(number_in(NumberRange::between(0, 1e9)));
  app.add_option("-q,--qp", o.qps, "queue pairs per pair of ranks [1]");
  app.add_option("-t,--tx-depth", o.tx_depth, "work requests in flight per QP [128]");
  app.add_flag("-b,--bidirectional", o.bidirectional, "both ranks of a pair send at once (bandwidth)");
  app.add_option("-m,--mtu", o.mtu, "path MTU: 256..4096, capped at the port's [4096]");
  app.add_flag("--report_gbits,--report-gbits", f.report_gbits, "bandwidth in Gb/s (the default)");
  app.add_flag("--report-mibs", o.report_mibs, "bandwidth in MiB/s");
  app.add_option("--use_cuda", f.use_cuda, "GPU memory on this GPU (GPUDirect RDMA through nvidia-peermem)");
  app.add_flag("--use_cuda_dmabuf", f.use_cuda_dmabuf, "with --use_cuda: register the GPU memory through dma-buf");
  app.add_option("--mem", f.memory_text,
                 "host | cuda (GDR, nvidia-peermem) | cuda-dmabuf (GDR, dma-buf) | staged (GPU memory copied "
                 "through pinned host memory per message); GPU = --use_cuda or local rank [host]");
  app.add_option("--pass", o.pass_percent, "verdict PASS at this % of the port's line rate [90]")
      ->transform(number_in(NumberRange::between(0, 100)));
  app.add_option("--warn", o.warn_percent, "verdict WARN at this % (FAIL below) [70]")
      ->transform(number_in(NumberRange::between(0, 100)));
  app.add_option("--expect-gbps", o.expect_gbps,
                 "fail the run (exit 1) when the slowest pair's plateau (sizes from 90 % of its peak up) is below "
                 "this many Gb/s")
      ->transform(number_in(NumberRange::greater_than(0)));
}

// -s, -a or --minbytes/--maxbytes/--stepfactor into the sweep; an atomic is 8 B.
void resolve_sizes(VerbsOptions& o, const VerbsFlags& f, bool atomic, bool bandwidth) {
  const bool sweep_given = f.min->count() || f.max->count() || f.factor->count();
  if (f.size->count() && (f.all_sizes || sweep_given))
    throw UsageError("-s/--size with -a or --minbytes/--maxbytes: give one size or a sweep");
  if (f.all_sizes && (f.min->count() || f.max->count()))
    throw UsageError("-a/--all with --minbytes/--maxbytes: -a is 2 B .. 8 MiB; give either");
  if (f.size->count()) {
    o.sweep.min_bytes = o.sweep.max_bytes = parse_bytes(f.size_text, "-s/--size");
  } else if (f.all_sizes) {
    o.sweep.min_bytes = 2;
    o.sweep.max_bytes = 8 << 20;
  } else if (sweep_given) {
    o.sweep.min_bytes = parse_bytes(f.min_text.empty() ? "2" : f.min_text, "--minbytes");
    o.sweep.max_bytes = parse_bytes(f.max_text.empty() ? "8M" : f.max_text, "--maxbytes");
  } else {
    o.sweep.min_bytes = o.sweep.max_bytes = atomic ? kAtomicBytes : bandwidth ? 65536 : 2;
  }
  if (atomic && (o.sweep.min_bytes != kAtomicBytes || o.sweep.max_bytes != kAtomicBytes))
    throw UsageError("-s/-a/--minbytes/--maxbytes: an RDMA atomic works on 8 B; drop the size flags or give -s 8");
  if (atomic) o.atomic = atomic_kind(f.atomic_text);
  if (o.sweep.min_bytes > o.sweep.max_bytes)
    throw UsageError(
        fmt::format("--minbytes ({} B) is larger than --maxbytes ({} B)", o.sweep.min_bytes, o.sweep.max_bytes));
  if (!(o.sweep.factor > 1))
    throw UsageError(fmt::format("--stepfactor must be greater than 1 (got {:g})", o.sweep.factor));
  if (o.sweep.max_bytes > (1ull << 31))
    throw UsageError(fmt::format("size {} B is above the 2 GiB a verbs message can carry", o.sweep.max_bytes));
}

// Counts, queues, MTU and the verdict's percentages, within what a pair of ranks can do.
void check_verbs_limits(const VerbsOptions& o, const VerbsFlags& f, bool bandwidth) {
  if (f.iters->count() && f.duration->count()) throw UsageError("-n/--iters and -D/--duration both given: choose one");
  if (o.duration_seconds && !(*o.duration_seconds > 0))
    throw UsageError("-D/--duration must be a positive number of seconds");
  if (o.qps < 1 || o.qps > 64) throw UsageError(fmt::format("-q/--qp must be 1..64 (got {})", o.qps));
  if (o.tx_depth < 1 || o.tx_depth > 8192)
    throw UsageError(fmt::format("-t/--tx-depth must be 1..8192 (got {})", o.tx_depth));
  if (o.expect_gbps && !bandwidth)
    throw UsageError("--expect-gbps is a bandwidth gate: use it with fb_rdma_*_bw, not a latency test");
  if (o.expect_gbps && !(*o.expect_gbps > 0))
    throw UsageError(fmt::format("--expect-gbps {:g}: a rate in Gb/s above 0", *o.expect_gbps));
  if (!bandwidth && (o.qps != 1 || o.bidirectional))
    throw UsageError("-q and -b are bandwidth options: a latency test is one ping-pong on one QP");
  mtu_enum(o.mtu);
  if (f.report_gbits && o.report_mibs) throw UsageError("--report_gbits and --report-mibs both given: choose one unit");
  if (!(o.warn_percent <= o.pass_percent) || o.warn_percent < 0 || o.pass_percent > 100)
    throw UsageError(
        fmt::format("--warn ({:g}) must be at most --pass ({:g}), both 0..100", o.warn_percent, o.pass_percent));
}

// --mem, or perftest's --use_cuda[_dmabuf], into one memory kind and GPU.
void resolve_memory(VerbsOptions& o, VerbsFlags f, bool atomic) {
  if (f.use_cuda_dmabuf && !f.use_cuda) throw UsageError("--use_cuda_dmabuf needs --use_cuda=<gpu>");
  if (f.use_cuda) {
    if (*f.use_cuda < 0) throw UsageError(fmt::format("--use_cuda={}: a GPU index is 0 or more", *f.use_cuda));
    o.gpu = *f.use_cuda;
    const std::string implied = f.use_cuda_dmabuf ? "cuda-dmabuf" : "cuda";
    if (f.memory_text.empty()) f.memory_text = implied;
    if (f.memory_text == "host" || (f.use_cuda_dmabuf && f.memory_text != implied))
      throw UsageError(fmt::format("--use_cuda{} with --mem {}: they ask for different memory; give one",
                                   f.use_cuda_dmabuf ? " --use_cuda_dmabuf" : "", f.memory_text));
  }
  o.memory = memory_kind(f.memory_text.empty() ? "host" : f.memory_text);
  if (atomic && o.memory == MemoryKind::kStaged)
    throw UsageError(
        "--mem staged: an atomic acts on the NIC's target memory, there is nothing to stage; use host, "
        "cuda or cuda-dmabuf");
}

// What the verbs load patterns run: host memory (a rank's flows run on threads of their own, which
// GPU memory would have to follow to its device), and no congestion (its victims' latency is
// fb_sendrecv's, on MPI and NCCL).
void check_load_pattern(const VerbsOptions& o) {
  if (o.pairs.pattern->name == "congestion")
    throw UsageError(
        "--pattern congestion runs on fb_sendrecv (MPI or NCCL); the verbs executables run incast, one-to-many, "
        "all-to-all and bisection");
  if (o.memory != MemoryKind::kHost)
    throw UsageError(fmt::format("--pattern with --mem {}: the verbs load patterns use host memory; drop --mem",
                                 memory_kind_name(o.memory)));
}

}  // namespace

ParsedVerbsCommandLine parse_verbs_options(const std::string& program, const VerbsOperation& operation, Metric metric,
                                           int argc, const char* const* argv, bool check_paths) {
  ParsedVerbsCommandLine parsed;
  VerbsOptions& o = parsed.options;
  const bool atomic = operation.nic_atomic;
  const bool bandwidth = metric == Metric::kBandwidth;
  CLI::App app(fmt::format("{}: RDMA {} {} between pairs of MPI ranks (rank i with i + n/2), data verified.", program,
                           operation.family, bandwidth ? "bandwidth" : "latency"),
               program);
  app.get_formatter()->column_width(34);
  VerbsFlags flags;
  add_verbs_flags(app, o, flags, atomic);
  PairFlags pair_flags(app, o.pairs, "half");
  // The load patterns move bandwidth between nodes: the bandwidth tests of data, not atomics.
  std::optional<LoadFlags> load_flags;
  if (bandwidth && !atomic) load_flags.emplace(app, o.pairs, false);
  OutputFlags output_flags(app, o.outputs);
  if (auto help = parse_or_help(app, argc, argv)) {
    parsed.help_text = std::move(help);
    return parsed;
  }
  // Defaults only where nothing was given: -w 0 turns warm-up off, -n 0 is refused below.
  o.iterations = flags.iterations.value_or(bandwidth ? 5000 : 1000);
  o.warmup = flags.warmup.value_or(bandwidth ? o.tx_depth : 100);
  resolve_sizes(o, flags, atomic, bandwidth);
  check_verbs_limits(o, flags, bandwidth);
  resolve_memory(o, flags, atomic);
  const bool pattern_given = load_flags && load_flags->check();
  pair_flags.check(pattern_given);
  if (pattern_given) check_load_pattern(o);
  output_flags.check(check_paths);
  return parsed;
}

}  // namespace fabricbench::verbs
