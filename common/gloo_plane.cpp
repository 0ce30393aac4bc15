// SPDX-License-Identifier: Apache-2.0
#include "common/gloo_plane.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <gloo/allgatherv.h>
#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/config.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/tcp/device.h>
#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <optional>
#include <thread>
#include <utility>

#include "common/error.hpp"
#include "common/tcp_store.hpp"
#include "common/topology.hpp"

namespace fabricbench {
namespace {

// A collective's own wait is the watchdog's business (-T), not Gloo's: a rank sitting out a round
// of a link matrix waits for minutes in a barrier.
constexpr std::chrono::hours kNoGlooTimeout(24);
// The slot of exchange(): a pair's sends and receives match in order on it.
constexpr std::uint64_t kExchangeSlot = 0x7fb0000000ull;

// MASTER_ADDR as this rank can reach it: this node's own name, where it does not resolve (a VM's or
// container's host name with no /etc/hosts entry, as torchrun --standalone passes it), is its
// loopback; anything else as given.
std::string reachable_master(const std::string& master, const std::string& this_host) {
  if (master != this_host && master != this_host.substr(0, this_host.find('.'))) return master;
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(master.c_str(), nullptr, &hints, &found) == 0) {
    ::freeaddrinfo(found);
    return master;
  }
  return "127.0.0.1";
}

// What every plane split from one world shares: the store, the device, the launch's words.
struct GlooWorld {
  std::unique_ptr<StoreServer> server;  // rank 0's
  std::unique_ptr<TcpStoreClient> store;
  std::shared_ptr<gloo::transport::Device> device;
  std::string launcher;
  std::string address;  // the device's, where the route to MASTER_ADDR chose it
};

class GlooPlane final : public ControlPlane {
 public:
  // Meets the other `size` ranks of `name` in the store.
  GlooPlane(std::shared_ptr<GlooWorld> world, std::string name, int rank, int size,
            std::chrono::milliseconds rendezvous_timeout)
      : world_(std::move(world)), name_(std::move(name)), rendezvous_timeout_(rendezvous_timeout) {
    auto context = std::make_shared<gloo::rendezvous::Context>(rank, size);
    context->setTimeout(rendezvous_timeout_);  // the store's waits while the ranks meet
    gloo::rendezvous::PrefixStore store(name_, *world_->store);
    try {
      context->connectFullMesh(store, world_->device);
      // Every rank's pairs connected before any may drop the plane: a rank that freed a plane as
      // soon as its own side was up (discover_topology's node plane) cut a peer still connecting.
      gloo::BarrierOptions connected(context);
      gloo::barrier(connected);
    } catch (const std::exception& e) {
      throw Error(fmt::format("connecting the {} rank(s) of {} over Gloo: {}", size, name_, e.what()));
    }
    context->setTimeout(kNoGlooTimeout);
    context_ = std::move(context);
  }

  int rank() const override { return context_->rank; }
  int size() const override { return context_->size; }
  std::string kind() const override { return fmt::format("{} (Gloo over TCP)", world_->launcher); }
  std::string reachable_address() const override { return world_->address; }
  std::string library() const override {
    return fmt::format("Gloo {}.{}.{}", GLOO_VERSION_MAJOR, GLOO_VERSION_MINOR, GLOO_VERSION_PATCH);
  }

  void barrier() override {
    gloo::BarrierOptions options(context_);
    guarded("barrier", [&] { gloo::barrier(options); });
  }

  // Gloo's waits sleep on a condition variable: the plain barrier already leaves the CPUs alone.
  void idle_barrier() override { barrier(); }

  // The world's last barrier keeps rank 0's store and sockets up until every rank is done with
  // them; bounded, since a peer may be gone (its launcher reports that).
  void close() override {
    if (name_ != "world") return;
    try {
      gloo::BarrierOptions options(context_);
      options.setTimeout(rendezvous_timeout_);
      gloo::barrier(options);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "[rank %d] the ranks' last barrier failed (a peer ended first?): %s\n", rank(), e.what());
    }
  }

  std::unique_ptr<PendingBarrier> start_barrier() override { return std::make_unique<ThreadBarrier>(*this); }

  void all_reduce(std::span<double> values, Fold fold) override { fold_values(values, fold); }
  void all_reduce(std::span<std::int64_t> values, Fold fold) override { fold_values(values, fold); }

