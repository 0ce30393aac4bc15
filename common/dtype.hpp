// SPDX-License-Identifier: Apache-2.0
// Element types a collective can carry, with the names nccl-tests users type.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

namespace fabricbench {

enum class DataType {
  kInt8,
  kUint8,
  kInt32,
  kUint32,
  kInt64,
  kUint64,
  kFloat16,
  kBfloat16,
  kFloat32,
  kFloat64,
  kFloat8e4m3,
  kFloat8e5m2,
};

/// Every type the suite knows, in nccl-tests' order.
std::span<const DataType> all_data_types();

/// Canonical name, as nccl-tests prints it ("float", "half", "bfloat16", "int32").
std::string_view name_of(DataType type);

/// Accepts nccl-tests' names and common aliases (int, char, float32, fp16 ...). Throws UsageError
/// naming `flag` and the valid names.
DataType parse_data_type(std::string_view text, std::string_view flag);

std::size_t size_of(DataType type);
bool is_integer(DataType type);
bool is_signed_integer(DataType type);

/// Unit roundoff (half the machine epsilon) of a floating type; 0 for integers.
double unit_roundoff(DataType type);

}  // namespace fabricbench
