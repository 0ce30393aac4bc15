// SPDX-License-Identifier: Apache-2.0
// Importers and readers against real files (perftest output from the Soft-RoCE VM, Google
// Benchmark JSON from the H200, our own stored runs) and nccl-tests samples in its documented
// formats; bad files each give one InputError.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "results/comparison.hpp"
#include "results/importers.hpp"
#include "results/run_file.hpp"

namespace fabricbench::results {
namespace {

const std::string kData = FABRICBENCH_TEST_DATA;

ResultRow row_of_size(const StoredRun& run, std::uint64_t size, const std::string& placement = "") {
  for (const ResultRow& r : run.rows)
    if (r.size_bytes == size && (placement.empty() || r.placement == placement)) return r;
  throw std::runtime_error("no row of size " + std::to_string(size));
}

std::string error_of(std::string_view text, Format format = Format::kAuto) {
  try {
    parse_run(text, "f", format);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(Numbers, WhatTheWritersPrintReadsBack) {
  EXPECT_DOUBLE_EQ(number_field("1e-320", "time", ""), 1e-320);  // a subnormal: strtod says ERANGE
  EXPECT_DOUBLE_EQ(number_field("0", "time", ""), 0);
  EXPECT_THROW(number_field("1e400", "time", ""), InputError);  // overflow: infinite
  EXPECT_THROW(number_field("inf", "time", ""), InputError);
  EXPECT_THROW(measured_field("-1e-320", "time", ""), InputError);
}

TEST(PerftestText, BandwidthInGbitsPerSecond) {
  const StoredRun run = load_run(kData + "/perftest/ib_write_bw_gbits.txt");
  EXPECT_EQ(run.format, Format::kPerftestText);
  ASSERT_EQ(run.rows.size(), 23u);  // -a: 2 B .. 8 MiB
  const ResultRow r = row_of_size(run, 65536);
  EXPECT_EQ(r.benchmark, "ib_write_bw");
  EXPECT_EQ(r.collective, "rdma_write");
  EXPECT_DOUBLE_EQ(r.busbw_mean_bytes_per_s, 1.11e9 / 8);  // BW average 1.11 Gb/sec
  EXPECT_DOUBLE_EQ(r.time_s.min, 65536 / (1.29e9 / 8));    // from BW peak
  EXPECT_EQ(r.settings.get("device"), "rxe0");
}

TEST(PerftestText, BandwidthInMebibytesPerSecond) {
  const StoredRun run = load_run(kData + "/perftest/ib_read_bw_mbs.txt");
  ASSERT_EQ(run.rows.size(), 1u);
  EXPECT_EQ(run.rows[0].benchmark, "ib_read_bw");
  EXPECT_DOUBLE_EQ(run.rows[0].busbw_mean_bytes_per_s, 118.03 * 1048576);  // perftest's MB is 2^20 B
}

TEST(PerftestText, LatencyColumnsInMicroseconds) {
  const StoredRun run = load_run(kData + "/perftest/ib_write_lat.txt");
  const ResultRow r = row_of_size(run, 2);
  EXPECT_EQ(r.benchmark, "ib_write_lat");
  EXPECT_DOUBLE_EQ(r.time_s.min, 10.68e-6);
  EXPECT_DOUBLE_EQ(r.time_s.median, 11.10e-6);  // t_typical
  EXPECT_DOUBLE_EQ(r.time_s.mean, 12.44e-6);
  EXPECT_DOUBLE_EQ(r.time_s.stdev, 5.14e-6);
  EXPECT_DOUBLE_EQ(r.time_s.p999, 52.02e-6);
  EXPECT_EQ(r.samples, 1u);  // one figure of 200 operations: no spread of its own
  EXPECT_EQ(r.batch, 200u);
  EXPECT_EQ(r.time_s.count, 200u);
}

TEST(PerftestText, ALatencyTwiceAsLongIsSlowerNotLostInItsTail) {
  // ib_send_lat's stdev is 1.1x its mean (350 us outliers): taken as a run-to-run spread it made
  // the interval of a doubled latency -99..+4383 % (UNSURE). One figure a side: the threshold.
  const StoredRun base = load_run(kData + "/perftest/ib_send_lat.txt");
  StoredRun slow = base;
  for (ResultRow& r : slow.rows) {
    for (double* t : {&r.time_s.min, &r.time_s.max, &r.time_s.median, &r.time_s.mean, &r.time_s.stdev}) *t *= 2;
    r.algbw_mean_bytes_per_s = r.busbw_mean_bytes_per_s = static_cast<double>(r.size_bytes) / r.time_s.mean;
  }
  const Comparison c = compare_runs(base, slow, CompareOptions{});
  ASSERT_EQ(c.rows.size(), 1u);
  EXPECT_EQ(c.rows[0].verdict, Verdict::kSlower);
  EXPECT_EQ(compare_runs(base, base, CompareOptions{}).rows[0].verdict, Verdict::kSame);
}

TEST(PerftestJson, LenientReaderAndUnitFromMessageRate) {
  const StoredRun gbits = load_run(kData + "/perftest/ib_write_bw_gbits.json");
  EXPECT_EQ(gbits.format, Format::kPerftestJson);
  ASSERT_EQ(gbits.rows.size(), 1u);
  EXPECT_EQ(gbits.rows[0].size_bytes, 8388608u);
  EXPECT_DOUBLE_EQ(gbits.rows[0].busbw_mean_bytes_per_s, 1.12e9 / 8);
  const StoredRun mibs = load_run(kData + "/perftest/ib_read_bw_mbs.json");
  EXPECT_DOUBLE_EQ(mibs.rows[0].busbw_mean_bytes_per_s, 118.03 * 1048576);
  const StoredRun latency = load_run(kData + "/perftest/ib_write_lat.json");
  EXPECT_EQ(latency.rows[0].size_bytes, 8388608u);  // perftest keeps the last size only
  EXPECT_DOUBLE_EQ(latency.rows[0].time_s.median, 69461.14e-6);
}

TEST(PerftestText, MixedUnitsAreRefused) {
  std::ifstream a(kData + "/perftest/ib_write_bw_gbits.txt"), b(kData + "/perftest/ib_read_bw_mbs.txt");
  std::stringstream both;
  both << a.rdbuf() << b.rdbuf();
  EXPECT_NE(error_of(both.str()).find("mixed units"), std::string::npos) << error_of(both.str());
}

TEST(NcclTestsText, TableWithRootColumn) {
  const StoredRun run = load_run(kData + "/nccl-tests/all_reduce_perf_2ranks.txt");
  EXPECT_EQ(run.format, Format::kNcclTestsText);
  ASSERT_EQ(run.rows.size(), 20u);  // 10 sizes x out-of-place, in-place
  const ResultRow r = row_of_size(run, 1048576, "out-of-place");
  EXPECT_EQ(r.collective, "all_reduce");
  EXPECT_EQ(r.dtype, "float");
  EXPECT_EQ(r.op, "sum");
  EXPECT_EQ(r.ranks, 2);
  EXPECT_EQ(r.hosts, 2);
  EXPECT_DOUBLE_EQ(r.time_s.mean, 104.20e-6);
  EXPECT_DOUBLE_EQ(r.busbw_mean_bytes_per_s, 10.06e9);
  EXPECT_EQ(r.wrong, 0);
  EXPECT_EQ(row_of_size(run, 1048576, "in-place").wrong, -1);  // N/A
  EXPECT_EQ(run.context["rank_context"][0]["nccl_library_version"], 22807);
  EXPECT_EQ(run.context["rank_context"][0]["gpus"][0]["gpu_name"], "NVIDIA H200");
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A log as it reaches users: NCCL_DEBUG=INFO lines between the rows, an mpirun banner before
// the table, /usr/bin/time after it. The table reads the same; the rest is counted, not fatal.
TEST(NcclTestsText, InfoLinesBannersAndTimeOutputAreSkippedAndCounted) {
  const std::string clean = read_text(kData + "/nccl-tests/all_reduce_perf_2ranks.txt");
  std::string noisy =
      "--------------------------------------------------------------------------\n"
      "WARNING: There was an error initializing an OpenFabrics device.\n"
      "--------------------------------------------------------------------------\n";
  std::istringstream lines(clean);
  std::size_t inserted = 3;
  for (std::string line; std::getline(lines, line);) {
    noisy += line + "\n";
    if (line.find("float") != std::string::npos) {
      noisy += "node01:41213:41290 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB/0/GDRDMA\n";
      ++inserted;
    }
  }
  noisy += "0.52user 0.10system 0:01.23elapsed 51%CPU (0avgtext+0avgdata 181232maxresident)k\n";
  ++inserted;
  const StoredRun quiet = parse_run(clean, "clean.txt"), loud = parse_run(noisy, "noisy.txt");
  ASSERT_EQ(loud.rows.size(), quiet.rows.size());
  EXPECT_DOUBLE_EQ(row_of_size(loud, 1048576, "out-of-place").busbw_mean_bytes_per_s, 10.06e9);
  EXPECT_EQ(loud.context["skipped_lines"].get<std::size_t>(), inserted);
  EXPECT_FALSE(quiet.context.contains("skipped_lines"));
  // A torn table row is still refused: a log cut off mid-line is not a result.
  EXPECT_NE(error_of(noisy + "     2097152        524288     float     sum      -1   190.1\n").find("fields"),
            std::string::npos);
  EXPECT_NE(
      error_of("node01:1:1 [0] NCCL INFO Bootstrap : Using eth0\n", Format::kNcclTestsText).find("no result lines"),
      std::string::npos);
}

// A real capture: all_reduce_perf -b 8 -e 8G -f 2 -g 1 with NCCL_DEBUG=INFO on the H200 (2>&1),
// 94 INFO lines before, between and after the table.
TEST(NcclTestsText, TwoLogsAppendedInOneFileAreRefusedNotAveraged) {
  const std::string log = read_text(kData + "/nccl-tests/all_reduce_perf_2ranks.txt");
  EXPECT_NE(error_of(log + log).find("'Collective test starting' again: two nccl-tests logs in one file"),
            std::string::npos)
      << error_of(log + log);
}

TEST(NcclTestsText, TheCyclesOfDashNAreSamplesOfOneRow) {
  const std::string clean = read_text(kData + "/nccl-tests/all_reduce_perf_h200_info.txt");
  const std::string line =
      "     1048576        262144     float     sum      -1     6.85  152.97    0.00       0     1.08  970.72"
      "    0.00       0\n";
  ASSERT_NE(clean.find(line), std::string::npos);
  // -N 2: the table printed twice; here one more cycle of one size, 8.85 us out of place.
  std::string cycled = clean;
  std::string again = line;
  again.replace(again.find(" 6.85"), 5, " 8.85");
  cycled.insert(cycled.find("# Avg bus bandwidth"), again);
  const StoredRun one = parse_run(clean, "f"), two = parse_run(cycled, "f");
  ASSERT_EQ(two.rows.size(), one.rows.size());
  const ResultRow r = row_of_size(two, 1048576, "out-of-place");
  EXPECT_EQ(r.samples, 2u);
  EXPECT_NEAR(r.time_s.median, 7.85e-6, 1e-12);
  EXPECT_NEAR(r.time_s.min, 6.85e-6, 1e-12);
  EXPECT_NEAR(r.time_s.max, 8.85e-6, 1e-12);
  EXPECT_EQ(row_of_size(two, 1048576, "in-place").samples, 2u);
  EXPECT_EQ(row_of_size(two, 2097152, "out-of-place").samples, 1u);
}

TEST(NcclTestsJson, TheCyclesOfDashNAreSamplesOfOneRow) {
  nlohmann::json document = nlohmann::json::parse(read_text(kData + "/nccl-tests/all_reduce_perf.json"));
  const StoredRun one = parse_run(document.dump(), "f.json");
  // -N 2: every result listed again, the second cycle's times doubled.
  nlohmann::json again = document["results"];
  for (auto& result : again)
    for (const char* key : {"out_of_place", "in_place"})
      if (result.contains(key) && result[key].contains("time"))
        result[key]["time"] = result[key]["time"].get<double>() * 2;
  for (const auto& result : again) document["results"].push_back(result);
  const StoredRun two = parse_run(document.dump(), "f.json");
  ASSERT_EQ(two.rows.size(), one.rows.size());
  for (std::size_t i = 0; i < one.rows.size(); ++i) {
    EXPECT_EQ(two.rows[i].samples, 2u);
    EXPECT_NEAR(two.rows[i].time_s.min, one.rows[i].time_s.mean, 1e-12);
    EXPECT_NEAR(two.rows[i].time_s.max, 2 * one.rows[i].time_s.mean, 1e-12);
  }
}

TEST(GoogleBenchmark, ArgumentsBeyondTheSizeKeepRowsApart) {
  const std::string text = R"({"context": {"executable": "bm"}, "benchmarks": [
    {"run_name": "BM_x/4096/threads:1", "run_type": "iteration", "real_time": 10, "time_unit": "ns"},
    {"run_name": "BM_x/4096/threads:2", "run_type": "iteration", "real_time": 20, "time_unit": "ns"},
    {"run_name": "BM_x/4096/8/manual_time", "run_type": "iteration", "real_time": 30, "time_unit": "ns"}]})";
  const StoredRun run = parse_run(text, "bm.json");
  ASSERT_EQ(run.rows.size(), 3u);
  EXPECT_EQ(run.rows[0].settings.text(), "arguments=threads:1");
  EXPECT_EQ(run.rows[1].settings.text(), "arguments=threads:2");
  EXPECT_EQ(run.rows[2].settings.text(), "arguments=8");
  EXPECT_EQ(run.rows[2].size_bytes, 4096u);
}

TEST(Perftest, TwoLogsInOneFileAreRefusedNotTwoRowsOfOneSize) {
  const std::string log = read_text(kData + "/perftest/ib_write_bw_gbits.txt");
  EXPECT_NE(error_of(log + log).find("row of 2 B is there twice: two perftest-text outputs in one file?"),
            std::string::npos)
      << error_of(log + log);
}

TEST(GoogleBenchmark, AFailedBenchmarkKeepsItsRowWithNoFigure) {
  // SkipWithError: error_occurred, and no time worth reading. Left out, a comparison would call the
  // run OK with that row "only in the baseline"; kept without a figure, it fails closed there.
  const std::string text = R"({"context": {"executable": "bm"}, "benchmarks": [
    {"run_name": "BM_x/4096", "run_type": "iteration", "real_time": 10, "time_unit": "ns"},
    {"run_name": "BM_y/4096", "run_type": "iteration", "real_time": 0, "time_unit": "ns",
     "error_occurred": true, "error_message": "ibv_reg_mr failed"}]})";
  const StoredRun run = parse_run(text, "bm.json");
  ASSERT_EQ(run.rows.size(), 2u);
  EXPECT_GT(run.rows[0].time_s.mean, 0);
  EXPECT_EQ(run.rows[1].collective, "BM_y");
  EXPECT_EQ(run.rows[1].time_s.mean, 0);
  EXPECT_EQ(run.rows[1].busbw_mean_bytes_per_s, 0);
}

