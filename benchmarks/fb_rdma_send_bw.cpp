// SPDX-License-Identifier: Apache-2.0
// fb_rdma_send_bw: RDMA send bandwidth between pairs of ranks (rank i with i + n/2), data verified.
//   mpirun -np 2 --host node01,node02 fb_rdma_send_bw -d mlx5_0 -x 3 -a --csv send_bw.csv
#include "verbs/verbs_main.hpp"

int main(int argc, char** argv) {
  using namespace fabricbench::verbs;
  return verbs_main(Operation::kSend, Metric::kBandwidth, argc, argv);
}
