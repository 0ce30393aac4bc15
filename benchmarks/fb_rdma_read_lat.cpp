// SPDX-License-Identifier: Apache-2.0
// fb_rdma_read_lat: RDMA read latency between pairs of ranks (rank i with i + n/2), data verified.
//   mpirun -np 2 --host node01,node02 fb_rdma_read_lat -d mlx5_0 -x 3 -a --csv read_lat.csv
#include "verbs/verbs_main.hpp"

int main(int argc, char** argv) {
  using namespace fabricbench::verbs;
  return verbs_main(Operation::kRead, Metric::kLatency, argc, argv);
}