TEST(NcclTestsText, ALogCutShortNegativeOrHexFiguresAreNoFinishedRun) {
  const std::string clean = read_text(kData + "/nccl-tests/all_reduce_perf_h200_info.txt");
  EXPECT_TRUE(parse_run(clean, "f").complete);
  // Without nccl-tests' closing average the log was cut short (a killed job, a truncated copy).
  std::string cut = clean.substr(0, clean.find("# Avg bus bandwidth"));
  const StoredRun partial = parse_run(cut, "f");
  EXPECT_FALSE(partial.complete);
  EXPECT_EQ(unfinished_sign(partial), "no '# Avg bus bandwidth' line");
  std::string negative = clean, hex = clean;
  negative.replace(negative.find("6.85  152.97"), 4, "-6.85");
  EXPECT_NE(error_of(negative).find("time: '-6.85' is negative"), std::string::npos) << error_of(negative);
  hex.replace(hex.find("     1048576        262144"), 12, "    0x100000");
  EXPECT_NE(error_of(hex).find("size: '0x100000' is not a number"), std::string::npos) << error_of(hex);
}

TEST(NcclTestsText, AnOutOfBoundsCountNoRowHoldsIsRefusedNotJudgedOk) {
  const std::string clean = read_text(kData + "/nccl-tests/all_reduce_perf_h200_info.txt");
  std::string edited = clean;
  edited.replace(edited.find("Out of bounds values : 0 OK"), 27, "Out of bounds values : 7 FAILED");
  EXPECT_NE(error_of(edited).find("nccl-tests counted 7 values out of bounds (wrong data), but no row's #wrong"),
            std::string::npos)
      << error_of(edited);
  nlohmann::json json = nlohmann::json::parse(read_text(kData + "/nccl-tests/all_reduce_perf.json"));
  json["out_of_bounds"] = {{"count", 5}, {"okay", false}};
  EXPECT_NE(error_of(json.dump()).find("counted 5 values out of bounds"), std::string::npos) << error_of(json.dump());
  json["out_of_bounds"] = {{"count", 0}, {"okay", true}};
  EXPECT_EQ(error_of(json.dump()), "");
}

