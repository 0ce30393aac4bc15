// SPDX-License-Identifier: Apache-2.0
#include "common/mpi.hpp"

#include <fmt/format.h>

#include <cstdio>

#include "common/error.hpp"

namespace fabricbench::mpi {

void check(int rc, const char* call, const char* file, int line) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(rc, text, &length);
  throw Error(fmt::format("{} failed: {} ({}:{})", call, text, file, line));
}

Session::Session(int& argc, char**& argv) {
  // MPI_Init, as nccl-tests and OSU do: only the main thread calls MPI (the watchdog and peer
  // survey threads never do). Asking for MPI_THREAD_FUNNELED instead turns on Open MPI 4.1's
  // thread-safe paths for every call: a 4-float MPI_Allreduce on 2 localhost ranks took 0.36 us
  // instead of 0.19 us, which the harness would report as its own overhead.
  FB_MPI_CHECK(MPI_Init(&argc, &argv));
  // Errors come back as codes and become exceptions with context instead of aborting inside MPI.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}

Session::~Session() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && MPI_Finalize() != MPI_SUCCESS) std::fputs("fabricbench: warning: MPI_Finalize failed\n", stderr);
}

std::string Topology::label() const { return fmt::format("[rank {} on {}]", rank, host); }

Comm::~Comm() {
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

Comm Comm::split(MPI_Comm parent, int color, int key) {
  Comm made;
  FB_MPI_CHECK(MPI_Comm_split(parent, color, key, &made.comm_));
  return made;
}

Comm Comm::split_by_node(MPI_Comm parent, int key) {
  Comm made;
  FB_MPI_CHECK(MPI_Comm_split_type(parent, MPI_COMM_TYPE_SHARED, key, MPI_INFO_NULL, &made.comm_));
  return made;
}

Topology discover_topology() {
  Topology t;
  FB_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &t.rank));
  FB_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &t.size));

  {
    const Comm node = Comm::split_by_node(MPI_COMM_WORLD, t.rank);
    MPI_Comm_rank(node.get(), &t.local_rank);
    MPI_Comm_size(node.get(), &t.local_size);
  }

  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  FB_MPI_CHECK(MPI_Get_processor_name(name, &length));
  t.host.assign(name, static_cast<std::size_t>(length));

  std::vector<char> all(static_cast<std::size_t>(MPI_MAX_PROCESSOR_NAME) * t.size);
  FB_MPI_CHECK(MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
                             MPI_COMM_WORLD));
  t.local_rank_of_rank.resize(static_cast<std::size_t>(t.size));
  FB_MPI_CHECK(MPI_Allgather(&t.local_rank, 1, MPI_INT, t.local_rank_of_rank.data(), 1, MPI_INT, MPI_COMM_WORLD));
  for (int r = 0; r < t.size; ++r) {
    std::string host(all.data() + static_cast<std::size_t>(r) * MPI_MAX_PROCESSOR_NAME);
    ++t.ranks_per_host[host];
    t.host_of_rank.push_back(std::move(host));
  }
  return t;
}

std::string broadcast_string(const std::string& value, int root) {
  unsigned long long length = value.size();
  FB_MPI_CHECK(MPI_Bcast(&length, 1, MPI_UNSIGNED_LONG_LONG, root, MPI_COMM_WORLD));
  std::string out = value;
  out.resize(length);
  if (length > 0) FB_MPI_CHECK(MPI_Bcast(out.data(), static_cast<int>(length), MPI_CHAR, root, MPI_COMM_WORLD));
  return out;
}

std::vector<std::string> gather_strings(const std::string& value, int root) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int length = static_cast<int>(value.size());
  std::vector<int> lengths(static_cast<std::size_t>(size));
  FB_MPI_CHECK(MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, root, MPI_COMM_WORLD));
  std::vector<int> offsets(static_cast<std::size_t>(size));
  int total = 0;
  for (int r = 0; r < size; ++r) {
    offsets[r] = total;
    total += lengths[r];
  }
  std::string all(static_cast<std::size_t>(total), '\0');
  FB_MPI_CHECK(MPI_Gatherv(value.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, root,
                           MPI_COMM_WORLD));
  std::vector<std::string> strings;
  if (rank == root)
    for (int r = 0; r < size; ++r) strings.push_back(all.substr(offsets[r], lengths[r]));
  return strings;
}

std::string agree_on_error(const std::string& local_error) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int first = local_error.empty() ? size : rank;
  FB_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
  if (first == size) return {};
  return broadcast_string(local_error, first);
}

std::string library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(text, &length);
  std::string version(text, static_cast<std::size_t>(length));
  if (auto end = version.find_first_of("\n,"); end != std::string::npos) version.resize(end);
  return version;
}

}  // namespace fabricbench::mpi
