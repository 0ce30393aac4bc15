// SPDX-License-Identifier: Apache-2.0
// The rendezvous store of a launch without MPI: a key/value store rank 0 serves over TCP at the
// launcher's address (MASTER_ADDR, port MASTER_PORT + 1), where Gloo's contexts swap their
// addresses. Gloo ships file, hash and Redis stores; none reaches across nodes without a shared
// file system or a Redis server, so this is the one piece of wire code the Gloo plane adds.
// Requests are [op][key length][key][value length][value], lengths as 4-byte little-endian.
#pragma once

#include <gloo/rendezvous/store.h>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace fabricbench {

/// A socket, closed on destruction.
class Socket {
 public:
  Socket() = default;
  explicit Socket(int fd) : fd_(fd) {}
  ~Socket();
  Socket(Socket&& other) noexcept : fd_(other.release()) {}
  Socket& operator=(Socket&& other) noexcept;
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_ = -1;
};

/// Rank 0's side: serves the store on every address of the node at `port` until destroyed.
class StoreServer {
 public:
  /// Throws Error naming the port when it cannot listen there (taken, or not allowed).
  explicit StoreServer(int port);
  ~StoreServer();
  StoreServer(const StoreServer&) = delete;
  StoreServer& operator=(const StoreServer&) = delete;

 private:
  void accept_loop();
  void serve(int connection);

  Socket listener_;
  std::atomic<bool> stopping_{false};
  std::mutex mutex_;  // the map and the connections
  std::map<std::string, std::vector<char>> values_;
  std::vector<int> connections_;
  std::vector<std::thread> threads_;
  std::thread acceptor_;
};

/// Every rank's side (rank 0's too): set, and get or wait that poll until the key is there.
class TcpStoreClient final : public gloo::rendezvous::Store {
 public:
  /// Connects to `host`:`port`, retrying until `timeout` (rank 0 may start later). Throws Error
  /// naming the address and the last failure when it never answers.
  TcpStoreClient(const std::string& host, int port, std::chrono::milliseconds timeout);

  void set(const std::string& key, const std::vector<char>& data) override;
  std::vector<char> get(const std::string& key) override;
  void wait(const std::vector<std::string>& keys) override { wait(keys, timeout_); }
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override;

 private:
  /// The value of `key`, or false when it is not set yet.
  bool try_get(const std::string& key, std::vector<char>& value);
  /// Polls until `key` is set (its value into `value`); past `deadline` throws Error naming it and
  /// `timeout`, the wait it was given.
  void await_value(const std::string& key, std::vector<char>& value, std::chrono::steady_clock::time_point deadline,
                   std::chrono::milliseconds timeout);

  std::string address_;  // "host:port", for errors
  std::chrono::milliseconds timeout_;
  std::mutex mutex_;  // one request at a time on the socket
  Socket socket_;
};

/// The address of this node's route to `host` (the interface a connection to it would leave by),
/// found without sending a packet: what a listener must advertise to be reached from there, where
/// the host name may resolve to 127.0.1.1 (Debian). Throws Error when `host` does not resolve or
/// has no route.
std::string local_address_towards(const std::string& host, int port);

/// Whether `address` (numeric) is one of this node's loopback addresses: an address of an
/// interface flagged loopback, or of the loopback range when no interface holds it (127.0.1.1).
/// A fake host's 127.1.0.x on its eth0 is not.
bool on_loopback_interface(const std::string& address);

}  // namespace fabricbench
