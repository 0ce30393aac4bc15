// SPDX-License-Identifier: Apache-2.0
#include "collectives/backend_factory.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "collectives/mpi_backend.hpp"
#include "common/error.hpp"

#if FABRICBENCH_HAVE_GLOO
#include "collectives/gloo/gloo_backend.hpp"
#endif

#if FABRICBENCH_HAVE_NCCL
#include <cuda_runtime_api.h>

#include "collectives/nccl/nccl_backend.hpp"
#endif

namespace fabricbench::collectives {
namespace {

bool gpu_present() {
#if FABRICBENCH_HAVE_NCCL
  int devices = 0;
  return cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0;
#else
  return false;
#endif
}

}  // namespace

std::string nccl_log_file(const CollectiveOptions& o, const Topology& topology) {
  namespace fs = std::filesystem;
  const std::string name = fmt::format("nccl.rank{}.log", topology.rank);
  if (!o.nccl_log_dir.empty()) return (fs::path(o.nccl_log_dir) / name).string();
  if (!o.outputs.json_path.empty()) {
    fs::path folder(o.outputs.json_path);
    folder.replace_extension(".nccl-logs");
    return (folder / name).string();
  }
  const char* tmp = std::getenv("TMPDIR");
  return (fs::path(tmp && *tmp ? tmp : "/tmp") /
          fmt::format("fabricbench-nccl.{}.{}.log", topology.host, static_cast<long>(::getpid())))
      .string();
}

std::unique_ptr<Backend> make_backend(const CollectiveOptions& o, const Topology& topology, const BackendGroup& group) {
  const bool nccl = o.backend == "nccl" || (o.backend == "auto" && gpu_present());
  if (nccl) {
#if FABRICBENCH_HAVE_NCCL
    NcclSettings settings;
    settings.gpus_per_process = o.gpus_per_process;
    settings.gpu_offset = o.gpu_offset;
    settings.graph_iterations = o.graph_iterations;
    settings.cache = o.cache.value_or(CacheMode::kCold);
    settings.timer = o.host_timer ? Timer::kHost : Timer::kEvents;
    settings.timeout_seconds = o.outputs.timeout_seconds;
    settings.observe_path = o.observe_path;
    if (o.observe_path) {
      settings.profiler_plugin = bundled_profiler_plugin();
      settings.log_file = nccl_log_file(o, topology);
      settings.log_is_temporary = o.nccl_log_dir.empty() && o.outputs.json_path.empty();
    }
    settings.group = group.plane;
    settings.group_rank = group.rank;
    settings.group_size = group.size;
    return std::make_unique<NcclBackend>(topology, settings);
#else
    throw UsageError(
        "--backend nccl: this build has no NCCL backend (configure found no CUDA toolkit or NCCL; see its summary)");
#endif
  }
  const std::string host = o.backend == "gloo" ? "gloo" : "mpi";
  if (o.graph_iterations > 0)
    throw UsageError(fmt::format("-G/--cudagraph needs --backend nccl: the {} backend has no CUDA graphs", host));
  if (o.gpus_given) throw UsageError(fmt::format("-g/--ngpus needs --backend nccl: the {} backend uses no GPU", host));
  if (!o.algorithms.empty() || !o.protocols.empty())
    throw UsageError("--algo/--proto are NCCL settings: they need --backend nccl");
  if (!o.nccl_log_dir.empty()) throw UsageError("--nccl-logs needs --backend nccl");
  if (o.gpu_offset_given)
    throw UsageError(fmt::format("--gpu-offset needs --backend nccl: the {} backend uses no GPU", host));
  if (o.timer_given)
    throw UsageError(fmt::format("--timer needs --backend nccl: the {} backend times with the host clock", host));
  if (!o.nccl_calls.empty())
    throw UsageError(fmt::format("--nccl-call needs --backend nccl: the {} backend makes {}'s own calls", host,
                                 host == "gloo" ? "Gloo" : "MPI"));
  const CacheMode cache = o.cache.value_or(CacheMode::kWarm);
  (void)topology;
  if (host == "gloo") {
#if FABRICBENCH_HAVE_GLOO
    return std::make_unique<GlooBackend>(group, cache);
#else
    throw UsageError("--backend gloo: this build has no Gloo (configure found no libgloo-dev; see its summary)");
#endif
  }
  return std::make_unique<MpiBackend>(group, cache);
}

}  // namespace fabricbench::collectives
