// SPDX-License-Identifier: Apache-2.0
// fb_rdma_atomic_bw: RDMA atomic bandwidth (message rate) between pairs of ranks, 8 B fetch-and-add or
// compare-and-swap (-A, as perftest's ib_atomic_bw), the target's counter checked at the end.
//   mpirun -np 2 --host node01,node02 fb_rdma_atomic_bw -d mlx5_0 -A CMP_AND_SWAP
#include "verbs/verbs_main.hpp"

int main(int argc, char** argv) {
  using namespace fabricbench::verbs;
  return verbs_main(Operation::kAtomic, Metric::kBandwidth, argc, argv);
}