TEST(Readers, AByteOrderMarkAnEditorAddedIsSkipped) {
  const std::string text = read_text(kData + "/nccl-tests/all_reduce_perf.json");
  const StoredRun plain = parse_run(text, "f");
  const StoredRun marked = parse_run("\xEF\xBB\xBF" + text, "f");
  EXPECT_EQ(marked.format, plain.format);
  EXPECT_EQ(marked.rows.size(), plain.rows.size());
}

TEST(NcclTestsText, RealH200CaptureWithNcclInfoLines) {
  const StoredRun run = load_run(kData + "/nccl-tests/all_reduce_perf_h200_info.txt");
  ASSERT_EQ(run.rows.size(), 62u);  // 31 sizes, out-of-place and in-place
  EXPECT_EQ(run.context["skipped_lines"].get<std::size_t>(), 94u);
  const ResultRow largest = row_of_size(run, 8589934592, "out-of-place");
  EXPECT_DOUBLE_EQ(largest.time_s.mean, 4022.77e-6);
  EXPECT_DOUBLE_EQ(largest.algbw_mean_bytes_per_s, 2135.3e9);
  EXPECT_EQ(largest.wrong, 0);
}

// Real captures from the Soft-RoCE VM, as users save them (2>&1, under `time`): the shell's
// timing after the table's closing line is not part of it.
TEST(PerftestText, RealVmCapturesWithTimeOutputAfterTheTable) {
  const StoredRun bw = load_run(kData + "/perftest/ib_write_bw_rxe_vm.txt");
  ASSERT_EQ(bw.rows.size(), 23u);  // -a: 2 B .. 8 MiB
  EXPECT_DOUBLE_EQ(row_of_size(bw, 8388608).busbw_mean_bytes_per_s, 1.60e9 / 8);
  const StoredRun lat = load_run(kData + "/perftest/ib_write_lat_rxe_vm.txt");
  ASSERT_EQ(lat.rows.size(), 23u);
  EXPECT_DOUBLE_EQ(row_of_size(lat, 2).time_s.min, 7.38e-6);
  // perftest's own warning inside the table (a VM's CPU frequency) is skipped and counted.
  std::string warned = read_text(kData + "/perftest/ib_write_bw_rxe_vm.txt");
  const auto table = warned.find(" 2          500");
  warned.insert(table,
                " Conflicting CPU frequency values detected: 1200.000000 != 3400.000000. CPU Frequency is not max.\n");
  const StoredRun skipped = parse_run(warned, "warned.txt");
  EXPECT_EQ(skipped.rows.size(), 23u);
  EXPECT_EQ(skipped.context["skipped_lines"].get<std::size_t>(), 1u);
}

