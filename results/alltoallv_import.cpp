// SPDX-License-Identifier: Apache-2.0
#include "results/alltoallv_import.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

#include "common/fnv1a.hpp"
#include "common/text_lines.hpp"

namespace fabricbench::results {
namespace {

// A cell's bytes as nccl-tests takes them: a finite, non-negative number, scaled, down to 16 bytes.
std::uint64_t cell_bytes(const std::string& token, double scale, const std::string& where) {
  errno = 0;
  char* end = nullptr;
  const double value = std::strtod(token.c_str(), &end);
  if (end == token.c_str() || *end != '\0' || errno == ERANGE || !std::isfinite(value))
    throw InputError(fmt::format("{}: '{}' is not a number of bytes", where, token));
  if (value < 0) throw InputError(fmt::format("{}: {} bytes: a count of bytes is not negative", where, token));
  const double scaled = std::floor(value * scale);
  if (scaled > static_cast<double>(kMaxTraceOperationBytes))
    throw InputError(fmt::format("{}: {} bytes (scaled by {:g}) is more than the {} GiB one transfer may move", where,
                                 token, scale, kMaxTraceOperationBytes >> 30));
  return static_cast<std::uint64_t>(scaled) & ~std::uint64_t{15};
}

// The communicator's name: the same for the same matrix.
std::string matrix_hash(std::string_view text) { return fmt::format("{:016x}", Fnv1a().add(text).value()); }

}  // namespace

std::vector<std::vector<std::uint64_t>> read_alltoallv_matrix(std::string_view text, const std::string& name,
                                                              const MatrixImport& how) {
  if (!std::isfinite(how.scale) || how.scale < 0)
    throw InputError(fmt::format("{}: a scale of {:g}: give a finite number of 0 or more", name, how.scale));
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);  // a UTF-8 byte-order mark an editor put there
  std::vector<std::vector<std::uint64_t>> rows;
  for_each_line(text, [&](std::string_view row_text, std::size_t line) {
    std::vector<std::uint64_t> row;
    std::size_t at = 0;
    while (true) {
      at = row_text.find_first_not_of(" \t\r", at);
      if (at == std::string_view::npos) break;
      const std::size_t stop = std::min(row_text.find_first_of(" \t\r", at), row_text.size());
      if (row.size() == static_cast<std::size_t>(kMaxMatrixRanks))
        throw InputError(fmt::format("{} line {}: more than {} columns", name, line, kMaxMatrixRanks));
      row.push_back(cell_bytes(std::string(row_text.substr(at, stop - at)), how.scale,
                               fmt::format("{} line {} column {}", name, line, row.size() + 1)));
      at = stop;
    }
    if (row.empty()) return;  // blank lines
    if (!rows.empty() && row.size() != rows.front().size())
      throw InputError(fmt::format("{} line {}: {} columns where the first row has {}", name, line, row.size(),
                                   rows.front().size()));
    if (rows.size() == static_cast<std::size_t>(kMaxMatrixRanks))
      throw InputError(fmt::format("{} line {}: more than {} rows", name, line, kMaxMatrixRanks));
    rows.push_back(std::move(row));
  });
  if (rows.empty()) throw InputError(fmt::format("{}: empty: no matrix of bytes in it", name));
  if (rows.size() != rows.front().size())
    throw InputError(
        fmt::format("{}: {} rows of {} columns: the matrix is square (cell [i][j]: the bytes rank i "
                    "sends to rank j)",
                    name, rows.size(), rows.front().size()));
  if (how.ranks < 0 || how.ranks > static_cast<int>(rows.size()))
    throw InputError(fmt::format("{}: {} ranks asked for, the matrix has {} (it may be larger, not smaller)", name,
                                 how.ranks, rows.size()));
  if (how.ranks > 0) {
    rows.resize(static_cast<std::size_t>(how.ranks));
    for (auto& row : rows) row.resize(static_cast<std::size_t>(how.ranks));
  }
  return rows;
}

std::vector<RankTrace> import_alltoallv_matrix(std::string_view text, const std::string& name,
                                               const MatrixImport& how) {
  const std::vector<std::vector<std::uint64_t>> bytes = read_alltoallv_matrix(text, name, how);
  const int n = static_cast<int>(bytes.size());
  const std::string hash = matrix_hash(text);
  std::vector<RankTrace> ranks;
  for (int i = 0; i < n; ++i) {
    RankTrace trace;
    trace.rank = i;
    trace.ranks = n;
    trace.clock = "host";
    trace.add_communicator({hash, n, i, 0});
    // As alltoallv_perf issues it: for each peer, the Send to it, then the Recv from it.
    for (int j = 0; j < n; ++j)
      for (const bool send : {true, false}) {
        const std::uint64_t count = send ? bytes[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)]
                                         : bytes[static_cast<std::size_t>(j)][static_cast<std::size_t>(i)];
        if (count == 0) continue;
        TraceOperation op;
        op.comm = hash;
        op.function = send ? "Send" : "Recv";
        op.count = count;
        op.dtype = DataType::kInt8;
        op.peer = j;
        op.group = 0;
        op.step = 0;
        trace.operations.push_back(std::move(op));
      }
    if (trace.operations.empty())
      throw InputError(
          fmt::format("{}: rank {} neither sends nor receives a byte (after the scale and the 16-byte "
                      "rounding): it would take no part; drop its row and column",
                      name, i));
    ranks.push_back(std::move(trace));
  }
  check_traces(ranks, name);
  return ranks;
}

}  // namespace fabricbench::results
