// SPDX-License-Identifier: Apache-2.0
// fb_reduce_scatter: reduce_scatter bandwidth and latency across MPI ranks, results checked.
//   mpirun -np 8 fb_reduce_scatter -b 8 -e 8G -f 2 --csv reduce_scatter.csv
#include "collectives/benchmark_main.hpp"

int main(int argc, char** argv) {
  return fabricbench::collectives::benchmark_main(fabricbench::collectives::kReduceScatter, argc, argv);
}