TEST(OurCsv, AColumnNamedTwiceIsRefused) {
  const std::string header = "schema_version,benchmark,collective,size_bytes,time_mean_s,time_mean_s\n";
  EXPECT_EQ(error_of(header + "9,fb_all_reduce,all_reduce,1024,1e-05,2e-05\n"),
            "f: the CSV header names the 'time_mean_s' column twice: which value is meant is not known");
}

// A log cut inside its table (a killed run, a truncated copy) keeps only some sizes: it reads as
// a run that did not finish, which fb_import gives no final name and fb_compare marks INCOMPLETE.
TEST(PerftestText, ALogCutInsideItsTableIsARunThatDidNotFinish) {
  const StoredRun whole = load_run(kData + "/perftest/ib_write_bw_rxe_vm.txt");
  EXPECT_TRUE(whole.complete);
  const std::string text = read_text(kData + "/perftest/ib_write_bw_rxe_vm.txt");
  const StoredRun cut = parse_run(text.substr(0, text.find(" 65536")), "cut.txt");
  EXPECT_FALSE(cut.complete);
  EXPECT_EQ(cut.rows.size(), 15u);  // 2 B .. 32 KiB
  EXPECT_EQ(unfinished_sign(cut), "its table has no closing dashed line");
}

TEST(NcclTestsText, OlderTableWithoutRootAndCollectiveFromFileName) {
  const StoredRun run = load_run(kData + "/nccl-tests/all_gather_old.txt");
  ASSERT_EQ(run.rows.size(), 6u);
  EXPECT_EQ(run.rows[0].collective, "all_gather");
  EXPECT_EQ(run.rows[0].root, -1);
  EXPECT_EQ(run.rows[0].op, "none");
  EXPECT_DOUBLE_EQ(row_of_size(run, 4194304, "in-place").busbw_mean_bytes_per_s, 39.59e9);
}

