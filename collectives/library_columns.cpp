// SPDX-License-Identifier: Apache-2.0
#include "collectives/library_columns.hpp"

namespace fabricbench::collectives {
namespace {

constexpr const char* kAlgorithm = "algorithm";
constexpr const char* kProtocol = "protocol";
constexpr const char* kChannels = "channels";
constexpr const char* kCall = "call";
constexpr const char* kFunction = "coll";

}  // namespace

std::vector<LibraryColumn> library_columns() {
  return {{kAlgorithm, std::string(), "coll_algo"},
          {kProtocol, std::string(), "coll_proto"},
          {kChannels, std::int64_t{0}, ""},
          {kCall, std::string(), ""},
          {kFunction, std::string(), "coll", false}};
}

void record_call(ResultRow& row, const Collective& c, std::string call) {
  row.library.set(kCall, std::move(call));
  row.library.set(kFunction, std::string(c.function_name));
}

void record_path(ResultRow& row, const ObservedPath& path) {
  if (path.algorithm.empty()) return;
  row.library.set(kAlgorithm, path.algorithm);
  row.library.set(kProtocol, path.protocol);
  row.library.set(kChannels, std::int64_t{path.channels});
}

std::string algorithm_of(const ResultRow& row) { return row.library.text(kAlgorithm); }
std::string protocol_of(const ResultRow& row) { return row.library.text(kProtocol); }
int channels_of(const ResultRow& row) { return static_cast<int>(row.library.integer(kChannels)); }

}  // namespace fabricbench::collectives
