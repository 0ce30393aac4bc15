// SPDX-License-Identifier: Apache-2.0
#include "common/peer_survey.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>

#include "common/watchdog.hpp"

namespace fabricbench {
namespace {

constexpr std::size_t kMaxAddresses = 8;
constexpr std::size_t kMaxDatagram = 1400;
constexpr std::size_t kMaxNamed = 6;  // silent ranks named one by one before "and N more"

/// What every rank publishes over the control plane: its port and the IPv4 addresses of its interfaces.
struct Published {
  std::uint16_t port = 0;
  std::uint16_t count = 0;
  std::array<std::uint32_t, kMaxAddresses> ipv4{};
};

/// Addresses of the interfaces that are up and not loopback: how other hosts reach this one.
Published local_addresses(std::uint16_t port) {
  Published mine;
  mine.port = port;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return mine;
  for (ifaddrs* a = list; a != nullptr && mine.count < kMaxAddresses; a = a->ifa_next) {
    if (a->ifa_addr == nullptr || a->ifa_addr->sa_family != AF_INET) continue;
    if ((a->ifa_flags & IFF_UP) == 0 || (a->ifa_flags & IFF_LOOPBACK) != 0) continue;
    mine.ipv4[mine.count++] = reinterpret_cast<const sockaddr_in*>(a->ifa_addr)->sin_addr.s_addr;
  }
  freeifaddrs(list);
  return mine;
}

int open_udp_socket() {
  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in any{};
  any.sin_family = AF_INET;
  any.sin_addr.s_addr = htonl(INADDR_ANY);
  if (bind(fd, reinterpret_cast<const sockaddr*>(&any), sizeof any) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

std::uint16_t bound_port(int fd) {
  sockaddr_in self{};
  socklen_t length = sizeof self;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&self), &length) != 0) return 0;
  return self.sin_port;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::string rank_list(const std::vector<int>& ranks, const std::vector<std::string>& host_of_rank) {
  std::string text;
  for (std::size_t i = 0; i < ranks.size() && i < kMaxNamed; ++i)
    text += fmt::format("{}rank {} on {}", i == 0 ? "" : ", ", ranks[i],
                        host_of_rank.at(static_cast<std::size_t>(ranks[i])));
  if (ranks.size() > kMaxNamed) text += fmt::format(" and {} more", ranks.size() - kMaxNamed);
  return text;
}

}  // namespace

std::string explain_survey(const std::vector<PeerAnswer>& answers, const std::vector<std::string>& host_of_rank,
                           const std::string& my_activity) {
  std::vector<int> silent;
  struct Group {
    std::vector<int> ranks;
    double longest = -1;
  };
  std::map<std::pair<bool, std::string>, Group> live;  // (waiting, activity) -> ranks
  for (const PeerAnswer& a : answers) {
    if (!a.answered) {
      silent.push_back(a.rank);
      continue;
    }
    Group& g = live[{a.waiting_seconds >= 0, a.activity}];
    g.ranks.push_back(a.rank);
    g.longest = std::max(g.longest, a.waiting_seconds);
  }
  std::vector<std::string> parts;
  if (!silent.empty())
    parts.push_back(fmt::format("{} did not answer (stopped, dead or cut off: the likely culprit{})",
                                rank_list(silent, host_of_rank), silent.size() > 1 ? "s" : ""));
  for (const auto& [key, group] : live) {
    const auto& [waiting, activity] = key;
    const std::string what = activity == my_activity ? "the same operation" : activity;
    parts.push_back(waiting ? fmt::format("{} wait{} in {} (up to {:.1f} s)", rank_list(group.ranks, host_of_rank),
                                          group.ranks.size() == 1 ? "s" : "", what, group.longest)
                            : fmt::format("{} {} busy in {}, not waiting", rank_list(group.ranks, host_of_rank),
                                          group.ranks.size() == 1 ? "is" : "are", what));
  }
  if (parts.empty()) return {};
  std::string text = "Peers: ";
  for (std::size_t i = 0; i < parts.size(); ++i) text += (i == 0 ? "" : "; ") + parts[i];
  return text + ".";
}

PeerSurvey::PeerSurvey(Watchdog& watchdog, const Topology& topology, ControlPlane& world)
    : watchdog_(watchdog), topology_(topology) {
  socket_ = open_udp_socket();
  // Every rank takes part in the exchange even when its socket failed (port 0: unreachable), so
  // the collective stays matched; a survey then reports such a rank as silent.
  const Published mine = socket_ >= 0 ? local_addresses(bound_port(socket_)) : Published{};
  std::vector<Published> all(static_cast<std::size_t>(topology.size));
  const std::vector<std::string> published =
      world.all_gather(std::string(reinterpret_cast<const char*>(&mine), sizeof mine));
  for (std::size_t r = 0; r < all.size(); ++r) std::memcpy(&all[r], published[r].data(), sizeof mine);
  routes_.resize(all.size());
  for (std::size_t r = 0; r < all.size(); ++r) {
    if (all[r].port == 0) continue;
    if (topology.host_of_rank[r] == topology.host) {
      routes_[r].push_back({htonl(INADDR_LOOPBACK), all[r].port});
      continue;
    }
    for (std::size_t i = 0; i < all[r].count; ++i) routes_[r].push_back({all[r].ipv4[i], all[r].port});
  }
  if (topology.size < 2 || socket_ < 0 || pipe2(wake_, O_CLOEXEC) != 0) return;
  answerer_ = std::thread([this] { answer_queries(); });
  register_timeout_explainer(this);
}

PeerSurvey::~PeerSurvey() {
  register_timeout_explainer(nullptr);
  if (answerer_.joinable()) {
    const char stop = 0;
    if (write(wake_[1], &stop, 1) == 1)
      answerer_.join();
    else
      answerer_.detach();
  }
  for (int fd : {socket_, wake_[0], wake_[1]})
    if (fd >= 0) close(fd);
}

void PeerSurvey::answer_queries() {
  std::array<char, kMaxDatagram> buffer{};
  while (true) {
    pollfd fds[2] = {{socket_, POLLIN, 0}, {wake_[0], POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) continue;
    if (fds[1].revents != 0) return;
    sockaddr_in from{};
    socklen_t length = sizeof from;
    const ssize_t n =
        recvfrom(socket_, buffer.data(), buffer.size() - 1, 0, reinterpret_cast<sockaddr*>(&from), &length);
    if (n <= 0) continue;
    buffer[static_cast<std::size_t>(n)] = '\0';
    int to_rank = -1, from_rank = -1;
    unsigned long nonce = 0;
    if (std::sscanf(buffer.data(), "FBQ2 %d %lu %d", &to_rank, &nonce, &from_rank) != 3 || to_rank != topology_.rank)
      continue;
    if (topology_.rank == 0) watchdog_.notice_peer_timeout(from_rank);  // rank 0 saves the run's results
    const Watchdog::Status status = watchdog_.status();
    std::string reply = fmt::format("FBR1 {} {} {:.3f} {}", topology_.rank, nonce, status.waiting_seconds,
                                    status.activity.substr(0, kMaxDatagram - 64));
    sendto(socket_, reply.data(), reply.size(), 0, reinterpret_cast<const sockaddr*>(&from), length);
  }
}

std::vector<PeerAnswer> PeerSurvey::ask_all(double deadline_seconds) const {
  std::vector<PeerAnswer> answers;
  for (int r = 0; r < topology_.size; ++r)
    if (r != topology_.rank) answers.push_back({r, false, {}, -1});
  const int asker = open_udp_socket();  // its own socket: the answering thread reads the shared one
  if (asker < 0) return answers;
  const auto nonce = static_cast<unsigned long>(std::chrono::steady_clock::now().time_since_epoch().count());
  auto ask_missing = [&] {
    for (const PeerAnswer& a : answers) {
      if (a.answered) continue;
      const std::string query = fmt::format("FBQ2 {} {} {}", a.rank, nonce, topology_.rank);
      for (const Address& to : routes_[static_cast<std::size_t>(a.rank)]) {
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = to.ipv4;
        address.sin_port = to.port;
        sendto(asker, query.data(), query.size(), 0, reinterpret_cast<const sockaddr*>(&address), sizeof address);
      }
    }
  };
  const auto start = std::chrono::steady_clock::now();
  std::size_t missing = answers.size();
  std::array<char, kMaxDatagram + 1> buffer{};
  double next_ask = 0;
  while (missing > 0) {
    const double elapsed = seconds_since(start);
    if (elapsed >= deadline_seconds) break;
    if (elapsed >= next_ask) {  // datagrams can be lost: ask the silent ones again
      ask_missing();
      next_ask = elapsed + 0.25;
    }
    pollfd fd{asker, POLLIN, 0};
    const int wait_ms = static_cast<int>(1000 * std::min(next_ask, deadline_seconds) - 1000 * elapsed) + 1;
    if (poll(&fd, 1, wait_ms) <= 0) continue;
    const ssize_t n = recv(asker, buffer.data(), kMaxDatagram, 0);
    if (n <= 0) continue;
    buffer[static_cast<std::size_t>(n)] = '\0';
    int rank = -1;
    unsigned long echoed = 0;
    double waiting = -1;
    int consumed = 0;
    if (std::sscanf(buffer.data(), "FBR1 %d %lu %lf %n", &rank, &echoed, &waiting, &consumed) != 3 || echoed != nonce)
      continue;
    for (PeerAnswer& a : answers)
      if (a.rank == rank && !a.answered) {
        a.answered = true;
        a.waiting_seconds = waiting;
        a.activity = buffer.data() + consumed;
        --missing;
      }
  }
  close(asker);
  return answers;
}

TimeoutExplanation PeerSurvey::explain(double deadline_seconds) const {
  if (topology_.size < 2 || socket_ < 0) return {};
  TimeoutExplanation explanation;
  const std::vector<PeerAnswer> answers = ask_all(deadline_seconds);
  const std::string mine = watchdog_.status().activity;
  explanation.activity_of_rank[topology_.rank] = mine;
  explanation.waiting_seconds_of_rank[topology_.rank] = watchdog_.status().waiting_seconds;
  for (const PeerAnswer& a : answers) {
    if (a.answered) {
      explanation.activity_of_rank[a.rank] = a.activity;
      explanation.waiting_seconds_of_rank[a.rank] = a.waiting_seconds;
    } else {
      explanation.silent_ranks.push_back(a.rank);
    }
  }
  explanation.text = explain_survey(answers, topology_.host_of_rank, mine);
  return explanation;
}

}  // namespace fabricbench
