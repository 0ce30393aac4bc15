// SPDX-License-Identifier: Apache-2.0
#include "common/mpi.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <optional>

#include "common/error.hpp"

namespace fabricbench::mpi {
namespace {

MPI_Op op_of(fabricbench::ControlPlane::Fold fold) {
  switch (fold) {
    case fabricbench::ControlPlane::Fold::kSum: return MPI_SUM;
    case fabricbench::ControlPlane::Fold::kMax: return MPI_MAX;
    case fabricbench::ControlPlane::Fold::kMin: return MPI_MIN;
  }
  return MPI_SUM;
}

int length_of(const std::string& bytes) {
  if (bytes.size() > static_cast<std::size_t>(INT32_MAX)) throw Error("a control message over 2 GiB");
  return static_cast<int>(bytes.size());
}

}  // namespace

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

MpiPlane::MpiPlane() : comm_(MPI_COMM_WORLD), owned_(false) {
  FB_MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
  FB_MPI_CHECK(MPI_Comm_size(comm_, &size_));
}

MpiPlane::MpiPlane(MPI_Comm owned) : comm_(owned), owned_(true) {
  FB_MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
  FB_MPI_CHECK(MPI_Comm_size(comm_, &size_));
}

MpiPlane::~MpiPlane() {
  if (owned_ && comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

void MpiPlane::barrier() { FB_MPI_CHECK(MPI_Barrier(comm_)); }

namespace {

class MpiPendingBarrier final : public ControlPlane::PendingBarrier {
 public:
  explicit MpiPendingBarrier(MPI_Comm comm) { FB_MPI_CHECK(MPI_Ibarrier(comm, &request_)); }
  ~MpiPendingBarrier() override {
    if (!done_) MPI_Wait(&request_, MPI_STATUS_IGNORE);
  }
  bool complete() override {
    if (!done_) {
      int flag = 0;
      FB_MPI_CHECK(MPI_Test(&request_, &flag, MPI_STATUS_IGNORE));
      done_ = flag != 0;
    }
    return done_;
  }

 private:
  MPI_Request request_ = MPI_REQUEST_NULL;
  bool done_ = false;
};

}  // namespace

std::unique_ptr<ControlPlane::PendingBarrier> MpiPlane::start_barrier() {
  return std::make_unique<MpiPendingBarrier>(comm_);
}

void MpiPlane::all_reduce(std::span<double> values, Fold fold) {
  FB_MPI_CHECK(
      MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_DOUBLE, op_of(fold), comm_));
}

void MpiPlane::all_reduce(std::span<std::int64_t> values, Fold fold) {
  FB_MPI_CHECK(
      MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_INT64_T, op_of(fold), comm_));
}

std::pair<double, int> MpiPlane::max_location(double value) {
  struct {
    double value;
    int rank;
  } mine{value, rank_}, found{};
  FB_MPI_CHECK(MPI_Allreduce(&mine, &found, 1, MPI_DOUBLE_INT, MPI_MAXLOC, comm_));
  return {found.value, found.rank};
}

std::string MpiPlane::broadcast(const std::string& bytes, int root) {
  unsigned long long length = bytes.size();
  FB_MPI_CHECK(MPI_Bcast(&length, 1, MPI_UNSIGNED_LONG_LONG, root, comm_));
  std::string out = rank_ == root ? bytes : std::string(length, '\0');
  if (length > 0) FB_MPI_CHECK(MPI_Bcast(out.data(), static_cast<int>(length), MPI_CHAR, root, comm_));
  return out;
}

std::vector<std::string> MpiPlane::all_gather(const std::string& bytes) {
  int length = length_of(bytes);
  std::vector<int> lengths(static_cast<std::size_t>(size_)), offsets(static_cast<std::size_t>(size_));
  FB_MPI_CHECK(MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, comm_));
  int total = 0;
  for (int r = 0; r < size_; ++r) {
    offsets[static_cast<std::size_t>(r)] = total;
    total += lengths[static_cast<std::size_t>(r)];
  }
  std::string all(static_cast<std::size_t>(total), '\0');
  FB_MPI_CHECK(
      MPI_Allgatherv(bytes.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, comm_));
  std::vector<std::string> out;
  for (int r = 0; r < size_; ++r)
    out.push_back(all.substr(static_cast<std::size_t>(offsets[static_cast<std::size_t>(r)]),
                             static_cast<std::size_t>(lengths[static_cast<std::size_t>(r)])));
  return out;
}

