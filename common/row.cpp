// SPDX-License-Identifier: Apache-2.0
#include "common/row.hpp"

namespace fabricbench {

std::vector<std::pair<std::string, FieldValue>> fields_of(const ResultRow& r) {
  using I = std::int64_t;
  using U = std::uint64_t;
  return {
      {"schema_version", I{kSchemaVersion}},
      {"benchmark", r.benchmark},
      {"backend", r.backend},
      {"collective", r.collective},
      {"dtype", r.dtype},
      {"op", r.op},
      {"root", I{r.root}},
      {"placement", r.placement},
      {"pair", I{r.pair}},
      {"size_bytes", U{r.size_bytes}},
      {"count", U{r.count}},
      {"ranks", I{r.ranks}},
      {"hosts", I{r.hosts}},
      {"rank_reduction", r.rank_reduction},
      {"samples", U{r.samples}},
      {"batch", U{r.batch}},
      {"stop_reason", r.stop_reason},
      {"time_mean_s", r.time_s.mean},
      {"time_median_s", r.time_s.median},
      {"time_min_s", r.time_s.min},
      {"time_p99_s", r.time_s.p99},
      {"time_p999_s", r.time_s.p999},
      {"time_max_s", r.time_s.max},
      {"time_stdev_s", r.time_s.stdev},
      {"slowest_rank", I{r.slowest_rank}},
      {"slowest_host", r.slowest_host},
      {"algbw_mean_bytes_per_s", r.algbw_mean_bytes_per_s},
      {"busbw_mean_bytes_per_s", r.busbw_mean_bytes_per_s},
      {"algbw_median_bytes_per_s", r.algbw_median_bytes_per_s},
      {"busbw_median_bytes_per_s", r.busbw_median_bytes_per_s},
      {"busbw_factor", r.busbw_factor},
      {"wrong", I{r.wrong}},
      {"algorithm", r.algorithm},
      {"protocol", r.protocol},
      {"channels", I{r.channels}},
      {"settings", r.settings},
      {"tags", r.tags},
  };
}

std::vector<std::string> column_names() {
  std::vector<std::string> names;
  for (auto& [name, value] : fields_of(ResultRow{})) names.push_back(name);
  return names;
}

}  // namespace fabricbench