  std::pair<double, int> max_location(double value) override {
    const std::vector<std::string> all = all_gather(std::string(reinterpret_cast<const char*>(&value), sizeof value));
    std::pair<double, int> best{0, -1};
    for (int r = 0; r < size(); ++r) {
      double v = 0;
      std::memcpy(&v, all[static_cast<std::size_t>(r)].data(), sizeof v);
      if (best.second < 0 || v > best.first) best = {v, r};  // ties: the lowest rank, as MPI_MAXLOC
    }
    return best;
  }

  std::string broadcast(const std::string& bytes, int root) override {
    std::uint64_t length = rank() == root ? bytes.size() : 0;
    broadcast_raw(&length, sizeof length, root);
    std::string out = rank() == root ? bytes : std::string(length, '\0');
    if (length > 0) broadcast_raw(out.data(), length, root);
    return out;
  }

  std::vector<std::string> all_gather(const std::string& bytes) override {
    std::vector<std::uint64_t> lengths(static_cast<std::size_t>(size()));
    std::uint64_t mine = bytes.size();
    all_gather_raw(&mine, sizeof mine, lengths.data(), std::vector<std::size_t>(lengths.size(), sizeof mine));
    std::vector<std::size_t> counts(lengths.begin(), lengths.end());
    std::size_t total = 0;
    for (const std::size_t c : counts) total += c;
    std::string joined(total, '\0');
    if (total > 0) all_gather_raw(bytes.data(), bytes.size(), joined.data(), counts);
    std::vector<std::string> out;
    std::size_t at = 0;
    for (const std::size_t c : counts) {
      out.push_back(joined.substr(at, c));
      at += c;
    }
    return out;
  }

  // Control traffic is small: every rank gathers, the others drop it.
  std::vector<std::string> gather(const std::string& bytes, int root) override {
    std::vector<std::string> all = all_gather(bytes);
    if (rank() != root) all.clear();
    return all;
  }

  std::string exchange(int peer, const std::string& bytes) override {
    if (peer == rank()) return bytes;  // Gloo has no pair to itself
    std::uint64_t theirs = 0, mine = bytes.size();
    pair_swap(peer, &mine, &theirs, sizeof mine);
    std::string out(theirs, '\0');
    pair_swap(peer, const_cast<char*>(bytes.data()), out.data(), bytes.size(), theirs);
    return out;
  }

  std::unique_ptr<ControlPlane> split(int color, int key) override {
    const int pair[2] = {color, key};
    const std::vector<std::string> all = all_gather(std::string(reinterpret_cast<const char*>(pair), sizeof pair));
    const int serial = splits_++;  // the same on every rank: split is collective
    if (color < 0) return nullptr;
    std::vector<std::pair<int, int>> members;  // (key, rank) of this color
    for (int r = 0; r < size(); ++r) {
      int theirs[2];
      std::memcpy(theirs, all[static_cast<std::size_t>(r)].data(), sizeof theirs);
      if (theirs[0] == color) members.emplace_back(theirs[1], r);
    }
    std::sort(members.begin(), members.end());
    const int new_rank =
        static_cast<int>(std::find(members.begin(), members.end(), std::pair{key, rank()}) - members.begin());
    return std::make_unique<GlooPlane>(world_, fmt::format("{}/{}.{}", name_, serial, color), new_rank,
                                       static_cast<int>(members.size()), rendezvous_timeout_);
  }

  std::unique_ptr<ControlPlane> split_by_node() override {
    const std::vector<std::string> hosts = all_gather(node_name());
    const int color = static_cast<int>(std::find(hosts.begin(), hosts.end(), node_name()) - hosts.begin());
    return split(color, rank());
  }

  std::string node_name() const override { return local_host_name(); }

  // No Gloo call ends the peers: the launcher does when this rank exits non-zero (torchrun stops
  // the whole group; srun with --kill-on-bad-exit).
  [[noreturn]] void abort(int code) override {
    std::fflush(nullptr);
    std::_Exit(code);
  }

 private:
  // A barrier on a thread of its own; the plane takes no other call until it is complete.
  class ThreadBarrier final : public PendingBarrier {
   public:
    explicit ThreadBarrier(GlooPlane& plane)
        : thread_([this, &plane] {
            plane.barrier();
            done_ = true;
          }) {}
    ~ThreadBarrier() override { thread_.join(); }
    bool complete() override { return done_; }

   private:
    std::atomic<bool> done_{false};
    std::thread thread_;
  };

  template <class Call>
  void guarded(const char* what, Call call) {
    try {
      call();
    } catch (const std::exception& e) {
      throw Error(fmt::format("Gloo {} over {} rank(s) of {}: {}", what, size(), name_, e.what()));
    }
  }

