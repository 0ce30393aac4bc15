// SPDX-License-Identifier: Apache-2.0
// FNV-1a, 64 bits: a small stable hash of bytes, for names and keys made from content (the same
// input gives the same value on every rank and every run, unlike std::hash).
#pragma once

#include <cstdint>
#include <string_view>

namespace fabricbench {

class Fnv1a {
 public:
  Fnv1a& add(std::string_view bytes) {
    for (const char c : bytes) add_byte(static_cast<unsigned char>(c));
    return *this;
  }
  /// The value's 8 bytes, lowest first.
  Fnv1a& add(std::uint64_t value) {
    for (int byte = 0; byte < 8; ++byte) add_byte((value >> (8 * byte)) & 0xff);
    return *this;
  }
  std::uint64_t value() const { return hash_; }

 private:
  void add_byte(std::uint64_t byte) { hash_ = (hash_ ^ byte) * 1099511628211ULL; }
  std::uint64_t hash_ = 1469598103934665603ULL;
};

}  // namespace fabricbench
