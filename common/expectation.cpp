// SPDX-License-Identifier: Apache-2.0
#include "common/expectation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>

#include "common/sizes.hpp"

namespace fabricbench {

std::optional<Plateau> plateau_of(std::vector<std::pair<std::uint64_t, double>> curve) {
  std::sort(curve.begin(), curve.end());
  double peak = 0;
  for (const auto& [size, figure] : curve) peak = std::max(peak, figure);
  if (peak <= 0) return std::nullopt;
  Plateau p;
  double sum = 0;
  for (const auto& [size, figure] : curve) {
    if (p.sizes == 0 && figure < 0.9 * peak) continue;
    if (p.sizes == 0) p.from_size = size;
    sum += figure;
    ++p.sizes;
  }
  p.value = sum / static_cast<double>(p.sizes);
  return p;
}

namespace {

std::string where(const Plateau& p) {
  return p.sizes == 1 ? fmt::format("at {}", format_bytes(p.from_size))
                      : fmt::format("over {} sizes from {}", p.sizes, format_bytes(p.from_size));
}

}  // namespace

RunVerdict judge_expected_busbw(const std::vector<ResultRow>& rows, double expected_bytes_per_s) {
  RunVerdict v{"expected busbw", "PASS", {}};
  // A link matrix's cells share pair numbers across rounds: its hosts name a curve.
  std::map<std::string, std::vector<std::pair<std::uint64_t, double>>> curves;
  for (const ResultRow& r : rows) {
    const std::string name =
        r.host.empty() ? series_of(r) : fmt::format("{} - {} {}", r.host, r.peer_host, r.placement);
    curves[name].emplace_back(r.size_bytes, r.busbw_mean_bytes_per_s);
  }
  const double expected_gb = expected_bytes_per_s / 1e9;
  if (curves.empty()) return {"expected busbw", "FAIL", {"no row was measured: nothing to judge"}};
  std::size_t below = 0;
  std::optional<double> lowest;
  for (const auto& [name, curve] : curves) {
    const std::optional<Plateau> p = plateau_of(curve);
    if (!p) {
      v.lines.push_back(fmt::format("{}: no positive busbw, below {:g} GB/s", name, expected_gb));
      ++below;
      continue;
    }
    lowest = lowest ? std::min(*lowest, p->value) : p->value;
    if (p->value >= expected_bytes_per_s) continue;
    ++below;
    v.lines.push_back(
        fmt::format("{}: {:.3g} GB/s {}, below the expected {:g} GB/s", name, p->value / 1e9, where(*p), expected_gb));
  }
  if (below > 0) {
    v.word = "FAIL";
    v.lines.insert(v.lines.begin(), fmt::format("{} of {} curve(s) below {:g} GB/s on their plateau", below,
                                                curves.size(), expected_gb));
  } else {
    v.lines.push_back(fmt::format("{} curve(s), every plateau at least {:g} GB/s (lowest {:.3g} GB/s)", curves.size(),
                                  expected_gb, *lowest / 1e9));
  }
  return v;
}

RunVerdict judge_expected_gbps(const std::vector<ResultRow>& pair_rows, double expected_gbps) {
  std::map<std::uint64_t, double> worst;  // size -> slowest pair's Gb/s
  for (const ResultRow& r : pair_rows) {
    const double gbps = r.busbw_mean_bytes_per_s * 8 / 1e9;
    auto [it, fresh] = worst.emplace(r.size_bytes, gbps);
    if (!fresh) it->second = std::min(it->second, gbps);
  }
  const std::optional<Plateau> p = plateau_of({worst.begin(), worst.end()});
  if (!p) return {"expected Gb/s", "FAIL", {"no pair produced a measurement: nothing to judge"}};
  const std::string figure = fmt::format("slowest pair {:.2f} Gb/s {}", p->value, where(*p));
  if (p->value < expected_gbps)
    return {"expected Gb/s", "FAIL", {fmt::format("{}, below the expected {:g} Gb/s", figure, expected_gbps)}};
  return {"expected Gb/s", "PASS", {fmt::format("{}, at least the expected {:g} Gb/s", figure, expected_gbps)}};
}

}  // namespace fabricbench
