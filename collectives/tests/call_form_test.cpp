// SPDX-License-Identifier: Apache-2.0
// Which calls a plan measures (--nccl-call) and where each timed call's buffers start (--cache):
// the plan against a backend that answers like NCCL 2.27 or 2.28 would, without a GPU.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "collectives/buffer_windows.hpp"
#include "collectives/catalog.hpp"
#include "collectives/library_columns.hpp"
#include "collectives/run_plan.hpp"
#include "common/error.hpp"
#include "common/prometheus_text.hpp"

namespace fabricbench::collectives {
namespace {

/// Answers what NCCL of `version` can issue; never runs anything.
class NcclLikeBackend final : public Backend {
 public:
  NcclLikeBackend(int version, int ranks) : version_(version), ranks_(ranks) {}
  std::string_view name() const override { return "nccl"; }
  int ranks() const override { return ranks_; }
  std::string dtype_unsupported(DataType) const override { return {}; }
  std::string op_unsupported(ReduceOp) const override { return {}; }
  std::uint64_t max_count() const override { return 1ULL << 40; }
  bool has_form(const Collective& c, CallForm form) const override {
    if (form == CallForm::kPointToPoint)
      return c.name == "alltoall" || c.name == "gather" || c.name == "scatter" || c.name == "sendrecv";
    return c.name != "sendrecv" && version_ >= c.nccl_since;
  }
  std::string call_name(const Collective& c, CallForm form) const override {
    return form == CallForm::kPointToPoint ? std::string(kNcclPointToPointName) : std::string(c.nccl_name);
  }
  bool in_place_defined(const Collective& c) const override { return c.nccl_in_place_defined || ranks_ == 1; }
  CacheMode cache_mode() const override { return CacheMode::kCold; }
  void reserve(std::uint64_t, std::uint64_t) override {}
  void prepare(const CallSpec&) override {}
  double run(const CallSpec&, int) override { return 0; }
  std::uint64_t count_wrong(const CallSpec&) override { return 0; }
  bool corrupt_output(const CallSpec&) override { return false; }

