// SPDX-License-Identifier: Apache-2.0
// One release sharded over MPI ranks (dpselect::mpi): every rank holds a slice of the utilities
// and every rank gets the same index, the one a single process would pick over the whole array.
// Run with: mpiexec -n 2 ./example_distributed_select
// [doc:distributed]
#include <dpselect/mpi.hpp>
// [/doc:distributed]

#include <cmath>
#include <iostream>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int status = 0;
  {
    int rank = 0;
    int ranks = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    // Candidates 0..999 with utility -|i - 700|, cut into one slice per rank.
    const std::uint64_t n = 1000;
    const std::uint64_t first = n * rank / ranks;
    std::vector<float> my_utilities(n * (rank + 1) / ranks - first);
    for (std::uint64_t i = 0; i < my_utilities.size(); ++i) {
      my_utilities[i] = -std::abs(static_cast<float>(first + i) - 700.0f);
    }
    dpselect::SelectionParams params;
    params.epsilon = 1.0;
    params.sensitivity = 1.0;
    // [doc:distributed]
    dpselect::mpi::DistributedContext context(MPI_COMM_WORLD);  // collective: rank 0's OS key, broadcast
    // Each rank passes its slice and the global index of its first element; collective.
    dpselect::Selection pick =
        dpselect::mpi::select(context, std::span<const float>(my_utilities), first, params);
    // Every rank holds the same pick.index; publish it from one rank.
    // [/doc:distributed]
    if (rank == 0) std::cout << "index " << pick.index << " of " << pick.report.candidates << " candidates\n";
    status = pick.index < n && pick.report.candidates == n ? 0 : 1;
  }  // the context frees its communicator here, before MPI_Finalize
  MPI_Finalize();
  return status;
}
