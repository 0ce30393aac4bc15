// SPDX-License-Identifier: Apache-2.0
#include "verbs/operation.hpp"

#include <vector>

#include "verbs/pair_benchmark.hpp"

namespace fabricbench::verbs {

namespace detail {
std::unique_ptr<OperationStrategy> make_write(Metric metric, const MessageMemory& memory);
std::unique_ptr<OperationStrategy> make_read();
std::unique_ptr<OperationStrategy> make_send();
std::unique_ptr<OperationStrategy> make_atomic(AtomicKind kind);
std::uint64_t atomic_half_bytes(int qps);
}  // namespace detail

std::size_t PairSide::exposed_offset() const { return config().half_bytes; }

void OperationStrategy::await_message(PairSide& side, std::uint64_t bytes) {
  side.await_receive("the peer's message");
  side.memory().stage_in(side.exposed_offset(), bytes);
  side.post_receive(0);
}

std::unique_ptr<OperationStrategy> make_operation(Operation operation, AtomicKind atomic, Metric metric,
                                                  const MessageMemory& memory) {
  switch (operation) {
    case Operation::kWrite: return detail::make_write(metric, memory);
    case Operation::kRead: return detail::make_read();
    case Operation::kSend: return detail::make_send();
    case Operation::kAtomic: return detail::make_atomic(atomic);
  }
  return nullptr;
}

std::uint64_t half_bytes_for(Operation operation, std::uint64_t max_message_bytes, int qps) {
  return operation == Operation::kAtomic ? detail::atomic_half_bytes(qps) : max_message_bytes;
}

std::string_view operation_family(Operation operation) {
  switch (operation) {
    case Operation::kWrite: return "write";
    case Operation::kRead: return "read";
    case Operation::kSend: return "send";
    case Operation::kAtomic: return "atomic";
  }
  return "?";
}

std::uint64_t count_pattern_mismatches(const MessageMemory& memory, std::size_t offset, int sender, std::uint64_t bytes,
                                       std::uint64_t checked) {
  std::vector<std::uint8_t> received(bytes);
  memory.load(offset, received.data(), bytes);
  std::uint64_t wrong = 0;
  for (std::uint64_t i = 0; i < checked; ++i) wrong += received[i] != pattern_byte(sender, bytes, i);
  return wrong;
}

void store_pattern(MessageMemory& memory, std::size_t offset, int role, std::uint64_t bytes) {
  std::vector<std::uint8_t> pattern(bytes);
  for (std::uint64_t i = 0; i < bytes; ++i) pattern[i] = pattern_byte(role, bytes, i);
  memory.store(offset, pattern.data(), bytes);
}

}  // namespace fabricbench::verbs
