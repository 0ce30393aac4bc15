// SPDX-License-Identifier: Apache-2.0
#include "collectives/nccl/trace_recorder.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <utility>

#include "collectives/nccl/kernel_timing_check.hpp"
#include "common/output_file.hpp"
#include "common/step_inference.hpp"

namespace fabricbench::nccl_trace {
namespace {

// Operations between their enqueue and their last kernel channel: beyond this many, the oldest is
// written without its end (its kernel events never came) so a job that runs for days stays bounded.
constexpr std::size_t kMaxPending = 8192;
// Written operations kept alive for late events before they are freed.
constexpr std::size_t kRetiredKept = 8192;

const char* environment(const char* name) {
  const char* value = std::getenv(name);
  return value && *value ? value : nullptr;
}

long long whole_number(const char* name, const char* text, long long low, long long high) {
  char* end = nullptr;
  errno = 0;
  const long long value = std::strtoll(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || value < low || value > high)
    throw std::invalid_argument(fmt::format("{}='{}': not a whole number in {}..{}", name, text, low, high));
  return value;
}

// The world rank and size the launcher gave this process (torchrun, Open MPI, Slurm, PMI).
void world_from_launcher(RecorderSettings& s) {
  constexpr std::pair<const char*, const char*> kLaunchers[] = {{"RANK", "WORLD_SIZE"},
                                                                {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
                                                                {"PMIX_RANK", nullptr},
                                                                {"SLURM_PROCID", "SLURM_NTASKS"},
                                                                {"PMI_RANK", "PMI_SIZE"}};
  // A launcher's variable that is not a number is skipped for the next launcher's: recording
  // must not stop over a variable some other tool set.
  for (const auto& [rank_name, size_name] : kLaunchers) {
    const char* rank = environment(rank_name);
    if (!rank) continue;
    try {
      const int world_rank = static_cast<int>(whole_number(rank_name, rank, 0, 1 << 24));
      const char* size = size_name ? environment(size_name) : nullptr;
      s.world_size = size ? static_cast<int>(whole_number(size_name, size, 1, 1 << 24)) : 0;
      s.world_rank = world_rank;
      return;
    } catch (const std::invalid_argument&) {
      s.world_size = 0;
    }
  }
}

std::string json_text(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\')
      out += fmt::format("\\{}", c);
    else if (static_cast<unsigned char>(c) < 0x20)
      out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
    else
      out += c;
  }
  return out + "\"";
}

std::uint64_t signature_of(const Communicator* comm, const std::string& function, std::uint64_t count,
                           const std::string& datatype, int root, int peer) {
  std::uint64_t h = comm ? comm->hash : 0;
  const auto mix = [&h](std::uint64_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
  mix(std::hash<std::string>{}(function));
  mix(count);
  mix(std::hash<std::string>{}(datatype));
  mix(static_cast<std::uint64_t>(root + 1));
  mix(static_cast<std::uint64_t>(peer + 1));
  return h;
}

// The pause most of a phase's calls exceed: its lower quartile (a phase whose calls pause long
// only every other time, half a step, scores low).

}  // namespace

std::optional<RecorderSettings> settings_from_environment() {
  const char* folder = environment("FABRICBENCH_TRACE_DIR");
  if (!folder) return std::nullopt;
  RecorderSettings s;
  s.folder = folder;
  if (const char* max = environment("FABRICBENCH_TRACE_MAX_OPS"))
    s.max_operations = static_cast<std::size_t>(whole_number("FABRICBENCH_TRACE_MAX_OPS", max, 1, 1'000'000));
  if (const char* steps = environment("FABRICBENCH_TRACE_STEPS")) {
    const std::string text = steps;
    const auto colon = text.find(':');
    if (colon == std::string::npos)
      throw std::invalid_argument(fmt::format("FABRICBENCH_TRACE_STEPS='{}': give FIRST:COUNT, e.g. 10:5", text));
    s.first_step = whole_number("FABRICBENCH_TRACE_STEPS", text.substr(0, colon).c_str(), 0, 1LL << 40);
    s.step_count = whole_number("FABRICBENCH_TRACE_STEPS", text.substr(colon + 1).c_str(), 1, 1LL << 40);
  }
  world_from_launcher(s);
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) == 0) s.host = host;
  return s;
}

