// SPDX-License-Identifier: Apache-2.0
// The seam between the harness and a communication library: MPI on host memory, NCCL on GPUs.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "collectives/collective.hpp"
#include "common/dtype.hpp"
#include "common/error.hpp"
#include "common/key_values.hpp"
#include "common/reduce_op.hpp"

namespace fabricbench::collectives {

enum class Placement { kOutOfPlace, kInPlace };
std::string_view name_of(Placement placement);

/// One call of a collective, as the backend runs it.
struct CallSpec {
  const Collective* collective;
  DataType dtype;
  ReduceOp op;
  int root;
  std::uint64_t count;  ///< the collective's count argument
  Placement placement;
};

/// What the library actually did for a call: algorithm, protocol, channels (NCCL), and where
/// that was learnt (its profiler plugin, or its TUNING log). Empty when unknown.
struct ObservedPath {
  std::string algorithm;
  std::string protocol;
  int channels = 0;
  std::string source;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;
  /// Where its buffers live (the memory column): host, cuda.
  virtual std::string_view memory() const { return "host"; }
  /// Ranks of the collective: MPI processes, times GPUs per process for NCCL's -g mode.
  virtual int ranks() const = 0;

  /// Empty when supported, else why not (for the usage error).
  virtual std::string dtype_unsupported(DataType dtype) const = 0;
  virtual std::string op_unsupported(ReduceOp op) const = 0;
  virtual std::string pair_unsupported(DataType, ReduceOp) const { return {}; }
  /// Largest count argument the library accepts.
  virtual std::uint64_t max_count() const = 0;

  /// Joins the job's communicator, after every rank agreed the options are valid. Every rank must
  /// call.
  virtual void connect() {}
  /// Allocates buffers for the largest call of the run (bytes per rank). Every rank must call.
  virtual void reserve(std::uint64_t send_bytes, std::uint64_t recv_bytes) = 0;
  /// Writes this rank's input for `call` and poisons the output.
  virtual void prepare(const CallSpec& call) = 0;
  /// Runs `operations` calls back to back, waits until they are done, returns this rank's
  /// elapsed seconds. Every rank must call with the same arguments.
  virtual double run(const CallSpec& call, int operations) = 0;
  /// Wrong elements of this rank's output after prepare() and one run().
  virtual std::uint64_t count_wrong(const CallSpec& call) = 0;
  /// Makes one element of this rank's output wrong (fault injection); false if it has none.
  virtual bool corrupt_output(const CallSpec& call) = 0;
  /// Makes the library fail for real, as a device error mid-run would (fault injection): throws.
  virtual void plant_error() { throw Error("planted failure (--inject-fault error)"); }
  /// Settings that shape the numbers (the settings column).
  virtual KeyValues settings() const { return {}; }
  /// Whether set_tuning() takes NCCL_ALGO / NCCL_PROTO values (checked when the run is planned).
  virtual bool tunable() const { return false; }
  /// What this rank runs on (GPU, library versions), for the run's JSON context.
  virtual nlohmann::json rank_context() const { return nlohmann::json::object(); }

  /// Library tuning to apply from the next connect(): NCCL_ALGO / NCCL_PROTO ("" = leave alone).
  /// Every rank must call with the same values.
  virtual void set_tuning(const std::string& algorithm, const std::string& protocol);
  /// Drops the communicator (after a failure: without waiting on peers) and joins a new one.
  virtual void reconnect() { connect(); }
  /// Gives up on the communicator without waiting for peers (after a refused setting).
  virtual void abandon() noexcept {}
  /// Forgets what was observed so far; observed_path() then covers what ran since.
  virtual void begin_observation() {}
  /// The path the library took for `call` since begin_observation().
  virtual ObservedPath observed_path(const CallSpec& /*call*/) { return {}; }
  /// This rank's digest of the library's log (NCCL INFO), JSON; null when there is none.
  virtual nlohmann::json path_digest() const { return nullptr; }
  /// Why the path could not be observed ("" when it could).
  virtual std::string path_note() const { return {}; }
};

inline void Backend::set_tuning(const std::string& algorithm, const std::string& protocol) {
  if (!algorithm.empty() || !protocol.empty())
    throw UsageError(std::string("--algo/--proto are NCCL settings: the ") + std::string(name()) +
                     " backend has none (use --backend nccl)");
}

}  // namespace fabricbench::collectives
