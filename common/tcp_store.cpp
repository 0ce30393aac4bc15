// SPDX-License-Identifier: Apache-2.0
#include "common/tcp_store.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>

#include "common/error.hpp"

namespace fabricbench {
namespace {

[[noreturn]] void throw_errno(const std::string& what) {
  throw Error(fmt::format("{}: {}", what, std::strerror(errno)));
}

constexpr char kSet = 'S';
constexpr char kGet = 'G';

// Whole buffers or false (the peer closed, or the socket was shut down).
bool read_all(int fd, void* data, std::size_t size) {
  auto* at = static_cast<char*>(data);
  while (size > 0) {
    const ssize_t n = ::recv(fd, at, size, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;  // closed, shut down, or the receive timeout
    at += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

bool write_all(int fd, const void* data, std::size_t size) {
  const auto* at = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::send(fd, at, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    at += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

bool write_length(int fd, std::size_t length) {
  const std::uint32_t value = static_cast<std::uint32_t>(length);
  const unsigned char bytes[4] = {static_cast<unsigned char>(value), static_cast<unsigned char>(value >> 8),
                                  static_cast<unsigned char>(value >> 16), static_cast<unsigned char>(value >> 24)};
  return write_all(fd, bytes, sizeof bytes);
}

bool read_length(int fd, std::uint32_t& length) {
  unsigned char bytes[4];
  if (!read_all(fd, bytes, sizeof bytes)) return false;
  length = bytes[0] | (bytes[1] << 8) | (bytes[2] << 16) | (static_cast<std::uint32_t>(bytes[3]) << 24);
  return true;
}

// A key or value: refused above 64 MiB (a store holds addresses of a few hundred bytes).
bool read_blob(int fd, std::string& text) {
  std::uint32_t length = 0;
  if (!read_length(fd, length) || length > (64u << 20)) return false;
  text.resize(length);
  return read_all(fd, text.data(), length);
}

bool write_blob(int fd, const void* data, std::size_t size) {
  return write_length(fd, size) && write_all(fd, data, size);
}

// Gloo's keys are "<plane>/<rank>": "rank 1's address for world".
std::string describe_key(const std::string& key) {
  const std::size_t slash = key.rfind('/');
  const std::string last = slash == std::string::npos ? key : key.substr(slash + 1);
  if (slash == std::string::npos || last.empty() ||
      !std::all_of(last.begin(), last.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return fmt::format("'{}'", key);
  return fmt::format("rank {}'s address for {}", last, key.substr(0, slash));
}

}  // namespace

Socket::~Socket() {
  if (fd_ >= 0) ::close(fd_);
}

Socket& Socket::operator=(Socket&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.release();
  }
  return *this;
}

StoreServer::StoreServer(int port) {
  // IPv6 with IPv4 peers mapped in; IPv4 alone where the kernel has no IPv6 (ipv6.disable=1).
  const int on = 1, off = 0;
  sockaddr_storage address{};
  socklen_t length = 0;
  listener_ = Socket(::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (listener_.get() >= 0) {
    ::setsockopt(listener_.get(), IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off);
    auto& v6 = reinterpret_cast<sockaddr_in6&>(address);
    v6.sin6_family = AF_INET6;
    v6.sin6_addr = in6addr_any;
    v6.sin6_port = htons(static_cast<std::uint16_t>(port));
    length = sizeof v6;
  } else {
    listener_ = Socket(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (listener_.get() < 0) throw_errno("socket() for the rendezvous store");
    auto& v4 = reinterpret_cast<sockaddr_in&>(address);
    v4.sin_family = AF_INET;
    v4.sin_addr.s_addr = htonl(INADDR_ANY);
    v4.sin_port = htons(static_cast<std::uint16_t>(port));
    length = sizeof v4;
  }
  ::setsockopt(listener_.get(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  if (::bind(listener_.get(), reinterpret_cast<const sockaddr*>(&address), length) != 0)
    throw_errno(
        fmt::format("the rendezvous store cannot listen on port {} (MASTER_PORT + 1, or "
                    "FABRICBENCH_STORE_PORT): bind",
                    port));
  if (::listen(listener_.get(), 1024) != 0) throw_errno(fmt::format("listen on port {}", port));
  acceptor_ = std::thread([this] { accept_loop(); });
}

StoreServer::~StoreServer() {
  stopping_ = true;
  ::shutdown(listener_.get(), SHUT_RDWR);  // wakes accept()
  acceptor_.join();
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    for (const int connection : connections_) ::shutdown(connection, SHUT_RDWR);  // wakes their reads
  }
  for (std::thread& thread : threads_) thread.join();
}

void StoreServer::accept_loop() {
  while (!stopping_) {
    const int connection = ::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC);
    if (connection < 0) {
      if (stopping_) return;  // shut down
      // Out of descriptors or buffers for now (Gloo opens a socket per peer): the clients in the
      // backlog must still be served, so wait and take them.
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      continue;
    }
    const std::lock_guard<std::mutex> lock(mutex_);
    connections_.push_back(connection);
    threads_.emplace_back([this, connection] { serve(connection); });
  }
}

void StoreServer::serve(int connection) {
  const Socket owned(connection);
  char op = 0;
  std::string key, value;
  while (read_all(connection, &op, 1) && read_blob(connection, key)) {
    if (op == kSet) {
      if (!read_blob(connection, value)) break;
      {
        const std::lock_guard<std::mutex> lock(mutex_);
        values_[key].assign(value.begin(), value.end());
      }
      if (!write_all(connection, &kSet, 1)) break;
    } else if (op == kGet) {
      std::vector<char> found;
      char present = 0;
      {
        const std::lock_guard<std::mutex> lock(mutex_);
        if (const auto it = values_.find(key); it != values_.end()) {
          found = it->second;
          present = 1;
        }
      }
      if (!write_all(connection, &present, 1) || (present && !write_blob(connection, found.data(), found.size())))
        break;
    } else {
      break;  // not our protocol: drop the connection
    }
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  std::erase(connections_, connection);
}

TcpStoreClient::TcpStoreClient(const std::string& host, int port, std::chrono::milliseconds timeout)
    : address_(fmt::format("{}:{}", host, port)), timeout_(timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string last_failure = "no answer";
  while (true) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    const int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found);
    if (rc != 0) {
      last_failure = fmt::format("cannot resolve {}: {}", host, ::gai_strerror(rc));
    } else {
      for (const addrinfo* a = found; a; a = a->ai_next) {
        Socket candidate(::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol));
        if (candidate.get() < 0) continue;
        if (::connect(candidate.get(), a->ai_addr, a->ai_addrlen) == 0) {
          socket_ = std::move(candidate);
          break;
        }
        last_failure = std::strerror(errno);
      }
      ::freeaddrinfo(found);
    }
    if (socket_.get() >= 0) break;
    if (std::chrono::steady_clock::now() >= deadline)
      throw Error(
          fmt::format("the rendezvous store at {} did not answer within {} s ({}): is MASTER_ADDR rank 0's "
                      "node, and is the port open between the nodes?",
                      address_, timeout.count() / 1000, last_failure));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const int on = 1;
  ::setsockopt(socket_.get(), IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
  // A store that accepted and went silent ends a request with an error, not a hang.
  timeval limit{};
  limit.tv_sec = static_cast<time_t>(std::max<std::int64_t>(1, timeout.count() / 1000));
  ::setsockopt(socket_.get(), SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  ::setsockopt(socket_.get(), SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
}

void TcpStoreClient::set(const std::string& key, const std::vector<char>& data) {
  const std::lock_guard<std::mutex> lock(mutex_);
  char answer = 0;
  if (!write_all(socket_.get(), &kSet, 1) || !write_blob(socket_.get(), key.data(), key.size()) ||
      !write_blob(socket_.get(), data.data(), data.size()) || !read_all(socket_.get(), &answer, 1))
    throw Error(fmt::format("the rendezvous store at {} closed the connection (rank 0 ended?) while setting {}",
                            address_, key));
}

bool TcpStoreClient::try_get(const std::string& key, std::vector<char>& value) {
  const std::lock_guard<std::mutex> lock(mutex_);
  char present = 0;
  std::string text;
  if (!write_all(socket_.get(), &kGet, 1) || !write_blob(socket_.get(), key.data(), key.size()) ||
      !read_all(socket_.get(), &present, 1) || (present && !read_blob(socket_.get(), text)))
    throw Error(fmt::format("the rendezvous store at {} closed the connection (rank 0 ended?) while reading {}",
                            address_, key));
  value.assign(text.begin(), text.end());
  return present != 0;
}

std::vector<char> TcpStoreClient::get(const std::string& key) {
  std::vector<char> value;
  await_value(key, value, std::chrono::steady_clock::now() + timeout_, timeout_);
  return value;
}

void TcpStoreClient::wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::vector<char> value;
  for (const std::string& key : keys) await_value(key, value, deadline, timeout);
}

void TcpStoreClient::await_value(const std::string& key, std::vector<char>& value,
                                 std::chrono::steady_clock::time_point deadline, std::chrono::milliseconds timeout) {
  auto pause = std::chrono::milliseconds(1);
  while (!try_get(key, value)) {
    if (std::chrono::steady_clock::now() >= deadline)
      throw Error(
          fmt::format("rendezvous at {}: {} did not arrive within {} s: a rank never started or stopped "
                      "before meeting the others (is WORLD_SIZE the number of ranks started?)",
                      address_, describe_key(key), timeout.count() / 1000));
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(50));
  }
}

std::string local_address_towards(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0)
    throw Error(fmt::format("{} does not resolve", host));
  std::string address;
  for (const addrinfo* a = found; a && address.empty(); a = a->ai_next) {
    const Socket probe(::socket(a->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    if (probe.get() < 0 || ::connect(probe.get(), a->ai_addr, a->ai_addrlen) != 0) continue;  // no packet is sent
    sockaddr_storage mine{};
    socklen_t length = sizeof mine;
    if (::getsockname(probe.get(), reinterpret_cast<sockaddr*>(&mine), &length) != 0) continue;
    char text[INET6_ADDRSTRLEN] = {};
    const void* raw = mine.ss_family == AF_INET
                          ? static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(&mine)->sin_addr)
                          : static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(&mine)->sin6_addr);
    if (::inet_ntop(mine.ss_family, raw, text, sizeof text)) address = text;
  }
  ::freeaddrinfo(found);
  if (address.empty()) throw Error(fmt::format("no route from this node to {}", host));
  return address;
}

bool on_loopback_interface(const std::string& address) {
  ifaddrs* interfaces = nullptr;
  if (::getifaddrs(&interfaces) != 0) return address.starts_with("127.") || address == "::1";
  std::optional<bool> loopback;
  for (const ifaddrs* i = interfaces; i && !loopback; i = i->ifa_next) {
    if (!i->ifa_addr || (i->ifa_addr->sa_family != AF_INET && i->ifa_addr->sa_family != AF_INET6)) continue;
    char text[INET6_ADDRSTRLEN] = {};
    const void* raw = i->ifa_addr->sa_family == AF_INET
                          ? static_cast<const void*>(&reinterpret_cast<const sockaddr_in*>(i->ifa_addr)->sin_addr)
                          : static_cast<const void*>(&reinterpret_cast<const sockaddr_in6*>(i->ifa_addr)->sin6_addr);
    if (::inet_ntop(i->ifa_addr->sa_family, raw, text, sizeof text) && address == text)
      loopback = (i->ifa_flags & IFF_LOOPBACK) != 0;
  }
  ::freeifaddrs(interfaces);
  // Not an interface's own address (127.0.1.1 is lo's by route only): the loopback range decides.
  return loopback.value_or(address.starts_with("127.") || address == "::1");
}

}  // namespace fabricbench
