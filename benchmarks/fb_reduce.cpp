// SPDX-License-Identifier: Apache-2.0
// fb_reduce: reduce bandwidth and latency across MPI ranks, results checked.
//   mpirun -np 8 fb_reduce -b 8 -e 8G -f 2 --csv reduce.csv
#include "collectives/benchmark_main.hpp"

int main(int argc, char** argv) {
  return fabricbench::collectives::benchmark_main(fabricbench::collectives::kReduce, argc, argv);
}
