// SPDX-License-Identifier: Apache-2.0
#include "verbs/operation.hpp"

#include <vector>

#include "verbs/pair_benchmark.hpp"

namespace fabricbench::verbs {

std::size_t PairSide::exposed_offset() const { return config().half_bytes; }

void OperationStrategy::await_message(PairSide& side, std::uint64_t bytes) {
  side.await_receive("the peer's message");
  side.memory().stage_in(side.exposed_offset(), bytes);
  side.post_receive(0);
}

std::uint64_t half_bytes_for(const VerbsOperation& operation, std::uint64_t max_message_bytes, int qps) {
  return operation.half_bytes ? operation.half_bytes(qps) : max_message_bytes;
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
