// SPDX-License-Identifier: Apache-2.0
#include "common/dtype.hpp"

#include <fmt/format.h>

#include <array>

#include "common/error.hpp"

namespace fabricbench {
namespace {

struct TypeInfo {
  DataType type;
  std::string_view name;
  std::size_t bytes;
  double roundoff;  // 2^-(mantissa bits + 1); 0 for integers
  std::array<std::string_view, 3> aliases;
};

constexpr std::array<TypeInfo, 12> kTypes{{
    {DataType::kInt8, "int8", 1, 0, {"char", "i8", ""}},
    {DataType::kUint8, "uint8", 1, 0, {"u8", "", ""}},
    {DataType::kInt32, "int32", 4, 0, {"int", "i32", ""}},
    {DataType::kUint32, "uint32", 4, 0, {"u32", "", ""}},
    {DataType::kInt64, "int64", 8, 0, {"i64", "", ""}},
    {DataType::kUint64, "uint64", 8, 0, {"u64", "", ""}},
    {DataType::kFloat16, "half", 2, 0x1p-11, {"float16", "fp16", "f16"}},
    {DataType::kBfloat16, "bfloat16", 2, 0x1p-8, {"bf16", "", ""}},
    {DataType::kFloat32, "float", 4, 0x1p-24, {"float32", "fp32", "f32"}},
    {DataType::kFloat64, "double", 8, 0x1p-53, {"float64", "fp64", "f64"}},
    {DataType::kFloat8e4m3, "f8e4m3", 1, 0x1p-4, {"fp8e4m3", "e4m3", ""}},
    {DataType::kFloat8e5m2, "f8e5m2", 1, 0x1p-3, {"fp8e5m2", "e5m2", ""}},
}};

constexpr std::array<DataType, 12> kAllTypes = [] {
  std::array<DataType, 12> types{};
  for (std::size_t i = 0; i < kTypes.size(); ++i) types[i] = kTypes[i].type;
  return types;
}();

const TypeInfo& info(DataType type) { return kTypes[static_cast<std::size_t>(type)]; }

}  // namespace

std::span<const DataType> all_data_types() { return kAllTypes; }
std::string_view name_of(DataType type) { return info(type).name; }
std::size_t size_of(DataType type) { return info(type).bytes; }
double unit_roundoff(DataType type) { return info(type).roundoff; }

bool is_integer(DataType type) { return info(type).roundoff == 0; }

bool is_signed_integer(DataType type) {
  return type == DataType::kInt8 || type == DataType::kInt32 || type == DataType::kInt64;
}

DataType parse_data_type(std::string_view text, std::string_view flag) {
  for (const TypeInfo& t : kTypes) {
    if (text == t.name) return t.type;
    for (std::string_view alias : t.aliases)
      if (!alias.empty() && text == alias) return t.type;
  }
  std::string names;
  for (const TypeInfo& t : kTypes) names += fmt::format("{}{}", names.empty() ? "" : ", ", t.name);
  throw UsageError(fmt::format("{}: unknown datatype '{}'; valid: {}, all", flag, text, names));
}

}  // namespace fabricbench