TEST(NcclTestsJson, ResultsAndDevices) {
  const StoredRun run = load_run(kData + "/nccl-tests/all_reduce_perf.json");
  EXPECT_EQ(run.format, Format::kNcclTestsJson);
  ASSERT_EQ(run.rows.size(), 6u);
  const ResultRow r = row_of_size(run, 1048576, "out-of-place");
  EXPECT_EQ(r.collective, "all_reduce");
  EXPECT_EQ(r.ranks, 2);
  EXPECT_DOUBLE_EQ(r.busbw_mean_bytes_per_s, 10.06e9);
  EXPECT_EQ(run.context["hosts"]["node02"], 1);
  EXPECT_NE(error_of(R"({"version": 7, "results": [], "config": {}})").find("version 7"), std::string::npos);
}

TEST(GoogleBenchmarkJson, RealMicroBenchmarkRun) {
  const StoredRun run = load_run(kData + "/gbench/host_memcpy_h200.json");
  EXPECT_EQ(run.format, Format::kGoogleBenchmarkJson);
  const ResultRow r = row_of_size(run, 2048);
  EXPECT_EQ(r.benchmark, "fb_micro_host_memcpy");
  EXPECT_EQ(r.collective, "host_memcpy");
  EXPECT_DOUBLE_EQ(r.time_s.mean, 0.027827887492613737e-6);
  EXPECT_DOUBLE_EQ(r.algbw_mean_bytes_per_s, 73593506422.8384);
}

TEST(GoogleBenchmarkJson, RepetitionsKeepEveryRepetitionsRateNotTheLastOnes) {
  const auto entry = [](const char* type, const char* aggregate, double ns, double rate) {
    return fmt::format(R"({{"name":"copy/2048","run_name":"copy/2048","run_type":"{}","aggregate_name":"{}",)"
                       R"("iterations":10,"real_time":{},"time_unit":"ns","bytes_per_second":{}}})",
                       type, aggregate, ns, rate);
  };
  const std::string repetitions = "{\"context\":{\"executable\":\"fb_micro_copy\"},\"benchmarks\":[" +
                                  entry("iteration", "", 10, 200e9) + "," + entry("iteration", "", 10, 200e9) + "," +
                                  entry("iteration", "", 14, 140e9) + "]}";
  const ResultRow r = parse_run(repetitions, "rep.json").rows.at(0);
  EXPECT_EQ(r.samples, 3);
  EXPECT_DOUBLE_EQ(r.busbw_mean_bytes_per_s, 180e9);  // was 140e9, the last repetition's
  const std::string with_aggregates = repetitions.substr(0, repetitions.size() - 2) + "," +
                                      entry("aggregate", "mean", 11.3, 180e9) + "," +
                                      entry("aggregate", "median", 10, 200e9) + "]}";
  const ResultRow a = parse_run(with_aggregates, "rep.json").rows.at(0);
  EXPECT_DOUBLE_EQ(a.busbw_mean_bytes_per_s, 180e9);
  EXPECT_DOUBLE_EQ(a.busbw_median_bytes_per_s, 200e9);
}

TEST(GoogleBenchmarkJson, ANegativeTimeOrRateIsRefusedNotDropped) {
  const std::string real = read_text(kData + "/gbench/host_memcpy_h200.json");
  std::string time = real, rate = real;
  time.replace(time.find("2.7827887492613737e-02"), 1, "-2");
  rate.replace(rate.find("7.3593506422838394e+10"), 1, "-7");
  EXPECT_NE(error_of(time).find("'real_time' is -0.0278"), std::string::npos) << error_of(time);
  EXPECT_NE(error_of(rate).find("'bytes_per_second' is -7359"), std::string::npos) << error_of(rate);
}