std::string trace_type_name(const std::string& nccl_name) {
  static const std::pair<const char*, const char*> kNames[] = {
      {"ncclInt8", "int8"},         {"ncclUint8", "uint8"},       {"ncclInt32", "int32"},
      {"ncclUint32", "uint32"},     {"ncclInt64", "int64"},       {"ncclUint64", "uint64"},
      {"ncclFloat16", "half"},      {"ncclFloat32", "float"},     {"ncclFloat64", "double"},
      {"ncclBfloat16", "bfloat16"}, {"ncclFloat8e4m3", "f8e4m3"}, {"ncclFloat8e5m2", "f8e5m2"}};
  for (const auto& [nccl, ours] : kNames)
    if (nccl_name == nccl) return ours;
  return nccl_name;
}

void* group_handle(std::uint64_t number) {
  return reinterpret_cast<void*>(static_cast<std::uintptr_t>((number << 1) | 1));
}

std::int64_t group_number(const void* handle) {
  const auto bits = reinterpret_cast<std::uintptr_t>(handle);
  return bits & 1 ? static_cast<std::int64_t>(bits >> 1) : -1;
}

bool PendingOperation::complete() const {
  if (!enqueued || channels_closed < channels_started) return false;
  return channels_started >= call.channels;  // no kernel channel expected: complete when enqueued
}

TraceRecorder::TraceRecorder(RecorderSettings settings) : settings_(std::move(settings)) {}

const Communicator* TraceRecorder::add_communicator(std::uint64_t hash, int size, int rank, int nodes) {
  std::lock_guard lock(mutex_);
  ++live_communicators_;
  ++changes_since_write_;
  communicators_.push_back(std::make_unique<Communicator>(Communicator{hash, size, rank, nodes}));
  return communicators_.back().get();
}

int TraceRecorder::communicator_finalized() {
  std::lock_guard lock(mutex_);
  if (live_communicators_ > 0) --live_communicators_;
  return live_communicators_;
}

PendingOperation* TraceRecorder::begin_operation(OperationCall call, double host_ns) {
  std::lock_guard lock(mutex_);
  auto operation = std::make_unique<PendingOperation>();
  operation->kind = EventHandle::Kind::kOperation;
  operation->call = std::move(call);
  operation->host_start_ns = host_ns;
  pending_.push_back(std::move(operation));
  if (pending_.size() > kMaxPending) finish_front_locked();
  return pending_.back().get();
}

void TraceRecorder::operation_enqueued(PendingOperation* operation) {
  std::lock_guard lock(mutex_);
  operation->enqueued = true;
  flush_completed_locked();
}

KernelChannelEvent* TraceRecorder::kernel_started(PendingOperation* operation, std::uint64_t gpu_ns) {
  std::lock_guard lock(mutex_);
  ++operation->channels_started;
  operation->gpu_start_ns = std::min(operation->gpu_start_ns, gpu_ns);
  KernelChannelEvent& channel = operation->channel_events.emplace_back();
  channel.kind = EventHandle::Kind::kKernelChannel;
  channel.operation = operation;
  return &channel;
}

void TraceRecorder::kernel_stopped(KernelChannelEvent* channel, std::uint64_t gpu_ns) {
  std::lock_guard lock(mutex_);
  ++channel->operation->channels_stopped;
  channel->operation->gpu_end_ns = std::max(channel->operation->gpu_end_ns, gpu_ns);
}

void TraceRecorder::kernel_closed(KernelChannelEvent* channel) {
  std::lock_guard lock(mutex_);
  ++channel->operation->channels_closed;
  flush_completed_locked();
}

void TraceRecorder::flush_completed_locked() {
  while (!pending_.empty() && pending_.front()->complete()) finish_front_locked();
}

