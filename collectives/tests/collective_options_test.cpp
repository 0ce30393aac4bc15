// SPDX-License-Identifier: Apache-2.0
#include "collectives/collective_options.hpp"

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <vector>

#include "common/error.hpp"

namespace fabricbench::collectives {
namespace {

ParsedCommandLine parse(std::initializer_list<const char*> args) {
  std::vector<const char*> argv{"fb_test"};
  argv.insert(argv.end(), args);
  return parse_collective_options("fb_test", static_cast<int>(argv.size()), argv.data());
}

// The message of the UsageError that `args` raise, or "" when they parse.
std::string usage_error(std::initializer_list<const char*> args) {
  try {
    parse(args);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

ValidationContext mpi_like(std::string collective, bool reduces, bool has_root, int ranks) {
  ValidationContext c{std::move(collective), reduces, has_root, "mpi", ranks, {}, {}, {}};
  c.dtype_unsupported = [](DataType t) {
    return t == DataType::kBfloat16 || t == DataType::kFloat16 ? std::string("no 16-bit float") : std::string();
  };
  c.op_unsupported = [](ReduceOp op) { return op == ReduceOp::kAvg ? std::string("no avg") : std::string(); };
  return c;
}

TEST(Options, DefaultsMatchTheDocumentation) {
  const CollectiveOptions o = parse({}).options;
  EXPECT_EQ(o.sweep.min_bytes, 8u);
  EXPECT_EQ(o.sweep.max_bytes, 64ull << 20);
  EXPECT_EQ(o.iterations, 20);
  EXPECT_EQ(o.check, 1);
  EXPECT_EQ(o.rank_reduction, RankReduction::kMax);
  EXPECT_FALSE(o.max_noise_percent);
}

TEST(Options, NccltestsStyleFlagsParse) {
  const CollectiveOptions o =
      parse({"-b", "1K", "-e", "1M", "-f", "4", "-n", "7", "-w", "2", "-c", "0", "-a", "1", "--tag", "run=a"}).options;
  EXPECT_EQ(o.sweep.min_bytes, 1024u);
  EXPECT_EQ(o.sweep.max_bytes, 1048576u);
  EXPECT_DOUBLE_EQ(o.sweep.factor, 4);
  EXPECT_EQ(o.iterations, 7);
  EXPECT_EQ(o.warmup_iterations, 2);
  EXPECT_EQ(o.check, 0);
  EXPECT_EQ(o.rank_reduction, RankReduction::kAvg);
  EXPECT_EQ(o.outputs.tags.text(), "run=a");
}

TEST(Options, HelpIsNotAnError) { EXPECT_TRUE(parse({"--help"}).help_text.has_value()); }

TEST(Options, ConflictsNameTheirFlags) {
  EXPECT_NE(usage_error({"-b", "1M", "-e", "1K"}).find("-b/--minbytes"), std::string::npos);
  EXPECT_NE(usage_error({"-f", "1"}).find("-f/--stepfactor"), std::string::npos);
  EXPECT_NE(usage_error({"-f", "2", "-i", "1K"}).find("-i/--stepbytes"), std::string::npos);
  EXPECT_NE(usage_error({"-n", "0"}).find("--iters: '0' is out of range"), std::string::npos);
  EXPECT_EQ(usage_error({"-n", "1.5"}), "--iters: '1.5' is not a whole number (see --help)");
  EXPECT_NE(usage_error({"-w", "-1"}).find("-w"), std::string::npos);
  EXPECT_NE(usage_error({"-T", "-1"}).find("--timeout: '-1' is out of range"), std::string::npos);
  EXPECT_NE(usage_error({"-T", "nan"}).find("--timeout: 'nan' is not a number"), std::string::npos);
  EXPECT_NE(usage_error({"--max-noise", "inf"}).find("--max-noise: 'inf' is not finite"), std::string::npos);
  EXPECT_NE(usage_error({"--max-noise", "1", "-n", "5"}).find("--max-noise"), std::string::npos);
  EXPECT_NE(usage_error({"--min-time", "1"}).find("--max-noise"), std::string::npos);
  EXPECT_NE(usage_error({"--timer", "host", "--max-noise", "1"}).find("nccl-tests' one window"), std::string::npos);
  EXPECT_NE(usage_error({"--timer", "host", "-G", "4"}).find("plain launches"), std::string::npos);
  EXPECT_NE(usage_error({"--timer", "window"}).find("--timer: 'window' is not events or host"), std::string::npos);
  EXPECT_NE(usage_error({"--max-noise", "1", "--min-time", "3", "--max-time", "2"}).find("--min-time"),
            std::string::npos);
  EXPECT_NE(usage_error({"--tag", "novalue"}).find("--tag"), std::string::npos);
  EXPECT_NE(usage_error({"--backend", "ucx"}).find("--backend"), std::string::npos);
  EXPECT_NE(usage_error({"-a", "median"}).find("-a/--average"), std::string::npos);
  EXPECT_NE(usage_error({"--csv", "/nonexistent-folder/x.csv"}).find("--csv"), std::string::npos);
  EXPECT_NE(usage_error({"--frobnicate"}), "");
}

TEST(Resolve, ExpandsAllAndSkipsWhatTheBackendLacks) {
  CollectiveOptions o = parse({"-d", "all", "-o", "all"}).options;
  resolve(o, mpi_like("all_reduce", true, false, 2));
  EXPECT_EQ(o.dtypes.size(), all_data_types().size() - 2);
  EXPECT_EQ(o.ops.size(), 4u);
}

TEST(Resolve, SkipsPairsTheBackendLacksUnderAllButRejectsThemWhenAskedFor) {
  ValidationContext c = mpi_like("all_reduce", true, false, 1);
  c.op_unsupported = [](ReduceOp) { return std::string(); };
  c.pair_unsupported = [](DataType t, ReduceOp op) {
    return t == DataType::kInt8 && op == ReduceOp::kAvg ? std::string("no int8 avg") : std::string();
  };
  CollectiveOptions all = parse({"-d", "all", "-o", "all"}).options;
  resolve(all, c);
  EXPECT_EQ(all.combinations.size(), all.dtypes.size() * all.ops.size() - 1);
  CollectiveOptions pair = parse({"-d", "int8", "-o", "avg"}).options;
  EXPECT_THROW(resolve(pair, c), UsageError);
}

TEST(Resolve, RejectsWhatTheBackendOrCollectiveCannotDo) {
  const auto error = [](std::initializer_list<const char*> args, ValidationContext c) -> std::string {
    CollectiveOptions o = parse(args).options;
    try {
      resolve(o, c);
    } catch (const UsageError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(error({"-o", "avg"}, mpi_like("all_reduce", true, false, 2)).find("no avg"), std::string::npos);
  EXPECT_NE(error({"-d", "bfloat16"}, mpi_like("all_reduce", true, false, 2)).find("bfloat16"), std::string::npos);
  EXPECT_NE(error({"-r", "2"}, mpi_like("broadcast", false, true, 2)).find("-r/--root"), std::string::npos);
  EXPECT_NE(error({"-r", "0"}, mpi_like("all_gather", false, false, 2)).find("no root"), std::string::npos);
  EXPECT_NE(error({"-o", "max"}, mpi_like("all_gather", false, false, 2)).find("does not reduce"), std::string::npos);
  EXPECT_EQ(error({"-r", "1"}, mpi_like("reduce", true, true, 2)), "");
  // A wrong element planted where no output is checked would be planted nowhere (exit 0).
  ValidationContext reduce = mpi_like("reduce", true, true, 2);
  reduce.output_on_root_only = true;
  EXPECT_NE(error({"--inject-fault", "wrong:1"}, reduce).find("only the root (rank 0) holds reduce's result"),
            std::string::npos);
  EXPECT_EQ(error({"--inject-fault", "wrong:1", "-r", "1"}, reduce), "");
  EXPECT_EQ(error({"--inject-fault", "hang:1"}, reduce), "");
  EXPECT_EQ(error({"--inject-fault", "wrong:1"}, mpi_like("broadcast", false, true, 2)), "");
}

}  // namespace
}  // namespace fabricbench::collectives
