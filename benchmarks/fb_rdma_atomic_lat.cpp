// SPDX-License-Identifier: Apache-2.0
// fb_rdma_atomic_lat: RDMA atomic latency (round trip) between pairs of ranks, 8 B fetch-and-add or
// compare-and-swap (-A, as perftest's ib_atomic_lat), the target's counter checked at the end.
//   mpirun -np 2 --host node01,node02 fb_rdma_atomic_lat -d mlx5_0 -A CMP_AND_SWAP
#include "verbs/verbs_main.hpp"

int main(int argc, char** argv) {
  using namespace fabricbench::verbs;
  return verbs_main(Operation::kAtomic, Metric::kLatency, argc, argv);
}
