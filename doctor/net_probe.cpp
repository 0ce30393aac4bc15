// SPDX-License-Identifier: Apache-2.0
#include "doctor/net_probe.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

namespace fabricbench::doctor {
namespace {

using Clock = std::chrono::steady_clock;

/// A socket descriptor, closed when this goes away.
class Socket {
 public:
  explicit Socket(int fd = -1) noexcept : fd_(fd) {}
  ~Socket() {
    if (fd_ >= 0) ::close(fd_);
  }
  Socket(Socket&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Socket& operator=(Socket&& other) noexcept {
    std::swap(fd_, other.fd_);
    return *this;
  }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

/// "connection refused (ECONNREFUSED): nothing listens there" and the like.
std::string connect_error(int error) {
  switch (error) {
    case ECONNREFUSED: return "connection refused (ECONNREFUSED): nothing listens there";
    case EHOSTUNREACH: return "no route to host (EHOSTUNREACH)";
    case ENETUNREACH: return "network unreachable (ENETUNREACH)";
    case ETIMEDOUT: return "timed out (ETIMEDOUT)";
    case ECONNRESET: return "connection reset (ECONNRESET)";
    case EADDRNOTAVAIL: return "address not available (EADDRNOTAVAIL)";
    case EACCES:
    case EPERM: return fmt::format("refused by a local firewall rule ({})", std::strerror(error));
    default: return std::strerror(error);
  }
}

/// The socket address of a numeric IPv4 or IPv6 address and a port; false when it is neither.
bool socket_address(const std::string& address, int port, sockaddr_storage& out, socklen_t& length) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (::getaddrinfo(address.c_str(), std::to_string(port).c_str(), &hints, &found) != 0 || !found) return false;
  std::memcpy(&out, found->ai_addr, found->ai_addrlen);
  length = found->ai_addrlen;
  ::freeaddrinfo(found);
  return true;
}

/// Accepts and closes what is waiting on a listener, so the peer's connect completes and its
/// backlog never fills.
void drain(int listener) {
  for (int fd; (fd = ::accept4(listener, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0;) ::close(fd);
}

/// One connect started: its socket, or an immediate answer in `error`.
Socket start_connect(const ConnectTarget& target, std::string& error, bool& done) {
  sockaddr_storage address{};
  socklen_t length = 0;
  done = true;
  if (!socket_address(target.address, target.port, address, length)) {
    error = fmt::format("'{}' is not an IP address", target.address);
    return Socket();
  }
  Socket s(::socket(address.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (s.get() < 0) {
    error = fmt::format("no socket: {}", std::strerror(errno));
    return s;
  }
  if (::connect(s.get(), reinterpret_cast<const sockaddr*>(&address), length) == 0) return s;
  if (errno != EINPROGRESS) {
    error = connect_error(errno);
    return s;
  }
  done = false;
  return s;
}

/// Connects `count` targets from `first` at once, waiting until `seconds` have passed.
void connect_batch(const std::vector<ConnectTarget>& targets, std::size_t first, std::size_t count, double seconds,
                   const std::vector<int>& serving, std::vector<std::string>& errors) {
  std::vector<std::pair<std::size_t, Socket>> pending;
  for (std::size_t i = first; i < first + count; ++i) {
    bool done = false;
    Socket s = start_connect(targets[i], errors[i], done);
    if (!done) pending.emplace_back(i, std::move(s));
  }
  const auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
  while (!pending.empty()) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) break;
    std::vector<pollfd> polled;
    for (const auto& [index, s] : pending) polled.push_back({s.get(), POLLOUT, 0});
    for (const int fd : serving) polled.push_back({fd, POLLIN, 0});
    if (::poll(polled.data(), polled.size(), static_cast<int>(std::min<long long>(left, 100))) < 0 && errno != EINTR)
      break;
    for (std::size_t k = pending.size(); k < polled.size(); ++k)
      if (polled[k].revents & POLLIN) drain(polled[k].fd);
    std::vector<std::pair<std::size_t, Socket>> still;
    for (std::size_t k = 0; k < pending.size(); ++k) {
      if (polled[k].revents == 0) {
        still.push_back(std::move(pending[k]));
        continue;
      }
      int error = 0;
      socklen_t size = sizeof error;
      ::getsockopt(polled[k].fd, SOL_SOCKET, SO_ERROR, &error, &size);
      errors[pending[k].first] = error == 0 ? "" : connect_error(error);
    }
    pending = std::move(still);
  }
  for (const auto& [index, s] : pending)
    errors[index] = fmt::format("no answer within {:g} s: a firewall dropping the packets, or the host down", seconds);
}

/// What the resolver threads share with the caller, who may stop waiting before they finish.
struct Lookups {
  std::mutex lock;
  std::condition_variable finished;
  std::deque<std::size_t> queue;
  std::vector<std::string> names, answers;
  std::size_t left = 0;
};

std::string lookup(const std::string& name) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int rc = ::getaddrinfo(name.c_str(), nullptr, &hints, &found);
  if (rc != 0) return fmt::format("unresolved ({})", rc == EAI_SYSTEM ? std::strerror(errno) : ::gai_strerror(rc));
  std::set<std::string> addresses;
  for (const addrinfo* a = found; a; a = a->ai_next) {
    char text[INET6_ADDRSTRLEN] = {};
    if (::getnameinfo(a->ai_addr, a->ai_addrlen, text, sizeof text, nullptr, 0, NI_NUMERICHOST) == 0)
      addresses.insert(text);
  }
  ::freeaddrinfo(found);
  std::string joined;
  for (const std::string& a : addresses) joined += (joined.empty() ? "" : ", ") + a;
  return joined.empty() ? "unresolved (no address)" : joined;
}

void resolve_worker(const std::shared_ptr<Lookups>& shared) {
  for (;;) {
    std::size_t index = 0;
    std::string name;
    {
      const std::lock_guard<std::mutex> guard(shared->lock);
      if (shared->queue.empty()) return;
      index = shared->queue.front();
      shared->queue.pop_front();
      name = shared->names[index];
    }
    std::string answer = lookup(name);
    const std::lock_guard<std::mutex> guard(shared->lock);
    shared->answers[index] = std::move(answer);
    if (--shared->left == 0) shared->finished.notify_all();
  }
}

}  // namespace

std::vector<Interface> local_interfaces() {
  std::vector<Interface> found;
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return found;
  const std::unique_ptr<ifaddrs, void (*)(ifaddrs*)> owned(list, ::freeifaddrs);
  for (const ifaddrs* i = list; i; i = i->ifa_next) {
    if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET) continue;
    char text[INET_ADDRSTRLEN] = {};
    ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(i->ifa_addr)->sin_addr, text, sizeof text);
    found.push_back({i->ifa_name, text, (i->ifa_flags & IFF_UP) != 0, (i->ifa_flags & IFF_LOOPBACK) != 0});
  }
  return found;
}

Listener::Listener(const std::string& address, int port, std::string& error) {
  sockaddr_storage where{};
  socklen_t length = 0;
  if (!socket_address(address, port, where, length)) {
    error = fmt::format("'{}' is not an IP address", address);
    return;
  }
  Socket s(::socket(where.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  const int on = 1;
  if (s.get() < 0 || ::setsockopt(s.get(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof on) != 0 ||
      ::bind(s.get(), reinterpret_cast<const sockaddr*>(&where), length) != 0 || ::listen(s.get(), SOMAXCONN) != 0) {
    error = errno == EADDRINUSE ? "taken by another process (EADDRINUSE)" : std::strerror(errno);
    return;
  }
  socklen_t size = sizeof where;
  ::getsockname(s.get(), reinterpret_cast<sockaddr*>(&where), &size);
  port_ = ntohs(where.ss_family == AF_INET ? reinterpret_cast<const sockaddr_in*>(&where)->sin_port
                                           : reinterpret_cast<const sockaddr_in6*>(&where)->sin6_port);
  fd_ = s.release();
  error.clear();
}

Listener::~Listener() {
  if (fd_ >= 0) ::close(fd_);
}

Listener::Listener(Listener&& other) noexcept : fd_(std::exchange(other.fd_, -1)), port_(other.port_) {}

Listener& Listener::operator=(Listener&& other) noexcept {
  std::swap(fd_, other.fd_);
  std::swap(port_, other.port_);
  return *this;
}

std::vector<std::string> connect_all(const std::vector<ConnectTarget>& targets, double seconds,
                                     const std::vector<int>& serving) {
  std::vector<std::string> errors(targets.size());
  for (std::size_t first = 0; first < targets.size(); first += kConnectsInFlight)
    connect_batch(targets, first, std::min(kConnectsInFlight, targets.size() - first), seconds, serving, errors);
  return errors;
}

std::vector<std::string> resolve_all(const std::vector<std::string>& names, double seconds) {
  constexpr std::size_t kThreads = 8;
  auto shared = std::make_shared<Lookups>();
  shared->names = names;
  shared->answers.assign(names.size(), "");
  shared->left = names.size();
  for (std::size_t i = 0; i < names.size(); ++i) shared->queue.push_back(i);
  // Detached: a resolver stuck on a DNS server that does not answer is left behind, holding its
  // share of the state, and the check goes on at the deadline.
  for (std::size_t t = 0; t < std::min(kThreads, names.size()); ++t) std::thread(resolve_worker, shared).detach();
  std::unique_lock<std::mutex> guard(shared->lock);
  shared->finished.wait_for(guard, std::chrono::duration<double>(seconds), [&] { return shared->left == 0; });
  std::vector<std::string> answers = shared->answers;
  for (std::string& answer : answers)
    if (answer.empty()) answer = fmt::format("no answer within {:g} s", seconds);
  return answers;
}

bool resolved(const std::string& answer) {
  return !answer.empty() && !answer.starts_with("unresolved") && !answer.starts_with("no answer");
}

}  // namespace fabricbench::doctor
