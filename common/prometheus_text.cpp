// SPDX-License-Identifier: Apache-2.0
#include "common/prometheus_text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

#include "common/output_file.hpp"
#include "common/row.hpp"

namespace fabricbench::prom {

std::string escape_label_value(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (const char c : value) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

std::string sanitize_name(std::string_view text) {
  std::string out;
  for (const char c : text) out += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out.front()))) out.insert(out.begin(), '_');
  return out;
}

std::string format_value(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", value);
}

void Exposition::gauge(const std::string& name, const std::string& help, const Labels& labels, double value) {
  auto family = std::find_if(families_.begin(), families_.end(), [&](const Family& f) { return f.name == name; });
  if (family == families_.end()) family = families_.insert(families_.end(), Family{name, help, {}, {}});
  std::string series = name;
  if (!labels.empty()) {
    series += '{';
    for (std::size_t i = 0; i < labels.size(); ++i)
      series += fmt::format("{}{}=\"{}\"", i ? "," : "", sanitize_name(labels[i].first),
                            escape_label_value(labels[i].second));
    series += '}';
  }
  if (!family->seen.insert(series).second) return;
  family->samples.push_back(series + ' ' + format_value(value));
}

std::string Exposition::text() const {
  std::string out;
  for (const Family& family : families_) {
    // HELP text escapes backslash and newline (not quotes).
    std::string help;
    for (const char c : family.help) help += c == '\\' ? "\\\\" : c == '\n' ? "\\n" : std::string(1, c);
    out += fmt::format("# HELP {} {}\n# TYPE {} gauge\n", family.name, help, family.name);
    for (const std::string& sample : family.samples) out += sample + '\n';
  }
  return out;
}

Labels labels_of(const ResultRow& row, std::span<const LibraryColumn> library) {
  Labels labels = {{"benchmark", row.benchmark},
                   {"backend", row.backend},
                   {"collective", row.collective},
                   {"memory", row.memory},
                   {"dtype", row.dtype},
                   {"op", row.op},
                   {"placement", row.placement},
                   {"coll_msg_size_bytes", std::to_string(row.size_bytes)},
                   {"n_ranks", std::to_string(row.ranks)},
                   {"nnodes", std::to_string(row.hosts)}};
  if (row.root >= 0) labels.emplace_back("root", std::to_string(row.root));
  if (row.pair >= 0) labels.emplace_back("pair", std::to_string(row.pair));
  if (row.round >= 0) labels.emplace_back("round", std::to_string(row.round));
  if (row.rail >= 0) labels.emplace_back("rail", std::to_string(row.rail));
  if (!row.host.empty()) labels.emplace_back("hostname", row.host);
  if (!row.peer_host.empty()) labels.emplace_back("peer_hostname", row.peer_host);
  for (const LibraryColumn& column : library) {
    if (column.prometheus_label.empty()) continue;
    const std::string value = std::visit(
        [](const auto& v) {
          if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::string>)
            return v;
          else
            return fmt::format("{}", v);
        },
        value_of(row.library, column));
    if (!value.empty() && value_of(row.library, column) != column.empty)
      labels.emplace_back(column.prometheus_label, value);
  }
  if (!row.settings.empty()) labels.emplace_back("settings", row.settings.text());
  if (!row.tags.empty()) labels.emplace_back("tags", row.tags.text());
  return labels;
}

Labels with(Labels labels, std::string name, std::string value) {
  labels.emplace_back(std::move(name), std::move(value));
  return labels;
}

void write_exposition_file(const std::string& path, const std::string& text) {
  OutputFile file(path, Unfinished::kRemove);
  file.append(text);
  file.commit();
}

}  // namespace fabricbench::prom