void TraceRecorder::finish_front_locked() {
  std::unique_ptr<PendingOperation> op = std::move(pending_.front());
  pending_.pop_front();
  const OperationCall& c = op->call;
  const bool gpu_timed = op->complete() && op->channels_stopped > 0 && op->gpu_end_ns >= op->gpu_start_ns &&
                         op->channels_stopped == op->channels_started;
  finished_.push_back(
      {c.communicator, c.function, trace_type_name(c.datatype), c.algorithm, c.protocol, c.count, c.root, c.peer,
       c.channels, c.group, gpu_timed ? static_cast<double>(op->gpu_start_ns) : op->host_start_ns,
       gpu_timed ? static_cast<double>(op->gpu_end_ns - op->gpu_start_ns) : 0.0, gpu_timed, op->host_start_ns});
  if (finished_.size() > settings_.max_operations) {
    const Finished& gone = finished_.front();
    if (gone.communicator && gone.peer >= 0 && gone.peer == gone.communicator->rank)
      shifted_before_ring_.insert(gone.communicator->hash);
    finished_.pop_front();
    ++dropped_;
  }
  ++changes_since_write_;
  retired_.push_back(std::move(op));
  if (retired_.size() > kRetiredKept) retired_.pop_front();
}

int TraceRecorder::world_rank_locked() const {
  if (settings_.world_rank >= 0) return settings_.world_rank;
  const Communicator* largest = nullptr;
  for (const auto& c : communicators_)
    if (!largest || c->size > largest->size) largest = c.get();
  return largest ? largest->rank : 0;
}

std::string TraceRecorder::trace_text() {
  std::lock_guard lock(mutex_);
  return trace_text_locked();
}

