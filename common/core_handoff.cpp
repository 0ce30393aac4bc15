// SPDX-License-Identifier: Apache-2.0
#include "common/core_handoff.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace fabricbench {
namespace {

constexpr int kWarmupHandoffs = 20;
constexpr int kTimedHandoffs = 100;
constexpr std::size_t kFlagBytes = 4096;  // the turn counter has its own page, the data follows
constexpr auto kPeerDeadline = std::chrono::seconds(1);

// A POSIX shared-memory segment mapped for the life of the object. Its creator (rank 0) names it
// and unlinks the name as soon as the peer holds it, or when the object ends (an exception, a
// failed setup): no name outlives the measurement short of a kill in between.
class SharedSegment {
 public:
  SharedSegment(std::string name, bool create) : name_(std::move(name)), owner_(create) {
    fd_ = shm_open(name_.c_str(), O_RDWR | (create ? O_CREAT | O_EXCL : 0), 0600);
    if (fd_ < 0) {
      owner_ = false;  // nothing of ours to unlink
      return;
    }
    // Space reserved now: a full /dev/shm is "not measured", never a SIGBUS at the first store.
    if (create && posix_fallocate(fd_, 0, static_cast<off_t>(kFlagBytes + kHandoffBytes)) != 0) return;
    void* map = mmap(nullptr, kFlagBytes + kHandoffBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
    if (map != MAP_FAILED) map_ = static_cast<unsigned char*>(map);
  }
  ~SharedSegment() {
    unlink();
    if (map_) munmap(map_, kFlagBytes + kHandoffBytes);
    if (fd_ >= 0) close(fd_);
  }
  SharedSegment(const SharedSegment&) = delete;
  SharedSegment& operator=(const SharedSegment&) = delete;

  bool ok() const { return map_ != nullptr; }
  void unlink() {
    if (owner_) shm_unlink(name_.c_str());
    owner_ = false;
  }
  std::atomic_ref<std::uint64_t> turn() const { return std::atomic_ref(*reinterpret_cast<std::uint64_t*>(map_)); }
  unsigned char* data() const { return map_ + kFlagBytes; }

 private:
  std::string name_;
  bool owner_;
  int fd_ = -1;
  unsigned char* map_ = nullptr;
};

// Spins until the turn counter reads `value`, yielding the CPU after a while (ranks oversubscribing
// their cores must let the peer run); false past the deadline (the peer stopped).
bool wait_for(const SharedSegment& segment, std::uint64_t value, std::chrono::steady_clock::time_point deadline) {
  for (std::uint32_t spins = 0; segment.turn().load(std::memory_order_acquire) != value; ++spins) {
    if (spins < 4096) continue;
    sched_yield();
    if ((spins & 0xff) == 0 && std::chrono::steady_clock::now() > deadline) return false;
  }
  return true;
}

// Rank 0: asks for the data and reads every cache line of it; returns the median handoff (ns), 0
// when the peer stopped answering.
double receive(const SharedSegment& segment) {
  const auto deadline = std::chrono::steady_clock::now() + kPeerDeadline;
  std::vector<double> seconds;
  volatile unsigned sink = 0;
  for (std::uint64_t i = 0; i < kWarmupHandoffs + kTimedHandoffs; ++i) {
    const auto start = std::chrono::steady_clock::now();
    segment.turn().store(2 * i + 1, std::memory_order_release);
    if (!wait_for(segment, 2 * i + 2, deadline)) return 0;
    unsigned sum = 0;
    for (std::size_t k = 0; k < kHandoffBytes; k += 64) sum += segment.data()[k];
    sink = sink + sum;
    if (i >= kWarmupHandoffs)
      seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::nth_element(seconds.begin(), seconds.begin() + static_cast<std::ptrdiff_t>(seconds.size() / 2), seconds.end());
  return seconds[seconds.size() / 2] * 1e9;
}

// Rank 1: writes the data each time it is asked.
void send(const SharedSegment& segment) {
  const auto deadline = std::chrono::steady_clock::now() + kPeerDeadline;
  for (std::uint64_t i = 0; i < kWarmupHandoffs + kTimedHandoffs; ++i) {
    if (!wait_for(segment, 2 * i + 1, deadline)) return;
    std::fill_n(segment.data(), kHandoffBytes, static_cast<unsigned char>(i));
    segment.turn().store(2 * i + 2, std::memory_order_release);
  }
}

}  // namespace

double measure_core_handoff_ns(ControlPlane& world, const Topology& topology) {
  // All ranks on one host: only there is the cores' handoff the ranks' path to each other.
  if (world.size() < 2) return 0;
  for (int r = 1; r < world.size(); ++r)
    if (topology.host_of(r) != topology.host_of(0)) return 0;
  const int rank = world.rank();
  std::string name;
  std::unique_ptr<SharedSegment> segment;
  if (rank == 0) {
    name = fmt::format("/fabricbench-handoff-{}-{:x}", getpid(), std::random_device{}());
    segment = std::make_unique<SharedSegment>(name, true);
    if (!segment->ok()) name.clear();  // the segment's end unlinks what was made
  }
  name = world.broadcast(name, 0);
  if (rank == 1 && !name.empty()) segment = std::make_unique<SharedSegment>(name, false);
  const bool mine_ok = rank > 1 || (segment && segment->ok());
  const bool both_ok = all_reduce(world, std::int64_t{mine_ok ? 1 : 0}, ControlPlane::Fold::kMin) == 1;
  if (segment) segment->unlink();  // both hold it mapped (or gave up)
  double handoff_ns = 0;
  if (both_ok && rank == 0) handoff_ns = receive(*segment);
  if (both_ok && rank == 1) send(*segment);
  return all_reduce(world, handoff_ns, ControlPlane::Fold::kMax);
}

}  // namespace fabricbench
