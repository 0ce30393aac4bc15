// SPDX-License-Identifier: Apache-2.0
// The Gloo control plane among real processes: four ranks forked here meet through rank 0's store
// on the loopback, as torchrun's workers would, and every call of the interface is checked on
// every rank. A rank that fails a check exits non-zero; the parent waits with a deadline.
#include "common/gloo_plane.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <thread>

namespace fabricbench {
namespace {

// A port the kernel has just handed out, free again: the store's (MASTER_PORT + 1).
int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  socklen_t length = sizeof address;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  ::close(fd);
  return ntohs(address.sin_port);
}

#define CHECK_OR_EXIT(condition, code)                                                            \
  do {                                                                                            \
    if (!(condition)) {                                                                           \
      std::fprintf(stderr, "rank %d: check failed at line %d: %s\n", rank, __LINE__, #condition); \
      std::_Exit(code);                                                                           \
    }                                                                                             \
  } while (0)

// One rank's whole life: every call of the plane, checked.
[[noreturn]] void run_rank(int rank, int size, int store_port) {
  LaunchEnvironment launch{"a test", rank, size, 0, size, "127.0.0.1", store_port, 30};
  try {
    const std::unique_ptr<ControlPlane> world = make_gloo_world(launch);
    CHECK_OR_EXIT(world->rank() == rank && world->size() == size, 10);
    world->barrier();
    double sums[2] = {1.0 * rank, 1.0};
    world->all_reduce(std::span<double>(sums), ControlPlane::Fold::kSum);
    CHECK_OR_EXIT(sums[0] == size * (size - 1) / 2.0 && sums[1] == size, 11);
    std::int64_t largest[1] = {rank * 10};
    world->all_reduce(std::span<std::int64_t>(largest), ControlPlane::Fold::kMax);
    CHECK_OR_EXIT(largest[0] == (size - 1) * 10, 12);
    CHECK_OR_EXIT(all_reduce(*world, 5.0 - rank, ControlPlane::Fold::kMin) == 5.0 - (size - 1), 13);
    const auto [value, at] = world->max_location(rank == 2 ? 7.5 : 1.0);
    CHECK_OR_EXIT(value == 7.5 && at == 2, 14);
    const auto [tied, first] = world->max_location(3.0);
    CHECK_OR_EXIT(tied == 3.0 && first == 0, 15);
    CHECK_OR_EXIT(world->broadcast(rank == 1 ? "from one" : "", 1) == "from one", 16);
    const auto letters = [](int r) { return std::string(static_cast<std::size_t>(r), static_cast<char>('a' + r)); };
    const std::vector<std::string> all = world->all_gather(letters(rank));
    for (int r = 0; r < size; ++r) CHECK_OR_EXIT(all[static_cast<std::size_t>(r)] == letters(r), 17);
    const std::vector<std::string> gathered = world->gather(std::to_string(rank), 0);
    CHECK_OR_EXIT(
        rank == 0 ? gathered.size() == static_cast<std::size_t>(size) && gathered[3] == "3" : gathered.empty(), 18);
    // Pairs 0-1 and 2-3, messages of different lengths each way.
    const int peer = rank ^ 1;
    const auto message = [](int r) { return std::string(static_cast<std::size_t>(100 + r), 'x'); };
    CHECK_OR_EXIT(world->exchange(peer, message(rank)) == message(peer), 19);
    // Split by parity, ordered by a key that reverses the ranks; rank 3 sits out a second split.
    const std::unique_ptr<ControlPlane> half = world->split(rank % 2, -rank);
    CHECK_OR_EXIT(half && half->size() == size / 2 && half->rank() == (rank < 2 ? 1 : 0), 20);
    CHECK_OR_EXIT(all_reduce(*half, std::int64_t{rank}, ControlPlane::Fold::kSum) == (rank % 2 ? 4 : 2), 21);
    const std::unique_ptr<ControlPlane> most = world->split(rank == 3 ? -1 : 0, rank);
    CHECK_OR_EXIT((rank == 3) == !most, 22);
    if (most) CHECK_OR_EXIT(most->size() == 3, 23);
    const std::unique_ptr<ControlPlane> node = world->split_by_node();
    CHECK_OR_EXIT(node->size() == size && node->rank() == rank, 24);  // one host
    // A pending barrier completes only once the last rank enters it.
    if (rank == 0) std::this_thread::sleep_for(std::chrono::milliseconds(300));
    const auto pending = world->start_barrier();
    pending->wait();
    CHECK_OR_EXIT(pending->complete(), 25);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rank %d: %s\n", rank, e.what());
    std::_Exit(30);
  }
  std::_Exit(0);
}

TEST(GlooPlane, FourProcessesMeetAndEveryCallAgrees) {
  constexpr int kSize = 4;
  const int port = free_port();
  std::vector<pid_t> children;
  for (int rank = 0; rank < kSize; ++rank) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) run_rank(rank, kSize, port);
    children.push_back(pid);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (int rank = 0; rank < kSize; ++rank) {
    int status = 0;
    pid_t done = 0;
    while ((done = ::waitpid(children[static_cast<std::size_t>(rank)], &status, WNOHANG)) == 0 &&
           std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (done == 0) {
      for (const pid_t child : children) ::kill(child, SIGKILL);
      for (const pid_t child : children) ::waitpid(child, nullptr, 0);
      FAIL() << "rank " << rank << " did not finish within 60 s";
    }
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "rank " << rank << " ended with status " << status;
  }
}

TEST(GlooPlane, AWorldThatNeverFillsEndsWithinTheRendezvousTimeout) {
  const int port = free_port();
  const auto start = std::chrono::steady_clock::now();
  LaunchEnvironment launch{"a test", 0, 2, 0, 2, "127.0.0.1", port, 2};  // rank 1 never comes
  try {
    make_gloo_world(launch);
    FAIL() << "a world of one of its two ranks formed";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("did not arrive within 2 s"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
}

TEST(GlooPlane, AStoreThatNeverAnswersIsNamed) {
  LaunchEnvironment launch{"a test", 1, 2, 0, 2, "127.0.0.1", free_port(), 1};  // rank 0 never serves
  try {
    make_gloo_world(launch);
    FAIL() << "connected to nobody";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("did not answer within 1 s"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace fabricbench
