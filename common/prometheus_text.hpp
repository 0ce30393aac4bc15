// SPDX-License-Identifier: Apache-2.0
// Prometheus text exposition format (version 0.0.4), as node_exporter's textfile collector and
// promtool read it: per metric family one HELP and one TYPE line, then its samples, label values
// escaped. Written whole under "<path>.partial" and renamed, so the collector (which reads *.prom
// files only) never sees half a file.
#pragma once

#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/library_fields.hpp"

namespace fabricbench {
struct ResultRow;
}

namespace fabricbench::prom {

using Labels = std::vector<std::pair<std::string, std::string>>;

/// A label value as the format wants it: backslash, double quote and newline escaped.
std::string escape_label_value(std::string_view value);

/// A valid label or metric name from any text: characters outside [a-zA-Z0-9_] become '_', and a
/// leading digit gets a '_' in front.
std::string sanitize_name(std::string_view text);

/// Sample values: shortest round-trip decimal; NaN, +Inf, -Inf spelled as the format does.
std::string format_value(double value);

/// One exposition document, families in the order first used.
class Exposition {
 public:
  /// Adds one sample to gauge family `name`. A second sample with the same labels is dropped:
  /// the format allows one value per series.
  void gauge(const std::string& name, const std::string& help, const Labels& labels, double value);
  std::string text() const;
  bool empty() const { return families_.empty(); }

 private:
  struct Family {
    std::string name;
    std::string help;
    std::vector<std::string> samples;
    std::set<std::string> seen;
  };
  std::vector<Family> families_;
};

/// A row's identity as labels, and its library values under the labels `library` gives them.
/// Names follow NCCL's Inspector plugin where they mean the same (coll_msg_size_bytes, n_ranks,
/// nnodes, hostname; the collectives' library columns add coll, coll_algo, coll_proto), so
/// dashboards built on its records fit; the rest are the row's own column names.
Labels labels_of(const ResultRow& row, std::span<const LibraryColumn> library);
/// `labels` and one more.
Labels with(Labels labels, std::string name, std::string value);

/// Writes `text` to `path` through "<path>.partial" and a rename.
void write_exposition_file(const std::string& path, const std::string& text);

}  // namespace fabricbench::prom