TEST(GoogleBenchmarkJson, AZeroTimeIsRefused) {
  std::string real = read_text(kData + "/gbench/host_memcpy_h200.json");
  const std::size_t at = real.find("2.7827887492613737e-02");
  ASSERT_NE(at, std::string::npos);
  real = real.substr(0, at) + "0" + real.substr(at + 22);
  EXPECT_NE(error_of(real).find("'real_time' is 0: no benchmark that ran took no time"), std::string::npos)
      << error_of(real);
}

TEST(GoogleBenchmarkJson, AStddevOfZeroAndComplexityEntriesStillRead) {
  nlohmann::json doc = nlohmann::json::parse(read_text(kData + "/gbench/host_memcpy_h200.json"));
  nlohmann::json& first = doc["benchmarks"][0];
  nlohmann::json stddev = first, big_o = first;
  stddev["run_type"] = "aggregate";
  stddev["aggregate_name"] = "stddev";
  stddev["name"] = first["run_name"].get<std::string>() + "_stddev";
  stddev["real_time"] = 0.0;  // repetitions that agreed to the clock's tick
  big_o = {{"name", "host_memcpy_BigO"}, {"run_name", "host_memcpy"}, {"run_type", "aggregate"},
           {"aggregate_name", "BigO"},   {"real_coefficient", 1.5},   {"big_o", "N"},
           {"time_unit", "ns"}};
  doc["benchmarks"].push_back(stddev);
  doc["benchmarks"].push_back(big_o);
  EXPECT_EQ(error_of(doc.dump()), "");
}

TEST(GoogleBenchmarkJson, ForcedOnAnotherJsonSaysSoWithoutTheLibrarysWords) {
  const std::string error = error_of("\"abc\"", Format::kGoogleBenchmarkJson);
  EXPECT_EQ(error.find("json.exception"), std::string::npos) << error;
  EXPECT_NE(error.find("not "), std::string::npos) << error;
}

TEST(PerftestText, AResultOfNoIterationsIsRefused) {
  std::string log = read_text(kData + "/perftest/ib_write_bw_gbits.txt");
  const std::size_t at = log.find(" 65536 ");
  ASSERT_NE(at, std::string::npos);
  const std::size_t iterations = log.find_first_not_of(' ', at + 7);
  log = log.substr(0, iterations) + "0" + log.substr(log.find(' ', iterations));
  EXPECT_NE(error_of(log).find("#iterations"), std::string::npos) << error_of(log);
}

TEST(OurFiles, AWholeNumberBelowWhatAnyRunWritesIsRefused) {
  const std::string run =
      read_text(std::string(FABRICBENCH_TEST_DATA) + "/../../results/reference/h200-1gpu-nccl/fixed.json");
  std::string ranks = run, wrong = run;
  ranks.replace(ranks.rfind("\"ranks\": 1"), 10, "\"ranks\": -2");
  EXPECT_NE(error_of(ranks).find("'ranks' is -2: below 0"), std::string::npos) << error_of(ranks);
  const std::size_t at = wrong.find("\"wrong\": ");
  ASSERT_NE(at, std::string::npos);
  wrong.replace(at, 10, "\"wrong\": -7");
  EXPECT_NE(error_of(wrong).find("'wrong' is -7"), std::string::npos) << error_of(wrong);
}

TEST(OurFiles, AWholeNumberBeyondItsFieldIsRefusedNotWrapped) {
  const std::string run =
      read_text(std::string(FABRICBENCH_TEST_DATA) + "/../../results/reference/h200-1gpu-nccl/fixed.json");
  std::string ranks = run, version = run;
  ranks.replace(ranks.rfind("\"ranks\": 1"), 10, "\"ranks\": 4294967298");  // 2 modulo 2^32
  EXPECT_NE(error_of(ranks).find("'ranks' is 4294967298, outside"), std::string::npos) << error_of(ranks);
  const std::size_t at = version.rfind("\"schema_version\": ");  // the document's, after its rows
  ASSERT_NE(at, std::string::npos);
  version.replace(at + 18, 1, "4294967297");  // 1 modulo 2^32
  EXPECT_NE(error_of(version).find("is newer than this build reads"), std::string::npos) << error_of(version);
}

TEST(OurFiles, ASpreadNoRunsCouldHaveIsRefused) {
  nlohmann::json run = nlohmann::json::parse(
      read_text(std::string(FABRICBENCH_TEST_DATA) + "/../../results/reference/vm-mpi-history/run1.json"));
  run["rows"][0]["runs"] = 3;
  run["rows"][0]["between_run_rsd"] = 1.7;  // three runs spread sqrt(3) = 1.73 at most
  EXPECT_EQ(error_of(run.dump()), "");
  run["rows"][0]["between_run_rsd"] = 50;
  EXPECT_NE(error_of(run.dump()).find("'between_run_rsd' is 50, beyond the 1.73205 that 3 run(s) can spread"),
            std::string::npos)
      << error_of(run.dump());
}

nlohmann::json history_run() {
  return nlohmann::json::parse(
      read_text(std::string(FABRICBENCH_TEST_DATA) + "/../../results/reference/vm-mpi-history/run1.json"));
}