  template <class T>
  void fold_values(std::span<T> values, Fold fold) {
    if (values.empty()) return;
    gloo::AllreduceOptions options(context_);
    options.setOutput(values.data(), values.size());
    using Reduce = void (*)(void*, const void*, const void*, std::size_t);
    options.setReduceFunction(fold == Fold::kSum   ? static_cast<Reduce>(&gloo::sum<T>)
                              : fold == Fold::kMax ? static_cast<Reduce>(&gloo::max<T>)
                                                   : static_cast<Reduce>(&gloo::min<T>));
    guarded("allreduce", [&] { gloo::allreduce(options); });
  }

  void broadcast_raw(void* data, std::size_t bytes, int root) {
    gloo::BroadcastOptions options(context_);
    options.setOutput(static_cast<char*>(data), bytes);
    options.setRoot(root);
    guarded("broadcast", [&] { gloo::broadcast(options); });
  }

  void all_gather_raw(const void* mine, std::size_t bytes, void* all, std::vector<std::size_t> counts) {
    gloo::AllgathervOptions options(context_);
    options.setInput(const_cast<char*>(static_cast<const char*>(mine)), bytes);
    options.setOutput(static_cast<char*>(all), std::move(counts));
    guarded("allgatherv", [&] { gloo::allgatherv(options); });
  }

  // Sends `send_bytes` to `peer` while receiving `receive_bytes` from it.
  void pair_swap(int peer, void* send, void* receive, std::size_t send_bytes,
                 std::optional<std::size_t> receive_bytes = std::nullopt) {
    const std::size_t incoming = receive_bytes.value_or(send_bytes);
    guarded("send/recv", [&] {
      auto out = context_->createUnboundBuffer(send, send_bytes);
      auto in = context_->createUnboundBuffer(receive, incoming);
      if (send_bytes > 0) out->send(peer, kExchangeSlot);
      if (incoming > 0) in->recv(peer, kExchangeSlot);
      if (incoming > 0) in->waitRecv(kNoGlooTimeout);
      if (send_bytes > 0) out->waitSend(kNoGlooTimeout);
    });
  }

  std::shared_ptr<GlooWorld> world_;
  std::string name_;  // its prefix in the store
  std::chrono::milliseconds rendezvous_timeout_;
  std::shared_ptr<gloo::Context> context_;
  int splits_ = 0;
};

}  // namespace

std::unique_ptr<ControlPlane> make_gloo_world(const LaunchEnvironment& launch) {
  auto world = std::make_shared<GlooWorld>();
  world->launcher = launch.launcher;
  const auto timeout = std::chrono::milliseconds(static_cast<std::int64_t>(launch.rendezvous_seconds * 1000));
  // A peer that ends mid-write resets its connections: the next write must fail with an error
  // naming it, not kill this rank with SIGPIPE (which torchrun would report as the first failure).
  std::signal(SIGPIPE, SIG_IGN);
  if (launch.rank == 0) world->server = std::make_unique<StoreServer>(launch.store_port);
  const std::string master = reachable_master(launch.master_address, local_host_name());
  world->store = std::make_unique<TcpStoreClient>(master, launch.store_port, timeout);
  gloo::transport::tcp::attr attr;
  if (const char* interface = std::getenv("GLOO_SOCKET_IFNAME"); interface && *interface) {
    attr.iface = interface;  // PyTorch's variable: the interface its Gloo uses, ours too
  } else {
    try {
      attr.hostname = local_address_towards(master, launch.store_port);
    } catch (const Error& e) {
      throw Error(fmt::format("MASTER_ADDR: {}", e.what()));
    }
    // Debian's /etc/hosts maps the host name to 127.0.1.1: rank 0 would offer the other nodes a
    // loopback address.
    if (launch.local_size > 0 && launch.local_size < launch.size && on_loopback_interface(attr.hostname))
      throw UsageError(
          fmt::format("MASTER_ADDR {} leads to this node's loopback ({}), which the other nodes cannot "
                      "reach: give MASTER_ADDR as an address of rank 0's node (not a name /etc/hosts "
                      "maps to 127.0.1.1), or set GLOO_SOCKET_IFNAME",
                      launch.master_address, attr.hostname));
  }
  world->address = attr.hostname;
  world->device = gloo::transport::tcp::CreateDevice(attr);
  return std::make_unique<GlooPlane>(world, "world", launch.rank, launch.size, timeout);
}

}  // namespace fabricbench
