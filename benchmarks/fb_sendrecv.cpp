// SPDX-License-Identifier: Apache-2.0
// fb_sendrecv: sendrecv bandwidth and latency across MPI ranks, results checked.
//   mpirun -np 8 fb_sendrecv -b 8 -e 8G -f 2 --csv sendrecv.csv
#include "collectives/benchmark_main.hpp"

int main(int argc, char** argv) {
  return fabricbench::collectives::benchmark_main(fabricbench::collectives::kSendRecv, argc, argv);
}