TEST(OurFiles, AContentionBoundNoMeterWritesIsRefused) {
  nlohmann::json run = history_run();
  run["schema_version"] = kSchemaVersion;  // rows carry their contention since schema 9
  run["rows"][0]["contention_slowdown"] = 2.5;
  run["summary"]["contention"] = {{"runqueue_wait", 0.1}, {"steal", 0.0}, {"slowdown", 1.2}};
  EXPECT_EQ(error_of(run.dump()), "");
  run["rows"][0]["contention_slowdown"] = 1e308;  // every regression would read UNSURE beside it
  EXPECT_NE(error_of(run.dump()).find("'contention_slowdown' is 1e+308: a contention bound is 0 (not measured) or 1"),
            std::string::npos)
      << error_of(run.dump());
  run["rows"][0]["contention_slowdown"] = 0.5;
  EXPECT_NE(error_of(run.dump()).find("'contention_slowdown' is 0.5"), std::string::npos) << error_of(run.dump());
  run["rows"][0]["contention_slowdown"] = 2.5;
  for (const double slowdown : {-5.0, 1e308}) {
    run["summary"]["contention"]["slowdown"] = slowdown;
    EXPECT_NE(error_of(run.dump()).find("summary.contention: 'slowdown' is"), std::string::npos)
        << error_of(run.dump());
  }
  run["summary"]["contention"]["slowdown"] = 1.2;
  run["summary"]["contention"]["steal"] = 1.5;
  EXPECT_NE(error_of(run.dump()).find("'steal' is 1.5: not a fraction of time"), std::string::npos)
      << error_of(run.dump());
}

TEST(OurFiles, TotalsThatDisagreeWithTheRowsAreRefused) {
  nlohmann::json run = history_run();
  ASSERT_EQ(run["rows"].size(), 8u);
  run["totals"]["rows"] = 28;  // rows cut from the file
  EXPECT_NE(error_of(run.dump()).find("totals.rows is 28 but the file holds 8 rows"), std::string::npos)
      << error_of(run.dump());
  run["totals"]["rows"] = 1e308;
  EXPECT_NE(error_of(run.dump()).find("totals.rows is 1e+308"), std::string::npos) << error_of(run.dump());
  run["totals"]["rows"] = 8;
  run["totals"]["wrong_total"] = 5;  // the rows' wrong elements set to 0
  EXPECT_NE(error_of(run.dump()).find("totals.wrong_total is 5 but no row holds a wrong element"), std::string::npos)
      << error_of(run.dump());
  run["totals"]["wrong_total"] = std::numeric_limits<std::uint64_t>::max();  // -1 (not checked) once wrapped
  EXPECT_NE(error_of(run.dump()).find("not a count of wrong elements"), std::string::npos) << error_of(run.dump());
  // Rows that found wrong data are judged so whatever the totals say (fb_sweep's merges wrote 0).
  run["totals"]["wrong_total"] = 0;
  run["rows"][0]["wrong"] = 3;
  EXPECT_EQ(error_of(run.dump()), "");
}

TEST(OurFiles, ARateBesideNoTimeIsRefused) {
  nlohmann::json run = history_run();
  for (auto& [key, value] : run["rows"][0].items())
    if (key.starts_with("time_")) value = 0.0;
  ASSERT_GT(run["rows"][0]["busbw_mean_bytes_per_s"].get<double>(), 0);
  EXPECT_NE(error_of(run.dump()).find("and a time of 0 s: no measurement gives both"), std::string::npos)
      << error_of(run.dump());
}

TEST(OurFiles, SchemaOneReferenceRunStillReads) {
  // Stored on the H200 before the pair and p99.9 columns existed (schema 1).
  const StoredRun json =
      load_run(std::string(FABRICBENCH_TEST_DATA) + "/../../results/reference/h200-1gpu-nccl/fixed.json");
  const StoredRun csv =
      load_run(std::string(FABRICBENCH_TEST_DATA) + "/../../results/reference/h200-1gpu-nccl/fixed.csv");
  EXPECT_EQ(json.format, Format::kFabricbenchJson);
  EXPECT_EQ(csv.format, Format::kFabricbenchCsv);
  ASSERT_EQ(json.rows.size(), csv.rows.size());
  EXPECT_EQ(json.rows.back().size_bytes, csv.rows.back().size_bytes);
  EXPECT_DOUBLE_EQ(json.rows.back().time_s.mean, csv.rows.back().time_s.mean);
  EXPECT_EQ(csv.context["backend"], "nccl");  // from the JSON beside the CSV
}

