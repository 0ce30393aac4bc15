// SPDX-License-Identifier: Apache-2.0
// How a rank decides its launch, and what an environment launcher's variables must say.
#include "common/launcher.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "common/error.hpp"

namespace fabricbench {
namespace {

GetEnv from(const std::map<std::string, std::string>& variables) {
  return [variables](const char* name) -> const char* {
    const auto found = variables.find(name);
    return found == variables.end() ? nullptr : found->second.c_str();
  };
}

std::string usage_error(const std::map<std::string, std::string>& variables) {
  try {
    launch_environment(from(variables));
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

const std::map<std::string, std::string> kTorchrun = {{"RANK", "3"},
                                                      {"WORLD_SIZE", "4"},
                                                      {"LOCAL_RANK", "1"},
                                                      {"MASTER_ADDR", "node01"},
                                                      {"MASTER_PORT", "29500"},
                                                      {"TORCHELASTIC_RUN_ID", "none"}};

TEST(Launcher, ReadsTorchrunsVariablesWithTheStoreBesideItsPort) {
  const auto e = launch_environment(from(kTorchrun));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->launcher, "torchrun");
  EXPECT_EQ(e->rank, 3);
  EXPECT_EQ(e->size, 4);
  EXPECT_EQ(e->local_rank, 1);
  EXPECT_EQ(e->master_address, "node01");
  EXPECT_EQ(e->store_port, 29501);
  auto moved = kTorchrun;
  moved["FABRICBENCH_STORE_PORT"] = "40000";
  moved["FABRICBENCH_RENDEZVOUS_SECONDS"] = "5";
  EXPECT_EQ(launch_environment(from(moved))->store_port, 40000);
  EXPECT_EQ(launch_environment(from(moved))->rendezvous_seconds, 5);
  EXPECT_FALSE(launch_environment(from({})));  // no launcher of this kind
}

TEST(Launcher, NamesTheMissingOrContradictoryVariable) {
  auto without = [](const char* name) {
    auto v = kTorchrun;
    v.erase(name);
    return usage_error(v);
  };
  EXPECT_EQ(without("WORLD_SIZE").find("WORLD_SIZE is not set: an incomplete launch environment"), 0u);
  EXPECT_NE(without("RANK").find("RANK is not set"), std::string::npos);
  EXPECT_NE(without("MASTER_ADDR").find("MASTER_ADDR"), std::string::npos);
  EXPECT_NE(without("MASTER_PORT").find("MASTER_PORT is not set"), std::string::npos);
  auto with = [](const char* name, const char* value) {
    auto v = kTorchrun;
    v[name] = value;
    return usage_error(v);
  };
  EXPECT_NE(with("RANK", "4").find("RANK=4 is outside WORLD_SIZE=4"), std::string::npos);
  EXPECT_NE(with("RANK", "-1").find("RANK=-1"), std::string::npos);
  EXPECT_NE(with("WORLD_SIZE", "four").find("WORLD_SIZE=four"), std::string::npos);
  EXPECT_NE(with("MASTER_PORT", "70000").find("MASTER_PORT=70000"), std::string::npos);
  EXPECT_NE(with("LOCAL_RANK", "9").find("LOCAL_RANK=9"), std::string::npos);
  EXPECT_NE(with("LOCAL_WORLD_SIZE", "5").find("LOCAL_WORLD_SIZE=5"), std::string::npos);
  EXPECT_NE(with("MASTER_ADDR", "").find("MASTER_ADDR"), std::string::npos);
}

TEST(Launcher, AutoTakesTorchrunsWorkersThenMpiThenRankVariablesThenASlurmStep) {
  using enum LauncherChoice;
  const auto signs = [](bool mpi, bool rank, bool torchrun, bool slurm) {
    return LaunchSigns{mpi, rank, torchrun, slurm};
  };
  EXPECT_EQ(decide_launch(kAuto, signs(true, false, false, false)), Launch::kMpi);     // mpirun
  EXPECT_EQ(decide_launch(kAuto, signs(true, true, true, true)), Launch::kEnv);        // srun --mpi=pmix torchrun
  EXPECT_EQ(decide_launch(kAuto, signs(true, true, false, false)), Launch::kMpi);      // a stray RANK under mpirun
  EXPECT_EQ(decide_launch(kAuto, signs(false, true, true, true)), Launch::kEnv);       // torchrun in a Slurm step
  EXPECT_EQ(decide_launch(kAuto, signs(false, true, false, false)), Launch::kEnv);     // a launcher of its kind
  EXPECT_EQ(decide_launch(kAuto, signs(false, false, false, true)), Launch::kEnv);     // srun --mpi=none
  EXPECT_EQ(decide_launch(kAuto, signs(false, false, false, false)), Launch::kAlone);  // started by hand
  EXPECT_EQ(decide_launch(kMpi, signs(false, true, true, false)), Launch::kMpi);
  EXPECT_EQ(decide_launch(kEnv, signs(true, true, false, false)), Launch::kEnv);
  EXPECT_THROW(decide_launch(kEnv, signs(true, false, false, false)), UsageError);
  EXPECT_EQ(decide_launch(kEnv, signs(false, false, false, true)), Launch::kEnv);
  EXPECT_EQ(decide_launch(LauncherChoice::kNone, signs(true, true, true, true)), Launch::kAlone);
}

TEST(Launcher, ReadsASlurmStepWithoutMpiRankZeroOnItsFirstNode) {
  const std::map<std::string, std::string> step = {{"SLURM_PROCID", "4"},
                                                   {"SLURM_NTASKS", "6"},
                                                   {"SLURM_STEP_NUM_TASKS", "6"},
                                                   {"SLURM_LOCALID", "0"},
                                                   {"SLURM_STEP_TASKS_PER_NODE", "2(x3)"},
                                                   {"SLURM_STEP_NODELIST", "gpu[07-09]"},
                                                   {"SLURM_JOB_ID", "1234"},
                                                   {"SLURM_STEP_ID", "2"}};
  const auto e = launch_environment(from(step));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->launcher, "srun");
  EXPECT_EQ(e->rank, 4);
  EXPECT_EQ(e->size, 6);
  EXPECT_EQ(e->local_size, 2);
  EXPECT_EQ(e->master_address, "gpu07");
  EXPECT_EQ(e->store_port, 10000 + (1234 * 64 + 2) % 20000);
  auto given = step;
  given["MASTER_ADDR"] = "login1";
  given["MASTER_PORT"] = "29500";
  EXPECT_EQ(launch_environment(from(given))->master_address, "login1");
  EXPECT_EQ(launch_environment(from(given))->store_port, 29501);
  auto outside = step;
  outside["SLURM_PROCID"] = "6";
  EXPECT_THROW(launch_environment(from(outside)), UsageError);
  auto no_nodes = step;
  no_nodes.erase("SLURM_STEP_NODELIST");
  EXPECT_THROW(launch_environment(from(no_nodes)), UsageError);
}

TEST(Launcher, FirstHostOfASlurmHostList) {
  EXPECT_EQ(first_slurm_host("node1"), "node1");
  EXPECT_EQ(first_slurm_host("node1,node2"), "node1");
  EXPECT_EQ(first_slurm_host("gpu[007-009,012]"), "gpu007");
  EXPECT_EQ(first_slurm_host("rack[3,5]-gpu,cpu1"), "rack3-gpu");
  EXPECT_EQ(first_slurm_host("a1,b[2-3]"), "a1");
  EXPECT_THROW(first_slurm_host(""), UsageError);
  EXPECT_THROW(first_slurm_host("[1-2]"), UsageError);
  EXPECT_THROW(first_slurm_host("gpu[1-2"), UsageError);
}

TEST(Launcher, AnIndexedJobsIndexIsItsRank) {
  const std::map<std::string, std::string> pod = {{"JOB_COMPLETION_INDEX", "2"},
                                                  {"WORLD_SIZE", "4"},
                                                  {"MASTER_ADDR", "fabricbench-0.fabricbench"},
                                                  {"MASTER_PORT", "29500"}};
  const auto e = launch_environment(from(pod));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->launcher, "a Kubernetes Indexed Job");
  EXPECT_EQ(e->rank, 2);
  EXPECT_EQ(e->master_address, "fabricbench-0.fabricbench");
  auto outside = pod;
  outside["JOB_COMPLETION_INDEX"] = "4";
  EXPECT_NE(usage_error(outside).find("JOB_COMPLETION_INDEX=4 is outside WORLD_SIZE=4"), std::string::npos);
  auto no_size = pod;
  no_size.erase("WORLD_SIZE");
  EXPECT_NE(usage_error(no_size).find("WORLD_SIZE is not set"), std::string::npos);
}

TEST(Launcher, ChoiceFromTheCommandLineBeforeItsParser) {
  const char* spaced[] = {"fb_all_reduce", "-b", "8", "--launcher", "env"};
  const char* joined[] = {"fb_all_reduce", "--launcher=mpi"};
  const char* none[] = {"fb_all_reduce", "-b", "8"};
  const char* wrong[] = {"fb_all_reduce", "--launcher", "slurm"};
  const char* dangling[] = {"fb_all_reduce", "--launcher"};
  EXPECT_EQ(launcher_choice(5, spaced), LauncherChoice::kEnv);
  EXPECT_EQ(launcher_choice(2, joined), LauncherChoice::kMpi);
  EXPECT_EQ(launcher_choice(3, none), LauncherChoice::kAuto);
  EXPECT_THROW(launcher_choice(3, wrong), UsageError);
  EXPECT_THROW(launcher_choice(2, dangling), UsageError);
}

}  // namespace
}  // namespace fabricbench