std::string TraceRecorder::trace_text_locked() const {
  const std::size_t n = finished_.size();
  // Kernel times that are another operation's are dropped: those operations are written untimed,
  // on the host's clock like any other whose kernel events never came.
  std::vector<KernelTiming> timings(n);
  for (std::size_t i = 0; i < n; ++i) {
    const Finished& f = finished_[i];
    timings[i] = {f.communicator ? f.communicator->hash : 0,
                  f.group,
                  f.peer >= 0 && f.communicator && f.peer == f.communicator->rank,
                  f.gpu_timed,
                  f.start_ns,
                  f.duration_ns};
  }
  const TimingVerdict timing = check_kernel_timings(timings, shifted_before_ring_);
  std::deque<Finished> finished = finished_;
  for (std::size_t i = 0; i < n; ++i)
    if (timing.distrusted[i] && finished[i].gpu_timed) {
      finished[i].gpu_timed = false;
      finished[i].start_ns = finished[i].host_start_ns;
      finished[i].duration_ns = 0;
    }
  // Gaps in issue order, on the clock each operation was timed by (never negative: operations on
  // other streams may overlap).
  std::vector<double> gaps_us(n, 0.0);
  std::vector<std::uint64_t> signatures(n);
  bool gpu_clock = false;
  for (std::size_t i = 0; i < n; ++i) {
    const Finished& f = finished[i];
    gpu_clock = gpu_clock || f.gpu_timed;
    signatures[i] = signature_of(f.communicator, f.function, f.count, f.datatype, f.root, f.peer);
    if (i > 0 && f.gpu_timed == finished[i - 1].gpu_timed)
      gaps_us[i] = std::max(0.0, (f.start_ns - finished[i - 1].start_ns - finished[i - 1].duration_ns) * 1e-3);
  }
  const std::vector<std::int64_t> steps = infer_steps(signatures, gaps_us);
  const bool steps_found = n > 0 && steps.front() >= 0;
  const auto kept = [&](std::size_t i) {
    return !steps_found || settings_.first_step < 0 ||
           (steps[i] >= settings_.first_step && steps[i] < settings_.first_step + settings_.step_count);
  };

  // The world is at least as large as every communicator and holds this rank (a launcher may
  // give the rank without the size).
  int world_size = std::max(settings_.world_size, world_rank_locked() + 1);
  for (const auto& c : communicators_) world_size = std::max(world_size, c->size);
  std::string out = fmt::format(
      "{{\"fabricbench_trace\": 1, \"rank\": {}, \"ranks\": {}, \"host\": {}, \"clock\": \"{}\", "
      "\"recorder\": \"fabricbench NCCL profiler plugin (v5)\", \"dropped\": {}, \"steps\": \"{}\"{}}}\n",
      world_rank_locked(), world_size, json_text(settings_.host), gpu_clock ? "gpu" : "host", dropped_,
      steps_found ? "inferred" : "unknown",
      timing.reason.empty() ? std::string() : fmt::format(", \"kernel_timing\": {}", json_text(timing.reason)));
  // A communicator NCCL made twice with one hash (a split that repeats) is declared once.
  std::vector<std::uint64_t> declared;
  for (const auto& c : communicators_) {
    if (std::find(declared.begin(), declared.end(), c->hash) != declared.end()) continue;
    declared.push_back(c->hash);
    out += fmt::format("{{\"comm\": {{\"hash\": \"{:016x}\", \"size\": {}, \"rank\": {}, \"nodes\": {}}}}}\n", c->hash,
                       c->size, c->rank, c->nodes);
  }
  // Starts on the header's clock only: an operation timed otherwise starts where the one before
  // it (on that clock) ended.
  double origin_ns = -1, last_end_ns = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (!kept(i)) continue;
    Finished f = finished[i];
    if (f.gpu_timed != gpu_clock) f.start_ns = last_end_ns;
    if (origin_ns < 0 && f.gpu_timed == gpu_clock) origin_ns = f.start_ns;
    if (f.gpu_timed == gpu_clock) last_end_ns = f.start_ns + f.duration_ns;
    out += fmt::format(
        "{{\"op\": {{\"comm\": \"{:016x}\", \"function\": {}, \"count\": {}, \"type\": {}, \"root\": {}, \"peer\": {}, "
        "\"reduction\": \"unknown\", \"algorithm\": {}, \"protocol\": {}, \"channels\": {}, \"start_us\": {:.3f}, "
        "\"duration_us\": {:.3f}, \"gap_us\": {:.3f}, \"step\": {}{}{}}}}}\n",
        f.communicator ? f.communicator->hash : 0, json_text(f.function), f.count, json_text(f.datatype), f.root,
        f.peer, json_text(f.algorithm), json_text(f.protocol), f.channels,
        origin_ns < 0 ? 0.0 : std::max(0.0, (f.start_ns - origin_ns) * 1e-3), f.duration_ns * 1e-3, gaps_us[i],
        steps[i], f.gpu_timed ? "" : ", \"timed\": false",
        f.group >= 0 && f.peer >= 0 ? fmt::format(", \"group\": {}", f.group) : std::string());
  }
  return out;
}

std::string TraceRecorder::write() {
  // One writer at a time from snapshot to rename: a finalize and the exit may both write, and an
  // older snapshot must not land last.
  std::lock_guard writing(write_mutex_);
  std::string text;
  int rank = 0;
  {
    std::lock_guard lock(mutex_);
    // Written when the job's communicators are done or it exits: an operation still waiting for
    // kernel events will get none, and must not hold back the ones after it.
    while (!pending_.empty() && pending_.front()->enqueued) finish_front_locked();
    if (changes_since_write_ == 0) return "";
    changes_since_write_ = 0;
    text = trace_text_locked();
    rank = world_rank_locked();
  }
  std::error_code ec;
  std::filesystem::create_directories(settings_.folder, ec);  // an existing folder is no error
  const std::string path = fmt::format("{}/trace.rank{}.jsonl", settings_.folder, rank);
  check_writable_path(path, "FABRICBENCH_TRACE_DIR");
  OutputFile file(path, Unfinished::kRemove);
  file.append(text);
  file.commit();
  return path;
}

std::size_t TraceRecorder::finished_operations() const {
  std::lock_guard lock(mutex_);
  return finished_.size();
}

std::uint64_t TraceRecorder::dropped_operations() const {
  std::lock_guard lock(mutex_);
  return dropped_;
}

}  // namespace fabricbench::nccl_trace