 private:
  int version_, ranks_;
};

CollectiveOptions small_sweep(std::vector<CallForm> forms = {}) {
  CollectiveOptions o;
  o.sweep.min_bytes = 1024;
  o.sweep.max_bytes = 4096;
  o.nccl_calls = std::move(forms);
  return o;
}

std::string plan_error(const Collective& c, CollectiveOptions o, const Backend& backend) {
  try {
    make_run_plan(c, std::move(o), backend);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(CallForms, NcclsOwnCallWhereTheLibraryHasItGroupedSendsBefore228) {
  const NcclLikeBackend nccl228(22803, 4), nccl227(22703, 4);
  for (const Collective* c : {&kAlltoall, &kGather, &kScatter}) {
    EXPECT_EQ(make_run_plan(*c, small_sweep(), nccl228).forms, std::vector<CallForm>{CallForm::kLibrary}) << c->name;
    EXPECT_EQ(make_run_plan(*c, small_sweep(), nccl227).forms, std::vector<CallForm>{CallForm::kPointToPoint})
        << c->name;
  }
  EXPECT_EQ(make_run_plan(kAllReduce, small_sweep(), nccl227).forms, std::vector<CallForm>{CallForm::kLibrary});
  EXPECT_EQ(make_run_plan(kSendrecv, small_sweep(), nccl228).forms, std::vector<CallForm>{CallForm::kPointToPoint});
}

// The rows' call and Prometheus `coll` label come from the descriptor: NCCL's own names
// (ncclFuncToString, 2.28's AlltoAll, Gather and Scatter included), whatever the backend.
TEST(LibraryColumns, RowsNameTheCallAndNcclsFunctionFromTheDescriptor) {
  const std::map<std::string, std::string> nccl_names = {
      {"all_reduce", "AllReduce"}, {"all_gather", "AllGather"}, {"reduce_scatter", "ReduceScatter"},
      {"broadcast", "Broadcast"},  {"reduce", "Reduce"},        {"sendrecv", "SendRecv"},
      {"alltoall", "AlltoAll"},    {"gather", "Gather"},        {"scatter", "Scatter"}};
  const std::vector<LibraryColumn> columns = library_columns();
  for (const Collective* c : all_collectives()) {
    ResultRow row;
    record_call(row, *c, "MPI_Something");
    record_path(row, ObservedPath{"RING", "LL", 2, "log"});
    std::map<std::string, std::string> labels;
    for (const auto& [name, value] : prom::labels_of(row, columns)) labels[name] = value;
    EXPECT_EQ(labels["coll"], nccl_names.at(std::string(c->name))) << c->name;
    EXPECT_EQ(labels["coll_algo"], "RING");
    EXPECT_EQ(labels["coll_proto"], "LL");
    EXPECT_EQ(channels_of(row), 2);
  }
  // The files keep schema 8's columns and order; the function is a label only.
  std::vector<std::string> in_files;
  for (const LibraryColumn& column : columns)
    if (column.in_files) in_files.push_back(column.name);
  EXPECT_EQ(in_files, (std::vector<std::string>{"algorithm", "protocol", "channels", "call"}));
}

TEST(CallForms, BothFormsInOneRunMultiplyTheRows) {
  const NcclLikeBackend nccl(22803, 2);
  const RunPlan plan = make_run_plan(kAlltoall, small_sweep({CallForm::kLibrary, CallForm::kPointToPoint}), nccl);
  ASSERT_EQ(plan.forms.size(), 2u);
  EXPECT_EQ(plan.planned_rows(), plan.points.size() * 2 /* placements */ * 2 /* forms */);
}

TEST(CallForms, AFormTheBackendCannotIssueIsAUsageErrorNamingWhy) {
  const NcclLikeBackend nccl228(22803, 2), nccl227(22703, 2);
  EXPECT_NE(plan_error(kAllReduce, small_sweep({CallForm::kPointToPoint}), nccl228)
                .find("all_reduce has no "
                      "point-to-point form"),
            std::string::npos);
  EXPECT_NE(plan_error(kSendrecv, small_sweep({CallForm::kLibrary}), nccl228).find("NCCL has no call of its own"),
            std::string::npos);
  EXPECT_NE(plan_error(kGather, small_sweep({CallForm::kLibrary}), nccl227).find("has no ncclGather (NCCL 2.28"),
            std::string::npos);
}

TEST(CallForms, UndefinedInPlaceResultsAreTimedNotCheckedAndSaidSo) {
  const RunPlan several = make_run_plan(kAlltoall, small_sweep(), NcclLikeBackend(22803, 2));
  EXPECT_TRUE(several.in_place_unchecked);
  EXPECT_EQ(several.placements.size(), 2u);
  ASSERT_FALSE(several.notes.empty());
  EXPECT_NE(several.notes.back().find("not checked"), std::string::npos);
  EXPECT_FALSE(make_run_plan(kAlltoall, small_sweep(), NcclLikeBackend(22803, 1)).in_place_unchecked);
  EXPECT_FALSE(make_run_plan(kGather, small_sweep(), NcclLikeBackend(22803, 2)).in_place_unchecked);
}

TEST(BufferWindows, ColdCallsWalkTheWindowsThatFitAndWrapWarmOnesStay) {
  BufferWindows w;
  w.start(1 << 20, 4u << 20, CacheMode::kCold);  // 4 windows of 1 MiB
  EXPECT_EQ(w.windows(), 4u);
  std::vector<std::uint64_t> offsets;
  for (int i = 0; i < 6; ++i) offsets.push_back(w.next());
  EXPECT_EQ(offsets, (std::vector<std::uint64_t>{0, 1 << 20, 2 << 20, 3 << 20, 0, 1 << 20}));
  w.start(3 << 20, 4u << 20, CacheMode::kCold);  // a call that fits once
  EXPECT_EQ(w.windows(), 1u);
  EXPECT_EQ(w.next(), 0u);
  EXPECT_EQ(w.next(), 0u);
  w.start(1 << 10, 4u << 20, CacheMode::kWarm);
  EXPECT_EQ(w.windows(), 1u);
  EXPECT_EQ(w.next(), 0u);
  w.start(0, 4u << 20, CacheMode::kCold);  // a count-0 row: one byte of stride, never a division by 0
  EXPECT_EQ(w.next(), 0u);
  EXPECT_EQ(w.next(), 1u);
}

}  // namespace
}  // namespace fabricbench::collectives
