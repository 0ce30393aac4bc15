// SPDX-License-Identifier: Apache-2.0
// fb_rdma_write_lat: RDMA write latency between pairs of ranks (rank i with i + n/2), data verified.
//   mpirun -np 2 --host node01,node02 fb_rdma_write_lat -d mlx5_0 -x 3 -a --csv write_lat.csv
#include "verbs/verbs_main.hpp"

int main(int argc, char** argv) {
  using namespace fabricbench::verbs;
  return verbs_main(Operation::kWrite, Metric::kLatency, argc, argv);
}
