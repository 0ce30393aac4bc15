// SPDX-License-Identifier: Apache-2.0
// What the harness needs from its peers, whatever launched them: who they are, a barrier, folds of
// numbers, and bytes gathered, broadcast or exchanged. MPI is the first implementation (mpi.hpp),
// Gloo the second (gloo_plane.hpp: torchrun's workers); common/launcher.hpp decides which. No code
// outside an implementation and the MPI data-plane backend calls MPI.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "common/error.hpp"

namespace fabricbench {

/// Every call is collective over the plane's ranks (each must make it, in the same order) unless
/// it says otherwise. Failures throw Error naming the call.
class ControlPlane {
 public:
  virtual ~ControlPlane() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// "MPI", "env": what found the peers (for the run's header).
  virtual std::string kind() const = 0;
  /// The library behind it, for the run's context ("Open MPI v4.1.4").
  virtual std::string library() const = 0;

  virtual void barrier() = 0;
  /// A barrier that sleeps between its checks instead of spinning: for ranks with nothing to do
  /// until the others finish (a round of pairs they sit out), so that they leave the CPUs to those
  /// measuring. Each check costs up to its sleep (100 us) more than barrier().
  virtual void idle_barrier();
  /// A barrier entered now and left later: complete() says, without blocking, whether every rank
  /// has entered it. A load pattern's aggressors run until their round's victims enter one. The
  /// handle must be completed (or waited on) before the plane is destroyed.
  class PendingBarrier {
   public:
    virtual ~PendingBarrier() = default;
    virtual bool complete() = 0;
    /// Until complete(), sleeping between its checks rather than spinning.
    void wait();
  };
  virtual std::unique_ptr<PendingBarrier> start_barrier() = 0;
  enum class Fold { kSum, kMax, kMin };
  /// Element-wise fold of `values` over the ranks, in place on every rank.
  virtual void all_reduce(std::span<double> values, Fold fold) = 0;
  virtual void all_reduce(std::span<std::int64_t> values, Fold fold) = 0;
  /// The largest `value` of any rank and the lowest rank holding it, on every rank.
  virtual std::pair<double, int> max_location(double value) = 0;
  /// `root`'s bytes on every rank.
  virtual std::string broadcast(const std::string& bytes, int root) = 0;
  /// Every rank's bytes, in rank order, on every rank.
  virtual std::vector<std::string> all_gather(const std::string& bytes) = 0;
  /// Every rank's bytes, in rank order, on `root`; empty elsewhere.
  virtual std::vector<std::string> gather(const std::string& bytes, int root) = 0;
  /// Sends `bytes` to `peer` and returns what `peer` sent: both must call, for each other.
  virtual std::string exchange(int peer, const std::string& bytes) = 0;
  /// The ranks that give the same `color`, ordered by `key`; null for those giving a negative
  /// color (they take part in the call and in nothing after it).
  virtual std::unique_ptr<ControlPlane> split(int color, int key) = 0;
  /// The ranks on this rank's node (shared memory), ordered by rank.
  virtual std::unique_ptr<ControlPlane> split_by_node() = 0;
  /// This process's node name as the launcher knows it.
  virtual std::string node_name() const = 0;
  /// The address the other ranks reach this one by, where the plane chose one (the Gloo plane:
  /// the route to MASTER_ADDR); "" where it leaves that to the launcher (MPI).
  virtual std::string reachable_address() const { return {}; }
  /// Every rank's last call on the world when the program ends without abort(): a plane whose
  /// rank 0 serves the others (the Gloo plane's store) holds it there until all are done.
  virtual void close() {}
  /// Ends every rank of the job with `code`, now (a runtime failure: no peer may be left waiting).
  /// Not collective.
  [[noreturn]] virtual void abort(int code) = 0;
};

/// A value folded over the plane: the sum, maximum or minimum of one number.
double all_reduce(ControlPlane& plane, double value, ControlPlane::Fold fold);
std::int64_t all_reduce(ControlPlane& plane, std::int64_t value, ControlPlane::Fold fold);

/// The error message of the lowest rank that has one, on every rank ("" when none does): so that
/// every rank takes the same exit.
std::string agree_on_error(ControlPlane& plane, const std::string& local_error);

/// A planning problem every rank has already agreed on (at a plan_checkpoint): the planner's
/// caller exits on it as it is, without agreeing again.
class AgreedUsageError : public UsageError {
 public:
  using UsageError::UsageError;
};

/// Called by every rank before a collective call made while planning (the --topology broadcast):
/// a rank that refused earlier, on something only it checks (rank 0's outputs), is then waiting in
/// the planner's caller's agree_on_error, which this meets, instead of the other ranks waiting in
/// the collective for it forever. Throws AgreedUsageError with that refusal.
void plan_checkpoint(ControlPlane& world);

}  // namespace fabricbench