// The backends' own columns (algorithm, channels, call, a new backend's) come back as library
// values, typed, in the file's order; the JSON's declaration keeps their Prometheus labels.
TEST(OurFiles, ColumnsBeyondTheTableAreLibraryValues) {
  const StoredRun csv = parse_run(
      "schema_version,benchmark,collective,size_bytes,time_mean_s,algorithm,channels,engine\n"
      "8,fb_x,all_reduce,1024,1e-06,RING,4,warp\n",
      "x.csv");
  ASSERT_EQ(csv.rows.size(), 1u);
  EXPECT_EQ(csv.rows[0].library.text("algorithm"), "RING");
  EXPECT_EQ(csv.rows[0].library.integer("channels"), 4);
  EXPECT_EQ(csv.rows[0].library.text("engine"), "warp");
  std::vector<std::string> names;
  for (const LibraryColumn& c : csv.library_columns) names.push_back(c.name);
  EXPECT_EQ(names, (std::vector<std::string>{"algorithm", "channels", "engine"}));

  const StoredRun json = parse_run(
      R"({"schema_version": 8, "context": {"library_columns": [{"name": "algorithm", "kind": "text",
          "prometheus_label": "coll_algo"}]}, "rows": [{"benchmark": "fb_x", "collective": "all_reduce",
          "size_bytes": 1024, "time_mean_s": 1e-6, "algorithm": "TREE", "odd": [1, 2]}]})",
      "x.json");
  EXPECT_EQ(json.rows[0].library.text("algorithm"), "TREE");
  EXPECT_EQ(json.rows[0].library.find("odd"), nullptr);  // a list is no value of ours
  ASSERT_EQ(json.library_columns.size(), 1u);
  EXPECT_EQ(json.library_columns[0].prometheus_label, "coll_algo");

  std::string many = R"({"schema_version": 8, "rows": [{"benchmark": "b", "collective": "c", "size_bytes": 1,
      "time_mean_s": 1)";
  for (int i = 0; i < 65; ++i) many += ", \"k" + std::to_string(i) + "\": 1";
  EXPECT_NE(error_of(many + "}]}").find("beyond fabricbench's own"), std::string::npos);
}

TEST(BadFiles, EachGetsOneClearError) {
  EXPECT_NE(error_of("").find("empty"), std::string::npos);
  EXPECT_NE(error_of("   \n").find("empty"), std::string::npos);
  EXPECT_NE(error_of("hello world\n").find("not a result"), std::string::npos);
  EXPECT_NE(error_of(R"({"schema_version": 3, "rows": [)").find("truncated"), std::string::npos);
  EXPECT_NE(error_of(R"({"schema_version": 99, "rows": []})").find("newer"), std::string::npos);
  EXPECT_NE(error_of(R"({"schema_version": 3, "rows": [1e999]})").find("damaged"), std::string::npos);  // fuzzer
  EXPECT_NE(error_of("# nThread 1\n#  Rank  0 Group  0 Pid 1 on h device 0 [0x07]\n").find("no result lines"),
            std::string::npos);  // a device line ending at its bracket (fuzzer)
  // Negative or fractional sizes: converting them to integers would be undefined (fuzzer).
  EXPECT_NE(error_of("# out-of-place\n  -24288 2 float sum -1 1 1 1 0 1 1 1 0\n").find("not a whole number"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"schema_version": 3, "rows": [{"benchmark": "b", "collective": "c", "size_bytes": -5.5,
                         "time_mean_s": 1}]})")
                .find("not a whole number"),
            std::string::npos);
  // An int column (root) holding a float beyond int's range: refused, never wrapped.
  EXPECT_NE(error_of(R"({"schema_version": 3, "rows": [{"benchmark": "b", "collective": "c", "size_bytes": 8,
                         "time_mean_s": 1, "root": 3e9}]})")
                .find("not a whole number in -2.14748e+09..2.14748e+09"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"schema_version": 3, "rows": []})").find("no result rows"), std::string::npos);
  // fabricbench's own reports name runs but hold none: said so, not read as another tool's log.
  EXPECT_NE(error_of("backend,collective,dtype,op,root,placement,size_bytes,metric,statistic,baseline,new,speedup,"
                     "low,high,standard_error,uncertainty,verdict\nmpi,all_reduce,float,sum,-1,out-of-place,8,time,"
                     "median,1e-08,1e-08,1,0.9,1.1,0.01,assumed-between-run,SAME\n")
                .find("an fb_compare report, not a run"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"baseline": "a.json", "counts": {"SAME": 1}, "geomean_speedup": 1})")
                .find("an fb_compare report, not a run"),
            std::string::npos);
  EXPECT_NE(error_of("run,start_time,tags,series,bucket,metric,value,relative_error,change\n1,t,,all_reduce float "
                     "sum out-of-place (1 ranks),< 64 KiB,time,1e-08,0.01,\n")
                .find("an fb_history report, not a run"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"first_regression_run": null, "runs": []})").find("an fb_history report, not a run"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"schema_version": 3, "rows": [{"benchmark": "x"}]})").find("lacks"), std::string::npos);
  EXPECT_NE(error_of("schema_version,benchmark,collective,size_bytes,time_mean_s\n3,fb,x,8\n").find("truncated"),
            std::string::npos);
  EXPECT_NE(error_of("schema_version,benchmark,collective,size_bytes,time_mean_s\n3,fb,x,eight,1\n").find("eight"),
            std::string::npos);
  EXPECT_NE(
      error_of("schema_version,benchmark,collective,size_bytes,time_mean_s\n3,fb,x,8,1\n2,fb,x,8,1\n").find("mixed"),
      std::string::npos);
  EXPECT_NE(
      error_of(" #bytes #iterations BW peak[Gb/sec] BW average[Gb/sec] MsgRate[Mpps]\n 65536 100 1 1\n").find("title"),
      std::string::npos);
  try {
    load_run("/nonexistent/run.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("no such file"), std::string::npos);
  }
}

}  // namespace
}  // namespace fabricbench::results