std::vector<std::string> MpiPlane::gather(const std::string& bytes, int root) {
  int length = length_of(bytes);
  std::vector<int> lengths(static_cast<std::size_t>(size_)), offsets(static_cast<std::size_t>(size_));
  FB_MPI_CHECK(MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, root, comm_));
  int total = 0;
  for (int r = 0; r < size_; ++r) {
    offsets[static_cast<std::size_t>(r)] = total;
    total += lengths[static_cast<std::size_t>(r)];
  }
  std::string all(static_cast<std::size_t>(rank_ == root ? total : 0), '\0');
  FB_MPI_CHECK(
      MPI_Gatherv(bytes.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, root, comm_));
  std::vector<std::string> out;
  if (rank_ == root)
    for (int r = 0; r < size_; ++r)
      out.push_back(all.substr(static_cast<std::size_t>(offsets[static_cast<std::size_t>(r)]),
                               static_cast<std::size_t>(lengths[static_cast<std::size_t>(r)])));
  return out;
}

std::string MpiPlane::exchange(int peer, const std::string& bytes) {
  constexpr int kTag = 77;
  unsigned long long mine = bytes.size(), theirs = 0;
  FB_MPI_CHECK(MPI_Sendrecv(&mine, 1, MPI_UNSIGNED_LONG_LONG, peer, kTag, &theirs, 1, MPI_UNSIGNED_LONG_LONG, peer,
                            kTag, comm_, MPI_STATUS_IGNORE));
  std::string out(theirs, '\0');
  FB_MPI_CHECK(MPI_Sendrecv(bytes.data(), length_of(bytes), MPI_CHAR, peer, kTag, out.data(), static_cast<int>(theirs),
                            MPI_CHAR, peer, kTag, comm_, MPI_STATUS_IGNORE));
  return out;
}

std::unique_ptr<fabricbench::ControlPlane> MpiPlane::split(int color, int key) {
  MPI_Comm made = MPI_COMM_NULL;
  FB_MPI_CHECK(MPI_Comm_split(comm_, color < 0 ? MPI_UNDEFINED : color, key, &made));
  if (made == MPI_COMM_NULL) return nullptr;
  return std::unique_ptr<MpiPlane>(new MpiPlane(made));
}

std::unique_ptr<fabricbench::ControlPlane> MpiPlane::split_by_node() {
  MPI_Comm made = MPI_COMM_NULL;
  FB_MPI_CHECK(MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &made));
  return std::unique_ptr<MpiPlane>(new MpiPlane(made));
}

std::string MpiPlane::node_name() const {
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  FB_MPI_CHECK(MPI_Get_processor_name(name, &length));
  return std::string(name, static_cast<std::size_t>(length));
}

void MpiPlane::abort(int code) {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);  // MPI_Abort does not return; if it did, nothing may go on
}

namespace {
std::optional<Session>& late_session() {
  static std::optional<Session> session;
  return session;
}
}  // namespace

MPI_Comm late_self_comm() {
  int started = 0;
  FB_MPI_CHECK(MPI_Initialized(&started));
  if (!started) {
    int argc = 0;
    char** argv = nullptr;
    late_session().emplace(argc, argv);
  }
  return MPI_COMM_SELF;
}

void finish_late_session() { late_session().reset(); }

void abort_if_started(int code) {
  int started = 0, finalized = 0;
  MPI_Initialized(&started);
  MPI_Finalized(&finalized);
  if (started && !finalized) MPI_Abort(MPI_COMM_WORLD, code);
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
