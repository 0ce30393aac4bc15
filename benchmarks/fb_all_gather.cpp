// SPDX-License-Identifier: Apache-2.0
// fb_all_gather: all_gather bandwidth and latency across MPI ranks, results checked.
//   mpirun -np 8 fb_all_gather -b 8 -e 8G -f 2 --csv all_gather.csv
#include "collectives/benchmark_main.hpp"

int main(int argc, char** argv) {
  return fabricbench::collectives::benchmark_main(fabricbench::collectives::kAllGather, argc, argv);
}
